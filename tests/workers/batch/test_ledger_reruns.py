"""A batch's ledger on the default setup: real `suture batch` processes, nothing configured.

No broker, no REDIS_URL, no model: each run starts its own embedded stack (private Redis, Celery
workers, the simulator over HTTP), which is gone when the run ends, so only the ledger in --out can
say what is done. Checked: a rerun of a finished batch costs $0 and writes no trace; Ctrl-C stops
within 5 s, records what finished and what was in flight (its calls in flight at their estimated
cost, marked as estimated), and a rerun finishes the batch for what a clean run costs, paying nothing
twice but those calls; a quiz edited by hand survives a rerun, validated.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.processes import still_running, wait_for_children

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
NOISE = ("Traceback", "Task was destroyed", "Exception ignored")
STOP_BOUND_S = 5.0


def _env(home: Path, latency_scale: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "REDIS_URL"))}
    env |= {"HOME": str(home), "SUTURE_SIMULATOR__LATENCY_SCALE": latency_scale}
    env.pop("XDG_RUNTIME_DIR", None)  # no `suture up` to find: the default setup
    return env


def batch(home: Path, out: Path, *extra: str, latency_scale: str = "0") -> subprocess.CompletedProcess[str]:
    """`suture batch examples --out OUT` as a user runs it on the default setup."""
    argv = [sys.executable, "-m", "suture", "batch", str(EXAMPLES), "--out", str(out), "--questions", "5"]
    return subprocess.run(
        [*argv, *extra],
        env=_env(home, latency_scale),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def ledger(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]


def total_usd(out: Path) -> float:
    return sum(float(e.get("cost_usd") or 0.0) for e in ledger(out))


def traces(out: Path) -> dict[str, float]:
    return {p.name: p.stat().st_mtime for p in (out / "traces").iterdir()}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One clean, uninterrupted batch of the examples."""
    home = tmp_path_factory.mktemp("clean")
    out = home / "out"
    run = batch(home, out)
    assert run.returncode == 0, run.stderr
    return out


def test_a_rerun_of_a_finished_batch_costs_nothing_and_writes_no_trace(clean: Path) -> None:
    # Given a finished batch and what it wrote
    before_traces, before_quizzes = traces(clean), (clean / "quizzes.jsonl").read_bytes()
    before_ledger = ledger(clean)
    finished = [e for e in before_ledger if e["event"] == "finished"]
    assert finished and all(e["status"] == "delivered" for e in finished)

    # When the same command runs again
    rerun = batch(clean.parent, clean)

    # Then nothing runs: no stack, $0 this run, no new trace, the same quizzes, no ledger event
    assert rerun.returncode == 0, rerun.stderr
    assert "embedded local stack" not in rerun.stderr
    assert f"({len(finished)} kept from earlier runs); cost $0.0000 this run" in rerun.stdout
    assert f"${total_usd(clean):.4f} for the batch" in rerun.stdout
    assert traces(clean) == before_traces
    assert (clean / "quizzes.jsonl").read_bytes() == before_quizzes
    assert ledger(clean) == before_ledger
    report = json.loads((clean / "report.json").read_text())
    assert report["run_cost_usd"] == 0 and report["kept"] == len(finished)


