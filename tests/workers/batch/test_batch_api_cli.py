"""`suture batch --batch-api`, as a user runs it: stopped with Ctrl-C mid-batch and rerun, it polls the same
batch.

Real `suture batch` processes on the embedded stack (their own Celery workers) with this test's
Redis (REDIS_URL: a store that outlives the command) and a simulator over HTTP that outlives both
runs, so its ``/v1/_stats`` counts every batch either run created.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from suture.workers.simulator import SimulatorHandle, start_simulator
from suture.workers.simulator.batches import BatchOptions
from tests.fixtures.redis_server import RedisServer

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def slow_batches() -> Iterator[SimulatorHandle]:
    """A simulator whose batches take 8 s: long enough to stop a run while one is in progress."""
    handle = start_simulator("realistic", 0.0, seed=5, batch_options=BatchOptions(delay_s=8.0))
    yield handle
    handle.stop()


def batch_stats(sim: SimulatorHandle) -> dict[str, Any]:
    return dict(httpx2.get(f"{sim.base_url}/_stats", timeout=5).json()["batches"])


def env_for(redis_url: str, sim: SimulatorHandle, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
    env.pop("XDG_RUNTIME_DIR", None)  # no `suture up` to find
    return env | {
        "HOME": str(home),
        "REDIS_URL": redis_url,
        "OPENAI_BASE_URL": sim.base_url,
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "0.5",
        "SUTURE_BATCH_API__COLLECT_S": "2",
        "SUTURE_BATCH_API__POLL_S": "0.5",
    }


def argv(out: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "suture", "batch", str(EXAMPLES), "--out", str(out), "--questions", "4"]
    return [*command, *extra]


def test_a_stopped_batch_api_run_resumes_polling_the_same_batch(
    redis_factory: Callable[..., RedisServer], slow_batches: SimulatorHandle, tmp_path: Path
) -> None:
    # Given `suture batch --batch-api first` whose first attempts were submitted as one batch
    env = env_for(redis_factory().url, slow_batches, tmp_path)
    out = tmp_path / "out"
    process = subprocess.Popen(
        argv(out, "--batch-api", "first"),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 90
    while batch_stats(slow_batches)["count"] == 0:
        assert time.monotonic() < deadline and process.poll() is None, "no batch submitted"
        time.sleep(0.2)
    time.sleep(1.0)
    submitted = batch_stats(slow_batches)
    assert submitted["statuses"] == {"in_progress": submitted["count"]}

    # When it is stopped with Ctrl-C while the batch runs, and rerun
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    assert process.returncode == 130
    rerun = subprocess.run(
        argv(out, "--batch-api", "first"), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180
    )

    # Then the rerun polled the batch the first run submitted: no batch and no line submitted again
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    final = batch_stats(slow_batches)
    assert final["count"] == submitted["count"]
    assert final["requests"]["total"] == submitted["requests"]["total"]
    assert final["statuses"] == {"completed": submitted["count"]}
    # ...and every section's quiz came from it: a first attempt through the batch, at the batch price
    report = json.loads((out / "report.json").read_text())
    traces = [json.loads(p.read_text()) for p in (out / "traces").glob("*.json")]
    assert report["delivered"] + report["soft_delivered"] == len(traces) == submitted["requests"]["total"]
    assert all(t["attempts"][0]["batch_id"] for t in traces)
    assert report["batch_api_attempts"] == len(traces)  # first attempts only: repairs went online


def test_batch_api_on_a_store_that_ends_with_the_command_is_refused(tmp_path: Path) -> None:
    # Given no REDIS_URL, broker or `suture up`: the embedded store would go with the command
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "REDIS_URL"))}
    env |= {"HOME": str(tmp_path)}
    env.pop("XDG_RUNTIME_DIR", None)

    # When `suture batch --batch-api` is asked
    done = subprocess.run(
        argv(tmp_path / "out", "--batch-api"),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )

    # Then it refuses in one line, before starting anything
    assert done.returncode == 2
    assert "--batch-api needs a job store that outlives this command" in done.stderr
    assert "Traceback" not in done.stderr
