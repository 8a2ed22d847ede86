"""Interactive before bulk, tenants by weight, and the throughput the dispatcher costs (issue 20).

``python -m bench.bench_priority [--backlogs 300,3000] [--tenant-a 1000] [--throughput 300]``

On the embedded stack (``LocalStack``: a private Redis, the simulated model at latency scale 0.1 -- a
simulation, not a real model -- and one model worker and one control worker), all in one run:

- alone: 5 interactive jobs enqueued together on an idle cluster (after 5 not counted, which pay each
  process's imports and first connections), the median of their times, the reference;
- behind N: N bulk jobs enqueued, the cluster busy with them, then 5 interactive jobs together: the
  median of their times to result over the same alone (goal: at most 1.3 x for N = 300 and 3,000);
- tenants: tenant A's 1,000 bulk jobs, then tenant B's 10: B's ten to result over B's ten alone (goal 1.5 x);
- throughput: M bulk jobs to completion, jobs per second (median of 3 rounds), with the dispatcher and with it
off
  (``dispatch.enabled: false``: enqueue publishes at once, one FIFO queue, as before), same run (goal: at most
  5 % below FIFO);
- FIFO's interactive job behind the smallest backlog, for comparison.

What is left of a backlog once its figure is taken is cancelled (each cancel stores a result; the
dispatcher then sends and the worker drops the leftovers), and the queues drain before the next scenario.
Figures go to stdout as JSON and to bench/baselines/priority.json; docs/benchmarks.md quotes them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LATENCY_SCALE = 0.1
QUESTIONS = 15
INTERACTIVE_JOBS = 5  # enqueued together, alone and behind each backlog: their median time is compared
DOCUMENT = (REPO / "examples" / "photosynthesis.md").read_text()


def stack_settings(dispatch: bool, args: argparse.Namespace) -> Any:
    """Settings for the embedded stack (the workers inherit this process's environment)."""
    os.environ["SUTURE_DISPATCH__ENABLED"] = "true" if dispatch else "false"
    for name, value in (("MAX_IN_FLIGHT", args.max_in_flight), ("READY_TARGET", args.ready_target)):
        os.environ.pop(f"SUTURE_DISPATCH__{name}", None)
        if value:
            os.environ[f"SUTURE_DISPATCH__{name}"] = str(value)
    os.environ["SUTURE_SIMULATOR__LATENCY_SCALE"] = str(LATENCY_SCALE)
    for key in ("SUTURE_BROKER_URL", "SUTURE_REDIS_URL", "SUTURE_RESULT_BACKEND", "OPENAI_BASE_URL"):
        os.environ.pop(key, None)
    from suture.config.settings import load_settings

    return load_settings()


def enqueue_many(settings: Any, n: int, **options: Any) -> list[Any]:
    from suture.workers.producer import enqueue

    def one(_: int) -> Any:
        return enqueue("quiz", DOCUMENT, questions=QUESTIONS, settings=settings, **options)

    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(one, range(n)))


def timed(handles: Callable[[], list[Any]]) -> float:
    """Seconds from enqueueing ``handles()`` to every one's result."""
    started = time.monotonic()
    for handle in handles():
        handle.result(timeout_s=3600)
    return time.monotonic() - started


def drain(settings: Any, backlog: list[Any]) -> None:
    """Cancel what is left of a backlog and wait until nothing is queued or running."""
    from suture.workers.producer import cancel
    from suture.workers.runtime.app import configure, waiting_messages
    from suture.workers.runtime.metrics import metrics
    from suture.workers.store.job_store import get_store

    metrics()  # created once before the threads cancel (its cache is not thread-safe: a race registers twice)
    with ThreadPoolExecutor(16) as pool:
        list(
            pool.map(
                lambda handle: cancel(handle.id, "bench: backlog no longer needed", settings=settings),
                backlog,
            )
        )
    store = get_store(settings)
    configure(settings)  # waiting_messages reads the app's broker: this stack's, not the default's
    deadline = time.monotonic() + 600
    reported_s = time.monotonic()
    while time.monotonic() < deadline:
        held, queued = store.waiting.total(), {q: n for q, n in waiting_messages().items() if n}
        if held == 0 and not queued:
            break
        if time.monotonic() - reported_s > 30:  # say what is still waiting, rather than hang silently
            print(f"drain: still {held} held by the dispatcher, queued {queued}", file=sys.stderr, flush=True)
            reported_s = time.monotonic()
        time.sleep(0.2)
    time.sleep(2)  # the tasks in hand finish (their jobs were cancelled: no model call is applied)


def each_timed(settings: Any, n: int) -> list[float]:
    """Seconds from enqueue to result of each of ``n`` interactive jobs enqueued together.

    Several jobs, not one: a simulated job's own time varies (how many repair rounds it needs, a
    "slow" reply now and then), so one job's time says more about that job than about the queue.
    """
    started = time.monotonic()
    handles = enqueue_many(settings, n)

    def wait(handle: Any) -> float:
        handle.result(timeout_s=3600)
        return time.monotonic() - started

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(wait, handles))


def alone(settings: Any, jobs: int = INTERACTIVE_JOBS) -> float:
    return statistics.median(each_timed(settings, jobs))


