"""``suture worker``: a Celery worker with suture's settings (same as ``celery -A workers worker``).

Defaults suit model calls: the threads pool (calls are IO-bound, so one process keeps
``worker.model_concurrency`` calls in flight on a small machine) consuming both queues.
"""

from __future__ import annotations

import argparse
from typing import Any

from workers.cli import UsageError


def register(subparsers: Any) -> None:
    """Add ``suture worker``."""
    parser = subparsers.add_parser("worker", help="run a Celery worker for suture's queues")
    parser.add_argument("--queues", "-Q", default="suture.model,suture.control")
    parser.add_argument("--concurrency", "-c", type=int, help="default: worker.model_concurrency")
    parser.add_argument("--pool", "-P", default="threads", choices=["threads", "prefork", "gevent", "solo"])
    parser.add_argument("--loglevel", "-l", default="INFO")
    parser.add_argument("--hostname", "-n")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Start the worker in this process; returns when it shuts down."""
    from config.settings import ConfigError, load_settings
    from workers.celery_app import CeleryConfigError, configure

    try:
        settings = load_settings(args.config)
        app = configure(settings)
    except (ConfigError, CeleryConfigError) as exc:
        raise UsageError(str(exc)) from None
    concurrency = args.concurrency or settings.worker.model_concurrency
    argv = ["worker", "-Q", args.queues, "-P", args.pool, "-c", str(concurrency), "-l", args.loglevel]
    if args.hostname:
        argv += ["-n", args.hostname]
    app.worker_main(argv)
    return 0
