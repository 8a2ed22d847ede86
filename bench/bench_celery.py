"""Benchmark: suture's Celery flow against bare Celery, measured in the same run on the same broker.

    .venv/bin/python -m bench.bench_celery [--jobs 300] [--slow-jobs 1000] [--write]

Three comparisons, each with real worker processes (threads pool) on a private redis-server and a
scripted OpenAI-compatible model server in a process of its own (a simulation; see
tests/fixtures/scripted_model.py), with the CPU every process spent per job:
1. first-pass jobs/s with an instant model vs bare no-op task round trips/s;
2. jobs with one surgical round of 3 slices vs a bare chord of 3 no-ops plus a callback;
3. 1,000 jobs with a 1.0 s model latency vs the ideal 1000 x 1.0 s / calls in flight.
The first two also run a third side: bare Celery tasks of the same shape making the very model
calls a suture job makes (same client, same prompts), which separates what suture's orchestration
costs from what one model call through the openai SDK costs.
``--write`` replaces the "## Distributed execution" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import median
from typing import Any

from celery import chord

from bench import write_section
from bench.celery_report import ROUNDS, TITLE, report
from tests.fixtures.redis_server import RedisServer, free_port
from tests.fixtures.scripted_model import document, start_scripted_model

REPO = Path(__file__).resolve().parents[1]

if os.environ.get("SUTURE_BENCH_WORKER"):  # imported by `celery -A bench.bench_celery worker`
    from workers.celery import app

    @app.task(name="bench.noop", ignore_result=False)
    def noop(*_: Any) -> None:
        """A bare no-op task (the baseline)."""

    @app.task(name="bench.callback", ignore_result=False)
    def callback(results: list[Any]) -> int:
        """A bare chord body."""
        return len(results)

    @app.task(name="bench.model_call", ignore_result=False)
    def model_call(which: str) -> None:
        """A bare task making one model call a suture job makes: its first full attempt or slice ``which``."""
        client, calls = _job_calls()
        assert client.call(calls[which]).error is None


def _job_calls() -> tuple[Any, dict[str, Any]]:
    """This worker process's model client and job calls (``job_calls``), made once."""
    global _JOB_CALLS
    with _JOB_CALLS_LOCK:
        if _JOB_CALLS is None:
            from config.settings import load_settings

            _JOB_CALLS = job_calls(load_settings())
        return _JOB_CALLS


_JOB_CALLS: tuple[Any, dict[str, Any]] | None = None
_JOB_CALLS_LOCK = threading.Lock()


def job_calls(settings: Any) -> tuple[Any, dict[str, Any]]:
    """A model client and the calls of one bench job, as the engine builds them: ``full`` and, if the
    model's first reply leaves failures, the surgical round's slices ``0``, ``1``, ... (pointer order)."""
    from tasks import engine
    from tasks.job import EngineOptions, JobSpec, RunFull, RunSurgical
    from tasks.policy import load_policy
    from workers.model_client import ModelClient

    client = ModelClient(settings)
    options = EngineOptions.from_settings(settings)
    spec = JobSpec(
        job_id="bench", contract="quiz", params={"questions": 4}, source=document(4), options=options
    )
    policy = load_policy(settings.default_policy, settings)
    state = engine.start(spec)
    first = engine.next_action(state, policy, accepted=[], secrets=settings.secrets())
    assert isinstance(first, RunFull)
    calls = {"full": first.call}
    state = engine.apply_full(state, first, client.call(first.call))
    then = engine.next_action(state, policy, accepted=[], secrets=settings.secrets())
    if isinstance(then, RunSurgical):
        calls |= {str(i): then.calls[p] for i, p in enumerate(sorted(then.calls))}
    return client, calls


class ModelProcess:
    """The scripted model server in a process of its own, so it takes no GIL from the producer.

    Counters (``in_flight["max"]``) are read back when it stops.
    """

    def __init__(self, *, questions: int, imbalanced: int = 0, latency_s: float = 0.0) -> None:
        command = [sys.executable, "-m", "bench.bench_celery", "--serve-model", str(questions)]
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
                "suture.model,suture.control",
                "-l",
                "WARNING",
            ]
            command += ["-n", f"bench{i}@%h", "--without-mingle", "--without-gossip", f"--logfile={log}"]
            self.workers.append(subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True))
        from config.settings import load_settings
        from workers.celery_app import configure

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

    from workers.celery_app import app

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