def test_ctrl_c_stops_within_5_s_and_a_rerun_pays_nothing_twice(clean: Path, tmp_path: Path) -> None:
    # Given a batch at real model speed, every section in flight at once, interrupted once two finished
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "suture", "batch", str(EXAMPLES), "--out", str(out), "--questions", "5"]
    process = subprocess.Popen(
        argv,
        env=_env(tmp_path, "1"),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stack = wait_for_children(process.pid, 3)
    deadline = time.monotonic() + 120
    while not (out / "ledger.jsonl").is_file() or len(ledger(out)) < 2:
        assert time.monotonic() < deadline and process.poll() is None, "no job finished"
        time.sleep(0.1)

    # When Ctrl-C is pressed
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    took_s = time.monotonic() - sent

    # Then it stops within 5 s, quietly, having written the report and the ledger of what finished
    assert took_s <= STOP_BOUND_S, f"took {took_s:.1f} s"
    assert process.returncode == 130
    assert not still_running(stack, sent + STOP_BOUND_S)
    assert not [line for line in stderr.splitlines() if any(n in line for n in NOISE)], stderr
    first = ledger(out)
    done = {e["key"] for e in first if e["event"] == "finished"}
    stopped = {e["key"] for e in first if e["event"] == "interrupted"}
    assert done and stopped and not done & stopped
    assert all(e["cost_usd"] >= 0 for e in first)
    # (the jobs in flight saved where they stood: their engine state, for the rerun to go on from)
    saved = {e["job_id"] for e in first if e["event"] == "interrupted" and e["partial"]}
    assert saved and all((out / "partial" / f"{job}.json").is_file() for job in saved)
    # (the calls in flight counted at their estimated cost, marked as estimated, not at $0)
    flying = [e for e in first if e["event"] == "interrupted" and e.get("calls_in_flight")]
    assert flying and all(e["estimated_usd"] > 0 and e["cost_usd"] >= e["estimated_usd"] for e in flying)
    estimated = sum(e["estimated_usd"] for e in flying)
    assert "estimated: calls in flight at Ctrl-C" in stderr.splitlines()[-1]
    report = json.loads((out / "report.json").read_text())
    assert report["delivered"] == len(done) and report["run_cost_usd"] == pytest.approx(
        total_usd(out), abs=1e-6
    )
    assert report["batch_estimated_usd"] == pytest.approx(estimated, abs=1e-6)
    assert report["calls_in_flight"] == sum(e["calls_in_flight"] for e in flying)
    finished_traces = traces(out)

    # When the same command runs again
    rerun = batch(tmp_path, out)

    # Then it quizzes only what was missing: the finished sections are not run (nor paid) again
    assert rerun.returncode == 0, rerun.stderr
    second = ledger(out)[len(first) :]
    assert {e["key"] for e in second if e["event"] == "finished"}.isdisjoint(done)
    # and the jobs stopped half way go on from where they stood, under their own job ids
    assert saved <= {e["job_id"] for e in second if e["event"] == "finished"}
    assert {name: traces(out)[name] for name in finished_traces} == finished_traces
    assert len(read_lines(out)) == len(read_lines(clean))
    # and both runs together paid at most 1.05 x the clean run for the calls whose cost is known; the
    # batch's total also holds, marked as estimated, the calls in flight at Ctrl-C (billed, never answered)
    known = total_usd(out) - estimated
    assert known <= 1.05 * total_usd(clean), (known, total_usd(clean))
    after = json.loads((out / "report.json").read_text())
    assert after["batch_estimated_usd"] == pytest.approx(estimated, abs=1e-6)
    assert (
        f"(~${after['batch_estimated_usd']:.4f} of it estimated: calls in flight at Ctrl-C)" in rerun.stdout
    )
    assert f"${total_usd(out):.4f} for the batch" in rerun.stdout


def test_jobs_that_ended_before_ctrl_c_are_recorded_finished_and_not_paid_again(
    clean: Path, tmp_path: Path
) -> None:
    # Given a batch whose runner polls the store only once a minute, so its jobs end in the store
    # (workers done, result stored) long before the runner collects them
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "suture", "batch", str(EXAMPLES), "--out", str(out), "--questions", "5"]
    env = _env(tmp_path, "0") | {"SUTURE_BATCH__POLL_INTERVAL_S": "60"}
    process = subprocess.Popen(
        argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wait_for_children(process.pid, 3)
    time.sleep(20)  # the examples take a few seconds at latency 0

    # When Ctrl-C is pressed before the runner's next look
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr

    # Then the jobs that had ended are recorded finished (before, they were recorded interrupted with
    # their whole cost and no state to go on from, and the rerun paid for them again)
    first = ledger(out)
    assert [e for e in first if e["event"] == "finished"], first
    # and the rerun pays only for what had not ended: both runs together, the clean run's cost
    rerun = batch(tmp_path, out)
    assert rerun.returncode == 0, rerun.stderr
    estimated = sum(e.get("estimated_usd", 0.0) for e in first if e["event"] == "interrupted")
    known = total_usd(out) - estimated
    assert known <= 1.05 * total_usd(clean), (known, total_usd(clean), first)


def read_lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "quizzes.jsonl").read_text().splitlines()]


def test_a_quiz_edited_by_hand_survives_a_rerun_validated(clean: Path, tmp_path: Path) -> None:
    # Given a finished batch (a copy) in which a person rewrote one question and broke another's key
    out = tmp_path / "out"
    subprocess.run(["cp", "-r", str(clean), str(out)], check=True)
    lines = read_lines(out)
    lines[0]["quiz"]["questions"][1]["question"] = (
        "Edited by a teacher: " + lines[0]["quiz"]["questions"][1]["question"]
    )
    broken = lines[1]["quiz"]["questions"][0]
    broken["correct_answer_index"] = (broken["correct_answer_index"] + 1) % len(broken["options"])
    (out / "quizzes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    before_traces = traces(out)

    # When the batch is run again, twice
    rerun = batch(tmp_path, out)
    again = batch(tmp_path, out)

    # Then both edits are kept (never regenerated), each validated against the contract and reported
    assert rerun.returncode == 0 and again.returncode == 0, rerun.stderr + again.stderr
    assert "cost $0.0000 this run" in rerun.stdout and "cost $0.0000 this run" in again.stdout
    kept = read_lines(out)
    assert kept[0]["quiz"] == lines[0]["quiz"] and kept[1]["quiz"] == lines[1]["quiz"]
    assert kept[0]["edited"] and kept[0]["status"] == "delivered" and kept[0]["failures"] == []
    assert kept[1]["edited"] and kept[1]["status"] == "soft_delivered"
    assert "answer_text_mismatch" in {f["code"] for f in kept[1]["failures"]}
    assert "kept (edited by a person)" in again.stdout and "answer_text_mismatch" in again.stdout
    report = (out / "report.html").read_text()
    assert "Kept as a person left them" in report and "answer_text_mismatch" in report
    edits = [e for e in ledger(out) if e["event"] == "edited"]
    assert len(edits) == 2 and edits[0]["output"] == lines[0]["quiz"]
    assert traces(out) == before_traces
