"""Benchmark: suture's Celery flow against bare Celery, measured in the same run on the same broker.

    .venv/bin/python -m bench.bench_celery [--jobs 300] [--slow-jobs 1000] [--write]

Three comparisons, each with real worker processes (threads pool) on a private redis-server and a
scripted OpenAI-compatible model server in a process of its own (a simulation; see
tests/fixtures/scripted_model.py), with the CPU every process spent per job:
1. first-pass jobs/s with an instant model vs bare no-op task round trips/s;
2. jobs with one surgical round of 3 slices vs a bare chord of 3 no-ops plus a callback;
3. 1,000 jobs with a 1.0 s model latency vs the ideal 1000 x 1.0 s / calls in flight.
``--write`` replaces the "## Distributed execution" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from celery import chord

from tests.fixtures.redis_server import RedisServer, free_port
from tests.fixtures.scripted_model import document, start_scripted_model

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Distributed execution"
ROUNDS = 5

if os.environ.get("SUTURE_BENCH_WORKER"):  # imported by `celery -A bench.bench_celery worker`
    from workers.celery import app

    @app.task(name="bench.noop", ignore_result=False)
    def noop(*_: Any) -> None:
        """A bare no-op task (the baseline)."""

    @app.task(name="bench.callback", ignore_result=False)
    def callback(results: list[Any]) -> int:
        """A bare chord body."""
        return len(results)


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

    def pids(self) -> list[int]:
        """Every process of the measurement: workers, Redis, the model server and this producer."""
        pids = [p.pid for p in self.workers] + [os.getpid()]
        pids += [p.pid for p in (self.redis.process, self.model.process if self.model else None) if p]
        return pids

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


def measured(bench: Bench, rate_of: Any, jobs: int) -> tuple[Any, float]:
    """Run one measurement; returns its outcome and the CPU ms per job all processes spent on it."""
    pids = bench.pids()
    before = cpu_s(pids)
    outcome = rate_of()
    return outcome, (cpu_s(pids) - before) * 1000 / jobs


def bare_round_trips(n: int) -> float:
    """No-op tasks per second, each sent and its result read back."""
    from workers.celery_app import MODEL_QUEUE, app

    started = time.perf_counter()
    results = [app.send_task("bench.noop", queue=MODEL_QUEUE) for _ in range(n)]
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


def suture_jobs(n: int, settings: Any, questions: int) -> tuple[float, list[dict[str, Any]]]:
    """suture jobs per second, from enqueue to the stored result."""
    from workers.producer import enqueue

    started = time.perf_counter()
    handles = [enqueue("quiz", document(questions), questions=questions, settings=settings) for _ in range(n)]
    results = [h.result(timeout_s=600) for h in handles]
    return n / (time.perf_counter() - started), results


def run(jobs: int, slow_jobs: int, concurrency: int, workers: int, slow_in_flight: int) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "jobs": jobs,
        "slow_jobs": slow_jobs,
        "concurrency": concurrency,
        "workers": workers,
    }
    figures["load_before"] = os.getloadavg()[0]
    figures["slow_concurrency"] = -(-slow_in_flight // workers)
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp), concurrency=concurrency, workers=workers)
        try:
            settings = bench.start(ModelProcess(questions=4))
            bare_round_trips(50)  # warm-up: connections, imports
            suture_jobs(20, settings, 4)
            # Interleaved repeats, median of each: the 2-core machine is noisy run to run.
            bare, ours, bare_cpu, our_cpu = [], [], [], []
            for _ in range(ROUNDS):
                rate, cpu_ms = measured(bench, lambda: bare_round_trips(jobs), jobs)
                bare.append(rate)
                bare_cpu.append(cpu_ms)
                (jps, first), cpu_ms = measured(bench, lambda: suture_jobs(jobs, settings, 4), jobs)
                ours.append(jps)
                our_cpu.append(cpu_ms)
                assert all(r["status"] == "delivered" for r in first)
            figures["bare_rps"], figures["first_pass_jps"] = median(bare), median(ours)
            figures["bare_cpu_ms"], figures["first_pass_cpu_ms"] = median(bare_cpu), median(our_cpu)

            settings = bench.start(ModelProcess(questions=4, imbalanced=3))
            bare_chords(20)
            suture_jobs(20, settings, 4)
            bare, ours, bare_cpu, our_cpu = [], [], [], []
            for _ in range(ROUNDS):
                rate, cpu_ms = measured(bench, lambda: bare_chords(jobs), jobs)
                bare.append(rate)
                bare_cpu.append(cpu_ms)
                (jps, surgical), cpu_ms = measured(bench, lambda: suture_jobs(jobs, settings, 4), jobs)
                ours.append(jps)
                our_cpu.append(cpu_ms)
                assert all([a["mode"] for a in r["attempts"]] == ["full", "surgical"] for r in surgical)
            figures["chord_ps"], figures["surgical_jps"] = median(bare), median(ours)
            figures["chord_cpu_ms"], figures["surgical_cpu_ms"] = median(bare_cpu), median(our_cpu)

            slow = ModelProcess(questions=4, latency_s=1.0)
            settings = bench.start(slow, concurrency=figures["slow_concurrency"])
            suture_jobs(slow_in_flight, settings, 4)  # warm-up: one call per thread opens its connection
            started = time.perf_counter()
            figures["slow_jps"], _ = suture_jobs(slow_jobs, settings, 4)
            figures["slow_elapsed_s"] = time.perf_counter() - started
            bench.stop_workers()
            figures["slow_in_flight"] = slow.in_flight["max"]
        finally:
            bench.close()
    figures["load_after"] = os.getloadavg()[0]
    return figures


def report(f: dict[str, Any]) -> str:
    ratio1 = f["first_pass_jps"] / f["bare_rps"]
    ratio2 = f["surgical_jps"] / f["chord_ps"]
    ideal_s = f["slow_jobs"] * 1.0 / f["slow_in_flight"]
    limit_s = 1.25 * ideal_s
    slow_met = f["slow_elapsed_s"] <= limit_s and f["slow_in_flight"] >= 100
    lines = [
        SECTION,
        "",
        f"`python -m bench.bench_celery` on {platform.node()} ({os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()}); {f['workers']} Celery worker processes, threads "
        f"pool, {f['concurrency']} threads each ({f['slow_concurrency']} each for the 1 s latency run), "
        "queues suture.model + suture.control, suture's own settings (late acks, prefetch 1, task events "
        "and task-sent events on) for both sides; a private redis-server as broker, result backend and job "
        "store; the model is a scripted OpenAI-compatible server in its own process (a simulation, not a "
        "real LLM), called through suture's model client. Jobs: 4-question quizzes. Rates are the median "
        f"of {ROUNDS} interleaved repeats, after a warm-up. 1-minute load average before the run "
        f"{f['load_before']:.2f}, after {f['load_after']:.2f} (other work on this shared machine skews both "
        "sides; compare ratios, not rates).",
        "",
        "| measurement | suture | bare Celery (same run, same broker) | ratio | goal |",
        "|---|---|---|---|---|",
        f"| first pass, instant model ({f['jobs']} jobs) | {f['first_pass_jps']:.1f} jobs/s "
        f"| {f['bare_rps']:.1f} no-op round trips/s | {ratio1:.2f} | >= 0.7 {_verdict(ratio1 >= 0.7)} |",
        f"| one surgical round of 3 slices ({f['jobs']} jobs) | {f['surgical_jps']:.1f} jobs/s "
        f"| {f['chord_ps']:.1f} chords (3 no-ops + callback)/s | {ratio2:.2f} "
        f"| >= 0.7 {_verdict(ratio2 >= 0.7)} |",
        f"| {f['slow_jobs']} jobs, 1.0 s model latency | {f['slow_elapsed_s']:.1f} s "
        f"(max {f['slow_in_flight']} calls in flight) | ideal {ideal_s:.1f} s | {f['slow_elapsed_s'] / ideal_s:.2f} "
        f"| <= 1.25 x ideal ({limit_s:.1f} s) with >= 100 in flight {_verdict(slow_met)} |",
        "",
        "CPU per job, all processes of the run together (workers, Redis, model server, producer; median "
        "of the same repeats):",
        "",
        "| measurement | suture | bare Celery | bare / suture |",
        "|---|---|---|---|",
        f"| first pass | {f['first_pass_cpu_ms']:.2f} ms | {f['bare_cpu_ms']:.2f} ms "
        f"| {f['bare_cpu_ms'] / f['first_pass_cpu_ms']:.2f} |",
        f"| surgical round | {f['surgical_cpu_ms']:.2f} ms | {f['chord_cpu_ms']:.2f} ms "
        f"| {f['chord_cpu_ms'] / f['surgical_cpu_ms']:.2f} |",
        "",
        "What bounds the instant-model ratios: every process shares the 2 cores, so once both sides "
        "are CPU-bound the rate ratio converges to the CPU-per-job ratio above, the steadier figure: "
        "the rate ratios move by 0.1 or more from run to run with the load of other work on this "
        "shared machine (the latency-bound bare round trips suffer more from it). A suture first-pass job is the same one Celery task as the "
        "baseline plus a real HTTP round trip through the openai SDK to the model server (client and "
        "server CPU), contract validation and 2 Redis round trips (one Lua script reads the job and "
        "counts the delivery; one applies the attempt and stores the result atomically); a surgical job "
        "is 5 tasks (attempt, 3 slices, merge) and 4 model calls against the baseline's 4 no-op tasks. "
        "The baselines make no model call, so the ratios price suture's whole per-job cost, model "
        "call included, not only its Celery overhead. Removed so far (profiled with py-spy and "
        "cProfile): pydantic JSON-schema generation on every call (now cached per output model and "
        "pointer), the SDK's per-call type walk of messages and schema (now the SDK's plain `post`), "
        "a result-channel subscription Celery's send_task made for every suture task (now "
        "`ignore_result`), separate Redis round trips for load/count/action/slice reads and for "
        "save-then-deliver (now one Lua script each), a second load and validation of the state to "
        "deliver, a progress event just before task-succeeded, and one pipeline per publish plus its "
        "task-sent event (kombu publish batches). "
        "The 1 s run uses 100 threads in all (the goal's minimum in flight; 1000 / 100 is a whole "
        "number of 1 s rounds, whereas e.g. 120 needs ceil(1000 / 120) = 9 rounds against an ideal of "
        "8.3) and warms every thread's connection first, as the other runs warm up; the scripted "
        "server's listen backlog is raised in the bench (the fixture sets it after listening, so a "
        "burst of new connections lost SYNs and waited 1 s for the retransmit).",
        "",
    ]
    return "\n".join(lines)


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def write_section(text: str, path: Path = REPO / "docs" / "benchmarks.md") -> None:
    """Replace this benchmark's own section of docs/benchmarks.md (other sections untouched)."""
    current = path.read_text() if path.exists() else "# Benchmarks\n\n"
    start = current.find(SECTION)
    if start < 0:
        updated = current.rstrip("\n") + "\n\n" + text
    else:
        end = current.find("\n## ", start + len(SECTION))
        updated = current[:start] + text + (current[end + 1 :] if end >= 0 else "")
    path.write_text(updated)


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
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
