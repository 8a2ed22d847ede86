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
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import median
from typing import Any

from celery import chord

from bench import write_section
from bench.celery_harness import Bench, ModelProcess, cpu_s, measured
from bench.celery_report import ROUNDS, TITLE, report
from tests.fixtures.scripted_model import document

if os.environ.get("SUTURE_BENCH_WORKER"):  # imported by `celery -A bench.bench_celery worker`
    from suture.workers.celery import app

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
            from suture.config.settings import load_settings

            _JOB_CALLS = job_calls(load_settings())
        return _JOB_CALLS


_JOB_CALLS: tuple[Any, dict[str, Any]] | None = None
_JOB_CALLS_LOCK = threading.Lock()


def job_calls(settings: Any) -> tuple[Any, dict[str, Any]]:
    """A model client and the calls of one bench job, as the engine builds them: ``full`` and, if the
    model's first reply leaves failures, the surgical round's slices ``0``, ``1``, ... (pointer order)."""
    from suture.tasks import engine
    from suture.tasks.job import RunFull, RunSurgical
    from suture.tasks.policy import load_policy
    from suture.tasks.spec import EngineOptions, JobSpec
    from suture.workers.model.client import ModelClient

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
    from suture.workers.runtime.app import MODEL_QUEUE, app

    started = time.perf_counter()
    results = [app.send_task("bench.noop", queue=MODEL_QUEUE) for _ in range(n)]
    for result in results:
        result.get(timeout=120)
    return n / (time.perf_counter() - started)


def bare_model_calls(n: int) -> float:
    """Bare tasks making a first-pass job's model call per second, each sent and its result read back."""
    from suture.workers.runtime.app import MODEL_QUEUE, app

    started = time.perf_counter()
    results = [app.send_task("bench.model_call", args=["full"], queue=MODEL_QUEUE) for _ in range(n)]
    for result in results:
        result.get(timeout=120)
    return n / (time.perf_counter() - started)


def bare_chords(n: int) -> float:
    """Chords of 3 no-ops plus a callback per second."""
    from suture.workers.runtime.app import MODEL_QUEUE, app

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

    from suture.workers.runtime.app import MODEL_QUEUE, app

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
    from suture.workers.producer import enqueue

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
    from suture.config.settings import load_settings

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
    args = parser.parse_args()
    text = report(run(args.jobs, args.slow_jobs, args.concurrency, args.workers, args.slow_in_flight))
    print(text)
    if args.write:
        write_section(TITLE, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
