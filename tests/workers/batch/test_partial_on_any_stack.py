"""Jobs saved in ``partial/`` by a batch stopped on its embedded stack are finished by a rerun that lands on
a running `suture up`, from where they stood, not enqueued and paid for again.

Real processes: `suture batch` with nothing configured (its own embedded stack, gone at Ctrl-C), then
`suture up` in another "shell" (its own runtime dir, where it publishes itself), then the same batch
command again, which finds that `up` and runs there.
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

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def _env(home: Path, *, runtime: Path | None, latency_scale: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "REDIS_URL"))}
    env |= {"HOME": str(home), "SUTURE_SIMULATOR__LATENCY_SCALE": latency_scale}
    env.pop("XDG_RUNTIME_DIR", None)
    return env | ({"XDG_RUNTIME_DIR": str(runtime)} if runtime else {})


def _argv(out: Path) -> list[str]:
    return [sys.executable, "-m", "suture", "batch", str(EXAMPLES), "--out", str(out), "--questions", "5"]


def _ledger(out: Path) -> list[dict[str, Any]]:
    path = out / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def _wait_ready(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if line.strip() == "suture up: ready":
            return
    raise AssertionError("suture up did not say it was ready")


def test_a_rerun_on_a_running_suture_up_finishes_the_jobs_saved_in_partial(tmp_path: Path) -> None:
    # Given a batch on the default setup (its own embedded stack), stopped with Ctrl-C once two jobs
    # finished: the jobs in flight were saved in partial/
    out = tmp_path / "out"
    first = subprocess.Popen(
        _argv(out),
        env=_env(tmp_path, runtime=None, latency_scale="1"),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(_ledger(out)) < 2:
        assert time.monotonic() < deadline and first.poll() is None, "no job finished"
        time.sleep(0.1)
    first.send_signal(signal.SIGINT)
    _, stderr = first.communicate(timeout=30)
    assert first.returncode == 130, stderr[-2000:]
    saved = {
        e["job_id"]: json.loads((out / e["partial"]).read_text())
        for e in _ledger(out)
        if e["event"] == "interrupted" and e["partial"]
    }
    assert saved

    # When `suture up` runs in another shell, and the same batch command runs again where it is found
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    with subprocess.Popen(
        [sys.executable, "-m", "suture", "up", "--concurrency", "4"],
        cwd=tmp_path,
        env=_env(tmp_path, runtime=runtime, latency_scale="0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as up:
        try:
            _wait_ready(up)
            rerun = subprocess.run(
                _argv(out),
                env=_env(tmp_path, runtime=runtime, latency_scale="0"),
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=240,
            )
        finally:
            up.send_signal(signal.SIGINT)
            try:
                up.wait(timeout=30)
            except subprocess.TimeoutExpired:
                up.kill()
                up.wait(timeout=10)

    # Then it ran on that `suture up`, and the saved jobs went on from where they stood, under their own
    # job ids: their traces begin with the attempts the first run had paid for, which were not run again
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "on the local stack of `suture up`" in rerun.stderr
    finished = {e["job_id"] for e in _ledger(out) if e["event"] == "finished"}
    assert set(saved) <= finished
    for job_id, state in saved.items():
        trace = json.loads((out / "traces" / f"{job_id}.json").read_text())
        before = state["attempts"]
        assert [a["n"] for a in trace["attempts"][: len(before)]] == [a["n"] for a in before]
        assert [a["cost_usd"] for a in trace["attempts"][: len(before)]] == [a["cost_usd"] for a in before]