def behind(settings: Any, backlog_n: int, busy_s: float = 5.0) -> dict[str, Any]:
    backlog = enqueue_many(settings, backlog_n, priority="bulk")
    time.sleep(busy_s)
    done_before = sum(h.done() for h in backlog)
    times = each_timed(settings, INTERACTIVE_JOBS)
    done_meanwhile = sum(h.done() for h in backlog) - done_before
    drain(settings, backlog)
    return {
        "backlog": backlog_n,
        "seconds": round(statistics.median(times), 2),
        "slowest_s": round(max(times), 2),
        "bulk_done_meanwhile": done_meanwhile,
    }


def tenants(settings: Any, a_jobs: int, b_jobs: int = 10, busy_s: float = 5.0) -> dict[str, Any]:
    b_alone = timed(lambda: enqueue_many(settings, b_jobs, tenant="b", priority="bulk"))
    backlog = enqueue_many(settings, a_jobs, tenant="a", priority="bulk")
    time.sleep(busy_s)
    b_behind = timed(lambda: enqueue_many(settings, b_jobs, tenant="b", priority="bulk"))
    drain(settings, backlog)
    ratio = b_behind / b_alone
    return {
        "a_jobs": a_jobs,
        "b_jobs": b_jobs,
        "b_alone_s": round(b_alone, 2),
        "b_behind_s": round(b_behind, 2),
        "ratio": round(ratio, 2),
    }


def throughput(settings: Any, n: int, rounds: int) -> dict[str, Any]:
    """``rounds`` batches of ``n`` bulk jobs, one after another: jobs per second of each, and their median
    (a batch's rate moves by several per cent from one to the next on this machine)."""
    rates = []
    for _ in range(rounds):
        rates.append(round(n / timed(lambda: enqueue_many(settings, n, priority="bulk")), 2))
    return {"jobs": n, "rounds": rates, "jobs_per_s": statistics.median(rates)}


def run_mode(dispatch: bool, args: argparse.Namespace) -> dict[str, Any]:
    from suture.workers.local.stack import LocalStack

    stack = LocalStack(stack_settings(dispatch, args), workers=1)
    settings = stack.start()
    try:
        alone(settings)  # warm-up, not counted: the first jobs pay each process's imports and connections
        figures: dict[str, Any] = {"alone_s": round(alone(settings), 2)}
        backlogs = args.backlogs if dispatch else args.backlogs[:1]
        figures["behind"] = []
        for n in backlogs:
            entry = behind(settings, n)
            entry["ratio"] = round(entry["seconds"] / figures["alone_s"], 2)
            figures["behind"].append(entry)
            print(json.dumps({"dispatch": dispatch, **entry}), flush=True)
        if dispatch and args.tenant_a:
            figures["tenants"] = tenants(settings, args.tenant_a)
            print(json.dumps({"dispatch": dispatch, "tenants": figures["tenants"]}), flush=True)
        figures["throughput"] = throughput(settings, args.throughput, args.rounds)
        print(json.dumps({"dispatch": dispatch, "throughput": figures["throughput"]}), flush=True)
        return figures
    finally:
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_priority")
    parser.add_argument(
        "--backlogs", default="300,3000", help="bulk backlogs an interactive job is sent behind"
    )
    parser.add_argument(
        "--tenant-a", type=int, default=1000, help="tenant A's bulk jobs before B's 10 (0: skip)"
    )
    parser.add_argument("--throughput", type=int, default=300, help="bulk jobs run to completion per round")
    parser.add_argument(
        "--rounds", type=int, default=3, help="throughput rounds per mode (their median counts)"
    )
    parser.add_argument("--max-in-flight", type=int, default=0, help="dispatch.max_in_flight (0: none)")
    parser.add_argument("--ready-target", type=int, default=0, help="dispatch.ready_target (0: the default)")
    parser.add_argument(
        "--dispatcher-only", action="store_true", help="skip the FIFO run (exploring settings)"
    )
    parser.add_argument("--out", default=str(REPO / "bench" / "baselines" / "priority.json"))
    args = parser.parse_args(argv)
    args.backlogs = [int(n) for n in str(args.backlogs).split(",") if n]
    report: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "settings": {
            "latency_scale": LATENCY_SCALE,
            "questions": QUESTIONS,
            "model": "simulator (simulated, not a real model)",
        },
        "dispatcher": run_mode(True, args),
    }
    report["settings"]["max_in_flight"] = args.max_in_flight or None
    report["settings"]["ready_target"] = args.ready_target or "default"
    if args.dispatcher_only:
        print(json.dumps(report, indent=2))
        return 0
    report["fifo"] = run_mode(False, args)
    on, off = report["dispatcher"]["throughput"]["jobs_per_s"], report["fifo"]["throughput"]["jobs_per_s"]
    report["throughput_vs_fifo"] = round(on / off, 3)
    report["goals"] = {
        "interactive_behind_backlogs_le_1_3": all(e["ratio"] <= 1.3 for e in report["dispatcher"]["behind"]),
        "tenant_b_le_1_5": report["dispatcher"].get("tenants", {}).get("ratio", 99) <= 1.5,
        # The goal is what the dispatcher may cost: at most 5 % below FIFO (faster is no miss).
        "throughput_at_most_5_percent_below_fifo": on / off >= 0.95,
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
