"""`suture resume JOB --out DIR --target ...` after a default-setup batch: only the targets change.

Real processes, nothing configured: the batch runs on its own embedded stack (gone when it ends);
the resume reads the job from the output folder and regenerates the named questions on the
simulator over HTTP, through the engine's surgical steps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.workers.batch.test_ledger_reruns import _env, ledger, traces

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
DOCUMENT = ROOT / "examples" / "photosynthesis.md"


def suture(home: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suture", *map(str, args)],
        env=_env(home, "0"),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "quizzes.jsonl").read_text().splitlines()]


def test_a_targeted_regeneration_changes_only_its_targets(tmp_path: Path) -> None:
    # Given a finished batch on the default setup
    out = tmp_path / "out"
    first = suture(tmp_path, "batch", DOCUMENT, "--out", out, "--questions", "6")
    assert first.returncode == 0, first.stderr
    raw_before = (out / "quizzes.jsonl").read_text().splitlines()
    before = lines(out)
    job = before[0]["job_id"]

    # When a person asks for questions 2 and 5 of the first quiz to be regenerated
    feedback = "Questions 2 and 5 only restate the text; the other questions are fine."
    resumed = suture(
        tmp_path,
        "resume",
        job,
        "--out",
        out,
        "--target",
        "/questions/1",
        "--target",
        "/questions/4",
        "--feedback",
        feedback,
    )

    # Then only those two questions changed; every other question and every other line is byte-identical
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == job and "SIMULATOR" in resumed.stderr
    after = lines(out)
    old, new = before[0]["quiz"]["questions"], after[0]["quiz"]["questions"]
    assert len(new) == len(old) == 6
    assert new[1] != old[1] and new[4] != old[4]
    assert [json.dumps(q) for i, q in enumerate(new) if i not in (1, 4)] == [
        json.dumps(q) for i, q in enumerate(old) if i not in (1, 4)
    ]
    assert (out / "quizzes.jsonl").read_text().splitlines()[1:] == raw_before[1:]
    # under the same invariants: each regenerated question keeps its correct answer
    assert [new[i]["correct_answer_text"] for i in (1, 4)] == [old[i]["correct_answer_text"] for i in (1, 4)]
    # and the trace and the ledger say what ran and what it cost
    trace = json.loads((out / "traces" / f"{job}.json").read_text())
    last = [a for a in trace["attempts"] if a["round"] == trace["round"]]
    assert trace["round"] == 1 and {a["mode"] for a in last} == {"surgical"}
    assert sorted({s["pointer"] for a in last for s in a["slices"]}) == ["/questions/1", "/questions/4"]
    event = ledger(out)[-1]
    assert event["event"] == "regenerated" and event["cost_usd"] > 0 and event["job_id"] == job

    # And a rerun of the batch keeps the regenerated quiz, for $0
    kept_traces = traces(out)
    rerun = suture(tmp_path, "batch", DOCUMENT, "--out", out, "--questions", "6")
    assert rerun.returncode == 0 and "cost $0.0000 this run" in rerun.stdout, rerun.stdout + rerun.stderr
    assert lines(out)[0]["quiz"] == after[0]["quiz"] and traces(out) == kept_traces


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--target", "/questions/99"], "not a part of the output"),
        ([], "only a soft_delivered job can be resumed"),  # no target: today's resume, of a delivered quiz
    ],
)
def test_a_bad_targeted_resume_exits_2_with_one_line(tmp_path: Path, args: list[str], problem: str) -> None:
    out = tmp_path / "out"
    assert suture(tmp_path, "batch", DOCUMENT, "--out", out, "--questions", "6").returncode == 0
    job = lines(out)[0]["job_id"]
    resumed = suture(tmp_path, "resume", job, "--out", out, *args, "--feedback", "better")
    assert resumed.returncode == 2 and problem in resumed.stderr, resumed.stderr
    assert len(resumed.stderr.strip().splitlines()) <= 2 and "Traceback" not in resumed.stderr
