"""`suture batch --batch-api`, as a user runs it: stopped with Ctrl-C mid-batch and rerun, it polls the same
batch.

Real `suture batch` processes on the embedded stack (their own Celery workers), with this test's
Redis (REDIS_URL) or with nothing configured (the embedded Redis keeps its data in --out), and a
simulator over HTTP that outlives both runs, so it counts every batch either run created.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
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


def default_env(sim: SimulatorHandle, home: Path) -> dict[str, str]:
    """Nothing configured but the model's address: no REDIS_URL, broker or `suture up`."""
    env = {k: v for k, v in env_for("", sim, home).items() if k != "REDIS_URL"}
    return {k: v for k, v in env.items() if not k.startswith("REDIS_")}


def rounds_and_lines(sim: SimulatorHandle) -> tuple[Counter[str], Counter[str]]:
    """Batches per round (metadata ``suture_round``) and batch lines per custom id, as the simulator holds
    them."""
    client = openai.OpenAI(base_url=sim.base_url, api_key="sk-test-not-a-real-key")
    try:
        batches = list(client.batches.list(limit=100))
        rounds = Counter(str((b.metadata or {}).get("suture_round")) for b in batches)
        lines: Counter[str] = Counter()
        for b in batches:
            text = client.files.content(b.input_file_id).text
            lines.update(json.loads(line)["custom_id"] for line in text.splitlines() if line.strip())
        return rounds, lines
    finally:
        client.close()


def test_batch_api_on_the_embedded_stack_survives_a_stop_and_a_rerun_one_batch_per_round(
    slow_batches: SimulatorHandle, tmp_path: Path
) -> None:
    # Given `suture batch --batch-api` with nothing configured (its own embedded stack and Redis),
    # whose first attempts were submitted as a batch
    env = default_env(slow_batches, tmp_path)
    out = tmp_path / "out"
    process = subprocess.Popen(
        argv(out, "--batch-api"), env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 90
    while batch_stats(slow_batches)["count"] == 0:
        assert time.monotonic() < deadline and process.poll() is None, "no batch submitted"
        time.sleep(0.2)
    submitted = batch_stats(slow_batches)
    assert submitted["statuses"] == {"in_progress": submitted["count"]}

    # When it is stopped with Ctrl-C while that batch runs, and the same command runs again
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr[-3000:]
    assert (out / "store").is_dir()  # the embedded store's data, kept for the rerun
    rerun = subprocess.run(
        argv(out, "--batch-api"), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )

    # Then the rerun finished the batch on the same rounds: every round has one batch, every line was
    # sent once, and the first run's batch was polled to its end (not submitted again)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "embedded local stack" in rerun.stderr
    rounds, lines = rounds_and_lines(slow_batches)
    assert rounds and set(rounds.values()) == {1}, rounds
    assert lines and set(lines.values()) == {1}, [c for c, n in lines.items() if n > 1]
    final = batch_stats(slow_batches)
    assert final["statuses"] == {"completed": final["count"]}
    assert final["count"] == len(rounds) >= submitted["count"]
    # ...every section's quiz came through it, every call at the batch price, and the store is gone
    report = json.loads((out / "report.json").read_text())
    traces = [json.loads(p.read_text()) for p in (out / "traces").glob("*.json")]
    assert report["delivered"] + report["soft_delivered"] == len(traces) > 0
    assert all(a["batch_id"] for t in traces for a in t["attempts"] if a["mode"] != "fix")
    assert not (out / "store").exists()


def _written_to_store(out: Path, marker: bytes) -> bool:
    """True once the embedded stack's Redis has appended ``marker`` to its AOF (in ``--out``/store)."""
    return any(marker in path.read_bytes() for path in (out / "store").rglob("*.aof") if path.is_file())


def test_with_nothing_configured_the_embedded_simulator_keeps_its_batches_for_the_rerun(
    tmp_path: Path,
) -> None:
    # Given `suture batch --batch-api` with nothing configured at all: its own Redis and its own simulator,
    # whose batches take 15 s
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "REDIS_"))}
    env.pop("XDG_RUNTIME_DIR", None)
    env |= {
        "HOME": str(tmp_path),
        "SUTURE_SIMULATOR__LATENCY_SCALE": "0",
        "SUTURE_SIMULATOR__BATCH_API__DELAY_S": "15",
        "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "0.5",
        "SUTURE_BATCH_API__COLLECT_S": "1",
        "SUTURE_BATCH_API__POLL_S": "0.5",
    }
    out = tmp_path / "out"
    process = subprocess.Popen(
        argv(out, "--batch-api"), env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 90
    while not (out / "jobs.jsonl").is_file() or not (out / "jobs.jsonl").read_text().strip():
        assert time.monotonic() < deadline and process.poll() is None, "nothing enqueued"
        time.sleep(0.2)
    # The first round is claimed and submitted: its batch runs for 15 s. A fixed wait raced the submission on
    # a loaded machine, so wait for the round marked submitted in the embedded Redis's append-only file.
    while not _written_to_store(out, b"submitted"):
        assert time.monotonic() < deadline and process.poll() is None, "no batch submitted"
        time.sleep(0.1)

    # When it is stopped with Ctrl-C while that batch runs, and the same command runs again
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr[-3000:]
    kept = json.loads((out / "store" / "simulator-batches.json").read_text())["batches"]
    assert kept and {b["status"] for b in kept} == {"in_progress"}
    rerun = subprocess.run(
        argv(out, "--batch-api"), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )

    # Then the rerun's first attempts came from the batch submitted before the stop, not a new one, and no
    # call was lost on the way
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    traces = [json.loads(p.read_text()) for p in (out / "traces").glob("*.json")]
    assert traces and {t["attempts"][0]["batch_id"] for t in traces} <= {b["id"] for b in kept}
    assert not [a for t in traces for a in t["attempts"] if a["outcome"] == "transport_error"]
    assert not (out / "store").exists()
