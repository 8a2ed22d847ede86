"""The bench's running parts: a private Redis, Celery workers, the scripted model in its own process, CPU
meters.

Used by ``bench.bench_celery``; its workers load ``bench.bench_celery`` (the baseline tasks live
there). ``python -m bench.celery_harness QUESTIONS IMBALANCED LATENCY_S`` serves the scripted model
(a simulation; see tests/fixtures/scripted_model.py) until stdin closes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.fixtures.redis_server import RedisServer, free_port
from tests.fixtures.scripted_model import start_scripted_model

REPO = Path(__file__).resolve().parents[1]


class ModelProcess:
    """The scripted model server in a process of its own, so it takes no GIL from the producer.

    Counters (``in_flight["max"]``) are read back when it stops.
    """

    def __init__(self, *, questions: int, imbalanced: int = 0, latency_s: float = 0.0) -> None:
        command = [sys.executable, "-m", "bench.celery_harness", str(questions)]
        command += [str(imbalanced), str(latency_s)]
        self.process = subprocess.Popen(
            command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            raise RuntimeError("the scripted model server did not start")
        self.in_flight: dict[str, int] = {}

    def stop(self) -> None:
        if self.process.poll() is None:
            out, _ = self.process.communicate("stop\n", timeout=30)
            self.in_flight = json.loads(out.strip().splitlines()[-1])


def serve_model(questions: int, imbalanced: int, latency_s: float) -> int:
    """Run the scripted model until stdin closes; print its URL first and its in-flight counts last."""
    model = start_scripted_model(questions=questions, imbalanced=imbalanced, latency_s=latency_s)
    # The fixture sets its listen backlog after the socket already listens (so it stays at 5):
    # a burst of new connections then loses SYNs and waits 1 s for the retransmit.
    model.server.socket.listen(1024)
    print(model.base_url, flush=True)
    sys.stdin.readline()
    model.stop()
    print(json.dumps(model.in_flight), flush=True)
    return 0


class Bench:
    """One private Redis, one scripted model, and workers started with suture's settings."""

    def __init__(self, directory: Path, *, concurrency: int, workers: int) -> None:
        self.redis = RedisServer(directory, free_port(), appendonly=False)
        self.redis.start()
        self.concurrency = concurrency
        self.worker_count = workers
        self.directory = directory
        self.workers: list[subprocess.Popen[bytes]] = []
        self.model: ModelProcess | None = None

    def start(self, model: ModelProcess, *, concurrency: int | None = None) -> Any:
        self.stop_workers()
        workers = self.worker_count
        self.model = model
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
        env |= {
            "SUTURE_BROKER_URL": self.redis.url,
            "SUTURE_REDIS_URL": self.redis.url,
            "SUTURE_RESULT_BACKEND": self.redis.url,
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-bench-not-a-real-key",
            "SUTURE_BENCH_WORKER": "1",
            "PYTHONPATH": str(REPO),
        }
        os.environ.update({k: v for k, v in env.items() if k.startswith(("SUTURE_", "OPENAI_"))})
        for i in range(workers):
            log = self.directory / f"worker{i}-{time.monotonic_ns()}.log"
            command = [sys.executable, "-m", "celery", "-A", "bench.bench_celery", "worker", "-P", "threads"]
            command += [
                "-c",
                str(concurrency or self.concurrency),
                "-Q",
                "suture.model,suture.model.bulk.ahead,suture.model.bulk,suture.control",
                "-l",
                "WARNING",
            ]
            command += ["-n", f"bench{i}@%h", "--without-mingle", "--without-gossip", f"--logfile={log}"]
            self.workers.append(subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True))
        from suture.config.settings import load_settings
        from suture.workers.runtime.app import configure

        settings = load_settings()
        app = configure(settings)
        deadline = time.monotonic() + 60
        while len(app.control.ping(timeout=0.5) or []) < workers:
            if time.monotonic() > deadline:
                raise RuntimeError("bench workers did not start")
        return settings

    def stop_workers(self) -> None:
        for process in self.workers:
            process.terminate()
        for process in self.workers:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        self.workers = []
        if self.model is not None:
            self.model.stop()
            self.model = None

    def roles(self) -> dict[str, list[int]]:
        """Every process of the measurement by role: workers, Redis, the model server and this producer."""
        roles = {"workers": [p.pid for p in self.workers], "producer": [os.getpid()]}
        roles["redis"] = [self.redis.process.pid] if self.redis.process else []
        roles["model server"] = [self.model.process.pid] if self.model else []
        return roles

    def close(self) -> None:
        self.stop_workers()
        _stop_result_consumer()
        self.redis.stop()


def _stop_result_consumer() -> None:
    """Stop the result backend's pub/sub reader before its Redis goes (else it retries at exit)."""
    import gc

    from suture.workers.runtime.app import app

    gc.collect()  # pending AsyncResults unsubscribe when collected: let them do it while Redis runs
    consumer = getattr(app.backend, "result_consumer", None)
    if consumer is not None:
        consumer.stop()
        # A chord's AsyncResults still alive unsubscribe in __del__ at interpreter exit, after this
        # Redis is gone (a harmless but noisy traceback): with nothing subscribed, they send nothing.
        consumer.subscribed_to.clear()


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds these processes have used so far (Linux ``/proc``)."""
    total_ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total_ticks += int(fields[11]) + int(fields[12])
    return total_ticks / os.sysconf("SC_CLK_TCK")


def measured(bench: Bench, work: Any) -> tuple[Any, dict[str, float]]:
    """Run ``work``; returns its outcome and the CPU ms each role of the run spent on it (and in all)."""
    roles = bench.roles()
    before = {role: cpu_s(pids) for role, pids in roles.items()}
    outcome = work()
    cpu_ms = {role: (cpu_s(pids) - before[role]) * 1000 for role, pids in roles.items()}
    cpu_ms["all"] = sum(cpu_ms.values())
    return outcome, cpu_ms


if __name__ == "__main__":
    questions, imbalanced, latency_s = sys.argv[1:4]
    sys.exit(serve_model(int(questions), int(imbalanced), float(latency_s)))
