"""``suture generate``: one job from the command line, inline on the simulator, errors as one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
SECRET_KEY = "sk-test-NEVER-PRINT-THIS-42"


def generate(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "SUTURE_SIMULATOR__LATENCY_SCALE": "0",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "suture", "generate", *args],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_inline_without_a_model_uses_the_simulator_and_says_so(tmp_path: Path) -> None:
    # Given no OPENAI_API_KEY/OPENAI_BASE_URL
    out = tmp_path / "result.json"
    # When a quiz of 6 questions is generated inline
    done = generate(
        tmp_path, str(REPO / "examples/photosynthesis.md"), "--inline", "--questions", "6", "--out", str(out)
    )
    # Then stderr says the simulator is used, and the result file has the stable schema
    assert done.returncode == 0, done.stderr
    assert "SIMULATOR" in done.stderr and "not a real model" in done.stderr
    final = json.loads(out.read_text())
    assert final["status"] in ("delivered", "soft_delivered") and final["simulated"] is True
    assert len(final["output"]["questions"]) == 6
    assert {"job_id", "reason", "failures", "attempts", "usage", "cost_usd", "latency_ms"} <= set(final)


def test_a_configured_model_is_used_and_its_key_never_printed(tmp_path: Path, scripted_model: Any) -> None:
    server = scripted_model(questions=15, imbalanced=2)
    doc = tmp_path / "doc.txt"
    from tests.fixtures.scripted_model import document

    doc.write_text(document(15))
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": SECRET_KEY}
    done = generate(tmp_path, str(doc), "--inline", env=env)
    assert done.returncode == 0, done.stderr
    assert "SIMULATOR" not in done.stderr
    assert SECRET_KEY not in done.stdout + done.stderr
    final: dict[str, Any] = json.loads(done.stdout)
    assert final["status"] == "delivered" and final["simulated"] is False
    assert server.requests == {"full": 1, "slice": 2}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.txt", "--inline"], "file not found"),
        (["{doc}", "--inline", "--contract", "sonnet"], "sonnet"),
        (["{doc}", "--inline", "--policy", "nope"], "no such policy"),
        (["{doc}", "--inline", "--policy", "{bad_policy}"], "step 2, field 'mode'"),
    ],
)
def test_unusable_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_text("Plants make sugar from light. " * 20)
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps:\n  - {mode: full}\n  - {mode: sideways}\n")
    argv = [a.format(doc=doc, bad_policy=bad) for a in args]
    done = generate(tmp_path, *argv)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SUTURE_SIMULATOR__PROFILE": "nope"}, "unknown simulator profile 'nope'"),
        (
            {
                "SUTURE_SIMULATOR__FAULTS__RATE_LIMITED": "0.7",
                "SUTURE_SIMULATOR__FAULTS__SERVER_ERROR": "0.6",
            },
            "simulator settings:",
        ),
    ],
    ids=["unknown-profile", "fault-shares-over-1"],
)
def test_unusable_simulator_settings_exit_2_with_one_line(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    # Given simulator settings that cannot be used, and no model configured (so the simulator starts)
    doc = tmp_path / "doc.txt"
    doc.write_text("Plants make sugar from light. " * 20)
    # When generate runs, Then it says so in one line and exits 2, without a traceback
    done = generate(tmp_path, str(doc), "--inline", env=env)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_teaching_flags_reach_the_prompt_and_are_stored_with_the_job(tmp_path: Path) -> None:
    # Given an English chapter, and the quiz asked in French, true/false only
    out = tmp_path / "result.json"
    done = generate(
        tmp_path,
        str(REPO / "examples/photosynthesis.md"),
        "--inline",
        "--questions",
        "4",
        "--kinds",
        "true_false",
        "--language",
        "fr",
        "--difficulty",
        "easy",
        "--out",
        str(out),
    )
    # Then the simulated model (a simulation) wrote French true/false questions, and the job says what it
    # asked
    assert done.returncode == 0, done.stderr
    final = json.loads(out.read_text())
    assert final["simulated"] is True and final["status"] == "delivered"
    assert all(
        q["kind"] == "true_false" and q["options"] == ["Vrai", "Faux"] for q in final["output"]["questions"]
    )
    rules = final["contract_params"]["rules"]
    assert (
        rules["question_kinds"] == ["true_false"]
        and rules["language"] == "fr"
        and rules["difficulty"] == "easy"
    )


def test_a_bad_knob_is_one_line_exit_2(tmp_path: Path) -> None:
    done = generate(tmp_path, str(REPO / "examples/photosynthesis.md"), "--inline", "--kinds", "essay")
    assert done.returncode == 2 and "question_kinds" in done.stderr and "Traceback" not in done.stderr