def compare(bench: Bench, jobs: int, sides: dict[str, Any], check: Any) -> dict[str, Any]:
    """Interleaved repeats of every side, ``jobs`` each: median rates and CPU ms per job, by side.

    Interleaved and repeated because the shared 2-core machine is noisy from run to run. ``sides``
    maps a side's name to its run (jobs -> rate); suture's run returns its results too, for ``check``.
    """
    rates: dict[str, list[float]] = {side: [] for side in sides}
    cpu: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for _ in range(ROUNDS):
        for side, work in sides.items():
            outcome, cpu_ms = measured(bench, lambda: work(jobs))  # noqa: B023
            if side == "suture":
                outcome, results = outcome
                check(results)
            rates[side].append(outcome)
            cpu[side].append(cpu_ms)
    return {
        side: {
            "rate": median(rates[side]),
            "cpu_ms": {role: median(c[role] for c in cpu[side]) / jobs for role in cpu[side][0]},
        }
        for side in sides
    }


def bare_round_trips(n: int) -> float:
    """No-op tasks per second, each sent and its result read back."""
    from workers.celery_app import MODEL_QUEUE, app

    started = time.perf_counter()
    results = [app.send_task("bench.noop", queue=MODEL_QUEUE) for _ in range(n)]
    for result in results:
        result.get(timeout=120)
    return n / (time.perf_counter() - started)


def bare_model_calls(n: int) -> float:
    """Bare tasks making a first-pass job's model call per second, each sent and its result read back."""
    from workers.celery_app import MODEL_QUEUE, app

    started = time.perf_counter()
    results = [app.send_task("bench.model_call", args=["full"], queue=MODEL_QUEUE) for _ in range(n)]
    for result in results:
        result.get(timeout=120)
    return n / (time.perf_counter() - started)


def bare_chords(n: int) -> float:
    """Chords of 3 no-ops plus a callback per second."""
    from workers.celery_app import MODEL_QUEUE, app

    noop_sig = app.signature("bench.noop", queue=MODEL_QUEUE)
    body = app.signature("bench.callback", queue="suture.control")
    started = time.perf_counter()
    results = [chord([noop_sig.clone() for _ in range(3)])(body.clone()) for _ in range(n)]
    for result in results:
        assert result.get(timeout=120) == 3
    return n / (time.perf_counter() - started)


def bare_model_chords(n: int) -> float:
    """A surgical job's shape in bare Celery, per second: a task making the full call, then a chord of
    3 tasks making the slice calls plus a callback."""
    from celery import chain

    from workers.celery_app import MODEL_QUEUE, app

    full = app.signature("bench.model_call", args=["full"], queue=MODEL_QUEUE, immutable=True)
    header = [
        app.signature("bench.model_call", args=[str(i)], queue=MODEL_QUEUE, immutable=True) for i in range(3)
    ]
    body = app.signature("bench.callback", queue="suture.control")
    started = time.perf_counter()
    results = [
        chain(full.clone(), chord([s.clone() for s in header], body.clone())).apply_async() for _ in range(n)
    ]
    for result in results:
        assert _chain_result(result) == 3
    return n / (time.perf_counter() - started)


MISSED_NOTICES = [0]  # chain results Celery's result.get missed; read back from the backend instead


def _chain_result(result: Any, timeout_s: float = 120) -> Any:
    """A chain's result: ``result.get``, and the backend's stored value should ``get`` miss it.

    ``get`` on a result this process never sent (a chain's last task, sent by a worker) waits on
    its pub/sub notice; about once in a few thousand chains it never resolves although the result
    is stored (as in celery/celery#4039), and the 120 s timeout would wreck the measurement. Looking
    in the backend after each 1 s wait costs nothing while notices arrive in time.
    """
    from celery.exceptions import TimeoutError as CeleryTimeout

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return result.get(timeout=1.0)
        except CeleryTimeout:
            meta = result.backend.get_task_meta(result.id)
            if meta["status"] == "SUCCESS":
                MISSED_NOTICES[0] += 1
                return meta["result"]
            if time.monotonic() > deadline:
                raise


def suture_jobs(n: int, settings: Any, questions: int) -> tuple[float, list[dict[str, Any]]]:
    """suture jobs per second, from enqueue to the stored result."""
    from workers.producer import enqueue

    started = time.perf_counter()
    handles = [enqueue("quiz", document(questions), questions=questions, settings=settings) for _ in range(n)]
    results = [h.result(timeout_s=600) for h in handles]
    return n / (time.perf_counter() - started), results


