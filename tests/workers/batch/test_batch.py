"""`suture batch` end to end: the real CLI, a real Redis, real Celery workers, the simulator over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from suture.config.settings import Settings, SimulatorSettings, load_settings
from suture.contracts.quiz_model import Quiz
from suture.workers.batch.runner import checked
from suture.workers.local.stack import LocalStack, child_env

ROOT = Path(__file__).parents[3]
BAD = ROOT / "tests" / "data" / "documents"
pytestmark = pytest.mark.integration

ONE_NANO_STEP = """
description: "one cheap try and no repair, so most quizzes are soft-delivered"
feedback: false
examples: false
steps:
  - {mode: full, model: gpt-5-nano, reasoning_effort: low}
"""
UNKNOWN_MODEL = """
description: "a model the endpoint does not have, so every job fails terminally"
feedback: false
examples: false
steps:
  - {mode: full, model: gpt-5-unreleased, reasoning_effort: low}
"""


def suture_batch(
    redis_url: str, *args: str | Path, timeout_s: float = 100
) -> subprocess.CompletedProcess[str]:
    """Run the installed CLI as a user would, on the embedded stack with this test's Redis."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
    env |= {"REDIS_URL": redis_url, "SUTURE_SIMULATOR__LATENCY_SCALE": "0"}
    argv = [sys.executable, "-m", "suture", "batch", *map(str, args)]
    return subprocess.run(
        argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=False
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def soft_batch(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The examples plus the bad inputs, under a one-step nano policy; run twice (the rerun resumes)."""
    tmp = tmp_path_factory.mktemp("batch")
    policy = tmp / "one-nano.yaml"
    policy.write_text(ONE_NANO_STEP)
    out = tmp / "out"
    first = suture_batch(redis_url, "examples", BAD, "--out", out, "--policy", policy, "--questions", "6")
    assert first.returncode == 3, first.stderr  # finished, but some inputs were skipped
    ids_first = sorted(r["job_id"] for r in read_jsonl(out / "jobs.jsonl") if r["type"] == "job")
    second = suture_batch(redis_url, "examples", BAD, "--out", out, "--policy", policy, "--questions", "6")
    assert second.returncode == 3, second.stderr
    ids_second = sorted(r["job_id"] for r in read_jsonl(out / "jobs.jsonl") if r["type"] == "job")
    assert ids_first == ids_second, "a rerun must reuse the finished jobs"
    return out, first.stdout, first.stderr


def test_the_batch_says_it_runs_locally_on_the_simulator(soft_batch: tuple[Path, str, str]) -> None:
    _, stdout, stderr = soft_batch
    assert "embedded local stack" in stderr and "simulator" in stderr
    assert stdout.splitlines()[-3].startswith("SIMULATION") or "SIMULATION" in stdout
    assert "report.html" in stdout


def test_quizzes_jsonl_holds_only_valid_delivered_quizzes(soft_batch: tuple[Path, str, str]) -> None:
    out, _, _ = soft_batch
    lines = read_jsonl(out / "quizzes.jsonl")
    assert lines and {"source", "job_id", "status", "quiz", "failures"} <= set(lines[0])
    for line in lines:
        assert line["status"] in ("delivered", "soft_delivered")
        Quiz.model_validate(line["quiz"])
        assert len(line["quiz"]["questions"]) == 6
        assert (line["status"] == "soft_delivered") == bool(line["failures"])
    assert any(line["status"] == "soft_delivered" for line in lines)
    files = {Path(line["source"]["file"]).name for line in lines}
    assert {"plate_tectonics.pdf", "injection.md", "latin1_notes.txt"} <= files
    pdf_pages = [line["source"]["pages"] for line in lines if line["source"]["file"].endswith(".pdf")]
    assert all(pages and pages[0] >= 1 for pages in pdf_pages)


def test_every_job_has_a_trace(soft_batch: tuple[Path, str, str]) -> None:
    out, _, _ = soft_batch
    for job in (r for r in read_jsonl(out / "jobs.jsonl") if r["type"] == "job"):
        trace = json.loads((out / "traces" / f"{job['job_id']}.json").read_text())
        assert trace["job_id"] == job["job_id"] and trace["source"] == job["source"]
        assert trace["attempts"] and trace["attempts"][0]["model"] == "gpt-5-nano"


def test_reports_count_everything_and_list_bad_inputs(soft_batch: tuple[Path, str, str]) -> None:
    out, stdout, stderr = soft_batch
    report = json.loads((out / "report.json").read_text())
    jobs = len([r for r in read_jsonl(out / "jobs.jsonl") if r["type"] == "job"])
    assert report["simulated"] is True
    assert report["delivered"] + report["soft_delivered"] + report["failed"] + report["refused"] == jobs
    assert report["skipped"] == 9 and report["total"] == jobs + 9
    assert report["soft_delivered"] >= 1 and report["cost_usd"] > 0
    reasons = {Path(i["file"]).name: i["reason"] for i in report["input_issues"] if i["skipped"]}
    assert reasons["encrypted.pdf"] == "encrypted" and reasons["glaciers_copy.md"] == "duplicate"
    assert reasons["make_documents.py"] == "unsupported" and reasons["slides.pptx"] == "unreadable"
    for name in reasons:
        assert name in stderr  # each bad input also got its own line as it was met
    listed = [line for line in stdout.splitlines() if line.startswith("skipped: ")]
    assert sorted(Path(line.split(": ")[1]).name for line in listed) == sorted(reasons)
    html = (out / "report.html").read_text()
    assert html.index("SIMULATION") < html.index("<h1>")
    for soft in report["review"]:
        assert f"href='{soft['trace']}'" in html and (out / soft["trace"]).is_file()


def test_a_failed_section_is_reported_and_not_written_as_a_quiz(redis_url: str, tmp_path: Path) -> None:
    # Given a policy whose only model the endpoint does not serve
    policy = tmp_path / "unknown-model.yaml"
    policy.write_text(UNKNOWN_MODEL)
    out = tmp_path / "out"
    # When a document is batched with it
    run = suture_batch(redis_url, BAD / "glaciers.md", "--out", out, "--policy", policy, "--questions", "3")
    # Then the batch completes, the section is failed with its reason, and no quiz is written for it
    assert run.returncode == 0, run.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["failed"] == 1 and report["delivered"] == report["soft_delivered"] == 0
    (problem,) = report["problems"]
    assert problem["source"]["file"].endswith("glaciers.md") and problem["reason"]
    assert (out / "quizzes.jsonl").read_text() == ""
    assert problem["reason"] in (out / "report.html").read_text().replace("&#x27;", "'").replace(
        "&quot;", '"'
    )
    assert "failed" in run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "x"], "give at least one INPUT"),
        (["nowhere/", "--out", "x"], "input not found: nowhere/"),
        (["examples", "--out", "x", "--questions", "0"], "--questions must be at least 1"),
        (["examples", "--out", "x", "--no-wait"], "need a running cluster"),
        (["examples", "--out", "x", "--policy", "no-such-policy"], "no such policy"),
    ],
)
def test_unusable_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    run = suture_batch("redis://127.0.0.1:1/0", *args, timeout_s=30)
    assert run.returncode == 2
    assert message in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("status", "output", "expected"),
    [
        ("delivered", {"title": "t", "questions": []}, "delivered"),
        ("delivered", {"title": "t", "questions": [{"question": "no options?"}]}, "failed"),
        ("soft_delivered", "not a quiz", "failed"),
        ("failed", None, "failed"),
    ],
)
def test_an_invalid_quiz_is_never_passed_as_delivered(status: str, output: Any, expected: str) -> None:
    result = checked({"job_id": "j", "status": status, "output": output, "reason": "r"})
    assert result["status"] == expected
    if expected == "failed" and status != "failed":
        assert result["output"] is None and "not a valid quiz" in result["reason"]


@pytest.fixture
def cluster(redis_url: str) -> Iterator[Settings]:
    """A running stack (workers + simulator) standing in for a production cluster."""
    update = {
        "simulator": SimulatorSettings(latency_scale=0),
        "openai_api_key": None,
        "openai_base_url": None,
    }
    base = load_settings().model_copy(update=update)
    with LocalStack(base, redis_url=redis_url) as live:
        yield live


def test_no_wait_then_collect_gathers_the_batch_later(cluster: Settings, tmp_path: Path) -> None:
    # Given a cluster named by SUTURE_BROKER_URL
    env = {
        k: v for k, v in child_env(cluster).items() if not k.startswith(("OPENAI_", "SENTRY_", "REDIS_URL"))
    }
    out = tmp_path / "out"

    def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "suture", "batch", *map(str, args)]
        return subprocess.run(
            argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
        )

    # When a batch is only enqueued, then collected
    enqueued = cli(BAD / "glaciers.md", BAD / "injection.md", "--out", out, "--questions", "3", "--no-wait")
    assert enqueued.returncode == 0, enqueued.stderr
    assert "enqueued 2 jobs" in enqueued.stdout and "--collect" in enqueued.stdout
    assert "embedded local stack" not in enqueued.stderr
    collected = cli("--out", out, "--collect")
    # Then the collect run writes the quizzes and reports of those two jobs
    assert collected.returncode == 0, collected.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["jobs"] == 2 and report["delivered"] + report["soft_delivered"] == 2
    assert len(read_jsonl(out / "quizzes.jsonl")) == 2


def test_quizzes_jsonl_follows_document_order(soft_batch: tuple[Path, str, str]) -> None:
    # Given a batch of two inputs (examples/, then the bad-inputs folder) whose jobs finished in any order
    out, _, _ = soft_batch
    keys = [(line["source"]["file"], line["source"]["section"]) for line in read_jsonl(out / "quizzes.jsonl")]
    # Then the lines follow the inputs as given, files in name order, sections in order
    assert keys == sorted(keys, key=lambda key: (not key[0].startswith("examples/"), key[0], key[1]))


def test_every_quiz_has_a_static_page_listed_soft_delivered_first(soft_batch: tuple[Path, str, str]) -> None:
    # Given the batch's report
    out, _, _ = soft_batch
    report = json.loads((out / "report.json").read_text())
    quizzes = report["quizzes"]
    delivered = report["delivered"] + report["soft_delivered"]
    # Then every delivered or soft-delivered quiz has a line, the soft-delivered ones first
    assert len(quizzes) == delivered
    statuses = [q["status"] for q in quizzes]
    assert statuses == sorted(statuses, key=lambda s: s != "soft_delivered") and "soft_delivered" in statuses
    html = (out / "report.html").read_text()
    for quiz in quizzes:
        # And each page is there, readable without a server: the quiz with its failures marked
        assert f"href='{quiz['href']}'" in html
        page = (out / quiz["href"]).read_text()
        assert page.count('class="question') == 6 and 'class="correct"' in page
        assert (quiz["status"] == "soft_delivered") == ("question failing" in page) == (quiz["failures"] > 0)
