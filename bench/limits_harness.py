"""The running parts of ``bench.bench_limits``: a private Redis, a model server process, suture's workers.

The model is either ``suture simulator`` (its provider-style RPM/TPM meter on; **a simulation**) or
the scripted model of ``bench.celery_harness`` (a fixed latency per request, also a simulation).
Workers are ``celery -A suture.workers worker -P threads`` processes with suture's own settings.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from bench.bench_simulator import simulator_process as simulator_process
from bench.bench_simulator_capacity import proc_status
from tests.fixtures.redis_server import RedisServer, free_port

REPO = Path(__file__).resolve().parents[1]


def model_stats(base_url: str) -> dict[str, Any]:
    """The simulator's ``GET /v1/_stats``."""
    return dict(httpx2.get(f"{base_url}/_stats", timeout=30).json())


@dataclass
class Workers:
    """suture's workers on one private Redis, started with ``env`` (settings) over the defaults."""

    directory: Path
    env: dict[str, str]
    redis: RedisServer | None = None
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    peak_rss_kb: dict[int, int] = field(default_factory=dict)

    def open(self, model_url: str) -> Any:
        """Start the Redis; returns the producer's settings (this process's environment set to match)."""
        self.redis = RedisServer(self.directory, free_port(), appendonly=False)
        self.redis.start()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
        self.env = (
            base
            | {
                "SUTURE_BROKER_URL": self.redis.url,
                "SUTURE_REDIS_URL": self.redis.url,
                "SUTURE_RESULT_BACKEND": self.redis.url,
                "OPENAI_BASE_URL": model_url,
                "OPENAI_API_KEY": "sk-bench-not-a-real-key",
                "PYTHONPATH": str(REPO),
            }
            | self.env
        )
        os.environ.update({k: v for k, v in self.env.items() if k.startswith(("SUTURE_", "OPENAI_"))})
        from suture.config.settings import load_settings
        from suture.workers.runtime.app import configure

        settings = load_settings()
        configure(settings)
        return settings

    def start(self, count: int, concurrency: int) -> None:
        """Start ``count`` workers of ``concurrency`` threads on every queue; wait until they answer."""
        from suture.workers.runtime.app import ALL_QUEUES, app

        for i in range(count):
            log = self.directory / f"limits-worker{i}.log"
            command = [sys.executable, "-m", "celery", "-A", "suture.workers", "worker", "-P", "threads"]
            command += [
                "-c",
                str(concurrency),
                "-Q",
                ",".join(ALL_QUEUES),
                "-l",
                "INFO",
                "-n",
                f"limits{i}@%h",
            ]
            command += ["--without-mingle", "--without-gossip", f"--logfile={log}"]
            self.processes.append(
                subprocess.Popen(
                    command,
                    cwd=REPO,
                    env=self.env,
                    start_new_session=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 90
        while len(app.control.ping(timeout=0.5) or []) < count:
            if time.monotonic() > deadline:
                raise RuntimeError("bench workers did not start")

    def sample(self) -> None:
        """Record each worker's peak RSS so far (VmHWM, kB)."""
        for process in self.processes:
            if process.poll() is None:
                self.peak_rss_kb[process.pid] = proc_status(process.pid)["VmHWM"]

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.redis is not None:
            self.redis.stop()


def wait_all(handles: list[Any], timeout_s: float, on_tick: Any = None) -> list[dict[str, Any]]:
    """Every job's result (in order), calling ``on_tick()`` about once a second while waiting."""
    from suture.workers.errors import JobTimeout

    results: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    last_tick = 0.0
    for handle in handles:
        while True:
            if on_tick is not None and time.monotonic() - last_tick >= 1.0:
                on_tick()
                last_tick = time.monotonic()
            try:
                results.append(handle.result(timeout_s=1.0))
                break
            except JobTimeout:
                if time.monotonic() > deadline:
                    results.append({"status": "lost", "job_id": handle.id})
                    break
    return results