def run(jobs: int, slow_jobs: int, concurrency: int, workers: int, slow_in_flight: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"jobs": jobs, "slow_jobs": slow_jobs, "concurrency": concurrency}
    figures |= {"workers": workers, "load_before": os.getloadavg()[0]}
    figures["slow_concurrency"] = -(-slow_in_flight // workers)
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp), concurrency=concurrency, workers=workers)
        try:
            figures["first"] = first_pass(bench, jobs)
            figures["surgical"] = surgical_round(bench, jobs)
            figures["call_cpu_ms"] = model_call_cpu(bench)
            figures["missed_notices"] = MISSED_NOTICES[0]
            figures |= slow_model(bench, slow_jobs, figures["slow_concurrency"], slow_in_flight)
        finally:
            bench.close()
    figures["load_after"] = os.getloadavg()[0]
    return figures


def first_pass(bench: Bench, jobs: int) -> dict[str, Any]:
    """First-pass jobs with an instant model against bare no-op round trips."""
    settings = bench.start(ModelProcess(questions=4))
    bare_round_trips(50)  # warm-up: connections, imports
    bare_model_calls(50)
    suture_jobs(20, settings, 4)

    def delivered(results: list[dict[str, Any]]) -> None:
        assert all(r["status"] == "delivered" for r in results)

    sides = {
        "bare": bare_round_trips,
        "bare_calls": bare_model_calls,
        "suture": lambda n: suture_jobs(n, settings, 4),
    }
    return compare(bench, jobs, sides, delivered)


def surgical_round(bench: Bench, jobs: int) -> dict[str, Any]:
    """Jobs with one surgical round of 3 slices against bare chords of 3 no-ops plus a callback."""
    settings = bench.start(ModelProcess(questions=4, imbalanced=3))
    bare_chords(20)
    bare_model_chords(20)
    suture_jobs(20, settings, 4)

    def one_round(results: list[dict[str, Any]]) -> None:
        assert all([a["mode"] for a in r["attempts"]] == ["full", "surgical"] for r in results)

    sides = {
        "bare": bare_chords,
        "bare_calls": bare_model_chords,
        "suture": lambda n: suture_jobs(n, settings, 4),
    }
    return compare(bench, jobs, sides, one_round)


def model_call_cpu(bench: Bench, calls: int = 300) -> float:
    """CPU ms of one model call (this process's client + the model server), one call at a time."""
    from config.settings import load_settings

    bench.start(ModelProcess(questions=4))
    client, job = job_calls(load_settings())
    call = job["full"]  # the very call a first-pass job makes
    for _ in range(20):
        client.call(call)
    assert bench.model is not None
    pids = [os.getpid(), bench.model.process.pid]
    before = cpu_s(pids)
    for _ in range(calls):
        assert client.call(call).error is None
    client.close()
    return (cpu_s(pids) - before) * 1000 / calls


def slow_model(bench: Bench, slow_jobs: int, concurrency: int, in_flight: int) -> dict[str, Any]:
    """Jobs with a 1.0 s model latency: elapsed time and the most calls the model saw at once."""
    slow = ModelProcess(questions=4, latency_s=1.0)
    settings = bench.start(slow, concurrency=concurrency)
    suture_jobs(in_flight, settings, 4)  # warm-up: one call per thread opens its connection
    started = time.perf_counter()
    suture_jobs(slow_jobs, settings, 4)
    elapsed_s = time.perf_counter() - started
    bench.stop_workers()
    return {"slow_elapsed_s": elapsed_s, "slow_in_flight": slow.in_flight["max"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--slow-jobs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16, help="threads per worker, instant-model runs")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--slow-in-flight", type=int, default=100, help="threads in all, 1 s latency run")
    parser.add_argument("--write", action="store_true", help="write the figures to docs/benchmarks.md")
    parser.add_argument(
        "--serve-model", nargs=3, metavar=("QUESTIONS", "IMBALANCED", "LATENCY_S"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve_model:
        questions, imbalanced, latency_s = args.serve_model
        return serve_model(int(questions), int(imbalanced), float(latency_s))
    text = report(run(args.jobs, args.slow_jobs, args.concurrency, args.workers, args.slow_in_flight))
    print(text)
    if args.write:
        write_section(TITLE, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
