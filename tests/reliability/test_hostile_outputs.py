"""Outputs stay where the user asked (issue 23, section 5), through real `suture batch` processes.

A real Redis, real Celery workers and the simulator (a simulation) behind them: a job id planted in
Redis or in jobs.jsonl never names a file, links in --out are refused before anything starts (so
their targets are never written), --out naming a file is one line and exit 2 before a stack starts,
and a document holding U+0085 / U+2028 / U+2029 still gives one quizzes.jsonl line per quiz.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from tests.fixtures.workers import CeleryStack

LESSON = (
    "Photosynthesis turns light energy into chemical\u0085energy stored in sugar molecules. "
    "Chlorophyll in the chloroplasts absorbs\u2028mostly red and blue light and reflects green light. "
    "The light reactions split water molecules and\u2029release oxygen as a by-product of the process. "
    "The Calvin cycle fixes carbon dioxide from the air into three-carbon sugars using ATP and NADPH. "
    "Stomata on the underside of leaves open to let carbon dioxide in and water vapour out of the leaf. "
    "Plants store surplus sugar as starch in their roots, stems and seeds for later use as energy. "
)


@pytest.fixture(scope="module")
def shared_stack(
    module_celery_stack: Callable[..., CeleryStack], module_simulator: Callable[..., str]
) -> CeleryStack:
    """A Redis, one worker and the simulator (perfect profile, no latency) for every test here: each
    batch has an --out folder and jobs of its own, and the one job a test tampers with is its own."""
    stack = module_celery_stack(module_simulator("perfect", latency_scale=0.0))
    stack.start_worker(concurrency=8)
    return stack


@pytest.fixture
def cluster(shared_stack: CeleryStack, tmp_path: Path) -> CeleryStack:
    """The shared stack, and a folder with one lesson."""
    stack = shared_stack
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "lesson.txt").write_text(LESSON, encoding="utf-8")  # paragraphs kept as they are
    return stack


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_a_job_id_from_redis_or_jobs_jsonl_never_names_a_file(cluster: CeleryStack, tmp_path: Path) -> None:
    # Given a --no-wait batch whose job finished
    out = tmp_path / "out"
    done = cluster.cli("batch", str(tmp_path / "docs"), "--out", str(out), "--questions", "3", "--no-wait")
    assert done.returncode == 0, done.stderr
    job_id = json.loads((out / "jobs.jsonl").read_text().splitlines()[-1])["job_id"]
    store = redis.Redis.from_url(cluster.settings.redis_url or "")
    deadline = time.monotonic() + 60
    while store.hget(f"suture:job:{job_id}", "result") is None:
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.2)

    # ...and then someone with access to Redis rewrote its result to name a path outside --out
    result = json.loads(store.hget(f"suture:job:{job_id}", "result") or b"{}")
    store.hset(f"suture:job:{job_id}", "result", json.dumps(result | {"job_id": "../../../escaped"}))

    # When the batch is collected
    collected = cluster.cli("batch", "--out", str(out), "--collect")

    # Then nothing is written outside --out, nothing is named after the planted id, and the job's line
    # says why it was not written
    assert not (tmp_path / "escaped.json").exists() and not (out.parent / "escaped.json").exists()
    assert sorted(p.name for p in (out / "traces").iterdir()) == [f"{job_id}.json"]
    trace = json.loads((out / "traces" / f"{job_id}.json").read_text())
    assert trace["status"] == "failed" and "names another job" in trace["reason"]
    assert (out / "quizzes.jsonl").read_text() == ""
    assert "Traceback" not in collected.stderr

    # Given jobs.jsonl itself names a path as a job id
    with (out / "jobs.jsonl").open("a") as manifest:
        manifest.write(json.dumps({"type": "job", "job_id": "../../../X", "source": {}}) + "\n")

    # When it is collected, Then the collect is refused in one line, naming the line
    refused = cluster.cli("batch", "--out", str(out), "--collect")
    assert refused.returncode == 1
    assert "jobs.jsonl line 2" in one_line(refused.stderr) and "not a job id" in refused.stderr
    assert not (tmp_path / "X.json").exists()


@pytest.mark.parametrize("name", ["quizzes.jsonl", "report.html", "traces"])
def test_a_link_in_out_is_refused_before_anything_starts_and_its_target_kept(
    cluster: CeleryStack, tmp_path: Path, name: str
) -> None:
    # Given --out holding a symbolic link where suture writes, pointing at a file (or folder) outside it
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / ("victim-dir" if name == "traces" else "victim.txt")
    if name == "traces":
        target.mkdir()
    else:
        target.write_text("precious\n")
    (out / name).symlink_to(target)

    # When a batch is asked to write there
    done = cluster.cli("batch", str(tmp_path / "docs"), "--out", str(out))

    # Then it exits 2 with one line naming the link, and the target is untouched
    assert done.returncode == 2
    assert "symbolic link" in one_line(done.stderr) and name in done.stderr
    if name == "traces":
        assert list(target.iterdir()) == []
    else:
        assert target.read_text() == "precious\n"
    assert not (out / "jobs.jsonl").exists()  # nothing was enqueued


def test_out_naming_a_file_is_one_line_before_any_stack_starts(tmp_path: Path) -> None:
    # Given --out naming an existing file, and no broker configured (an embedded stack would start)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "lesson.md").write_text(LESSON, encoding="utf-8")
    (tmp_path / "results").write_text("not a folder\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "REDIS_URL"))}

    # When `suture batch` runs
    done = subprocess.run(
        [sys.executable, "-m", "suture", "batch", "docs", "--out", "results"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    # Then it exits 2 with one line, before starting anything (no "embedded local stack" line)
    assert done.returncode == 2
    assert one_line(done.stderr) == "suture: --out: refusing to write results: it exists and is not a folder"
    assert (tmp_path / "results").read_text() == "not a folder\n"


def test_line_separators_in_a_document_stay_inside_one_jsonl_line(
    cluster: CeleryStack, tmp_path: Path
) -> None:
    # Given a document whose sentences hold U+0085, U+2028 and U+2029 (the simulator quotes sentences)
    out = tmp_path / "out"

    # When it is quizzed by a batch, one question per sentence (so the quotes cannot all miss the three
    # sentences that hold a separator, whichever sentences the simulator picks)
    done = cluster.cli("batch", str(tmp_path / "docs"), "--out", str(out), "--questions", "6")
    assert done.returncode == 0, done.stderr

    # Then every reader sees one line per quiz, whichever characters it splits lines on
    raw = (out / "quizzes.jsonl").read_text(encoding="utf-8")
    assert len(raw.splitlines()) == len(raw.split("\n")) - 1 == 1
    assert not any(c in raw for c in "\u0085\u2028\u2029")
    # ...and the quiz still holds the characters, escaped, exactly as the document had them
    quiz = json.loads(raw)["quiz"]
    quotes = " ".join(q["source_quote"] for q in quiz["questions"])
    assert any(c in json.dumps(quiz, ensure_ascii=False) for c in "\u0085\u2028\u2029"), quotes
