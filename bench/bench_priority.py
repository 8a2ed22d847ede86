"""Interactive before bulk, tenants by weight, and the throughput the dispatcher costs (issue 20).

``python -m bench.bench_priority [--backlogs 300,3000] [--tenant-a 1000] [--throughput 300]``

On the embedded stack (``LocalStack``: a private Redis, the simulated model at latency scale 0.1 -- a
simulation, not a real model -- and one model worker and one control worker), all in one run:

- alone: an interactive job on an idle cluster (median of 3), the reference;
- behind N: N bulk jobs enqueued, the cluster busy with them, then one interactive job: its time to
  result over its time alone (goal: at most 1.3 x for N = 300 and 3,000);
- tenants: tenant A's 1,000 bulk jobs, then tenant B's 10: B's ten to result over B's ten alone (goal 1.5 x);
- throughput: M bulk jobs to completion, jobs per second, with the dispatcher and with it off
  (``dispatch.enabled: false``: enqueue publishes at once, one FIFO queue, as before), same run (goal: within 5 %);
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
    from suture.workers.runtime.app import waiting_messages
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
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if store.waiting.total() == 0 and sum(waiting_messages().values()) == 0:
            break
        time.sleep(0.2)
    time.sleep(2)  # the tasks in hand finish (their jobs were cancelled: no model call is applied)


def alone(settings: Any, runs: int = 3) -> float:
    return statistics.median(timed(lambda: enqueue_many(settings, 1)) for _ in range(runs))


def behind(settings: Any, backlog_n: int, busy_s: float = 5.0) -> dict[str, Any]:
    backlog = enqueue_many(settings, backlog_n, priority="bulk")
    time.sleep(busy_s)
    done_before = sum(h.done() for h in backlog)
    seconds = timed(lambda: enqueue_many(settings, 1))
    done_meanwhile = sum(h.done() for h in backlog) - done_before
    drain(settings, backlog)
    return {"backlog": backlog_n, "seconds": round(seconds, 2), "bulk_done_meanwhile": done_meanwhile}


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


def throughput(settings: Any, n: int) -> dict[str, Any]:
    seconds = timed(lambda: enqueue_many(settings, n, priority="bulk"))
    return {"jobs": n, "seconds": round(seconds, 2), "jobs_per_s": round(n / seconds, 2)}


def run_mode(dispatch: bool, args: argparse.Namespace) -> dict[str, Any]:
    from suture.workers.local.stack import LocalStack

    stack = LocalStack(stack_settings(dispatch, args), workers=1)
    settings = stack.start()
    try:
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
        figures["throughput"] = throughput(settings, args.throughput)
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
    parser.add_argument("--throughput", type=int, default=300, help="bulk jobs run to completion per mode")
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
        "throughput_within_5_percent": abs(on / off - 1) <= 0.05,
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
