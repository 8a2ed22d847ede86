"""``suture worker``: a Celery worker with suture's settings (same as ``celery -A suture.workers worker``).

Defaults suit model calls: the threads pool (calls are IO-bound, so one process keeps
``worker.model_concurrency`` calls in flight on a small machine) consuming every queue.
``--metrics-port N`` serves the worker's Prometheus metrics at ``http://HOST:N/metrics``
(``worker.metrics_port``; docs/operations.md).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from suture.workers.cli import UsageError


def register(subparsers: Any) -> None:
    """Add ``suture worker``."""
    parser = subparsers.add_parser("worker", help="run a Celery worker for suture's queues")
    parser.add_argument(
        "--queues",
        "-Q",
        default="suture.model,suture.model.bulk.ahead,suture.model.bulk,suture.control,suture.callbacks",
    )
    parser.add_argument("--concurrency", "-c", type=int, help="default: worker.model_concurrency")
    parser.add_argument("--pool", "-P", default="threads", choices=["threads", "prefork", "gevent", "solo"])
    parser.add_argument("--loglevel", "-l", default="INFO")
    parser.add_argument("--hostname", "-n")
    parser.add_argument("--logfile", "-f", help="write the log here instead of standard error")
    parser.add_argument(
        "--without-mingle", action="store_true", help="do not sync state with other workers at start"
    )
    parser.add_argument("--without-gossip", action="store_true", help="do not follow other workers' events")
    parser.add_argument(
        "--metrics-port",
        type=int,
        help="serve Prometheus metrics on this port (default: worker.metrics_port)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Start the worker in this process; returns when it shuts down."""
    from suture.workers.cli.common import settings_from
    from suture.workers.errors import NoBrokerConfigured
    from suture.workers.runtime.amqp_queues import QueueTypeMismatch, check_queue_types
    from suture.workers.runtime.app import CeleryConfigError, configure

    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise UsageError(f"--metrics-port must be a port number (0-65535), got {args.metrics_port}")
    if args.metrics_port is not None:  # the worker reads its settings from the environment
        os.environ["SUTURE_WORKER__METRICS_PORT"] = str(args.metrics_port)
    from suture.workers.local.discovery import resolve_for_worker

    settings = settings_from(args)  # a configured policy that cannot run refuses the worker here
    try:
        app = configure(resolve_for_worker(settings))  # configured, else the running `suture up`
    except (CeleryConfigError, NoBrokerConfigured) as exc:
        raise UsageError(str(exc)) from None
    if app.conf.task_queues:  # RabbitMQ with quorum queues: classic ones of the same names are refused
        try:
            check_queue_types(app, args.queues.split(","))
        except QueueTypeMismatch as exc:
            raise UsageError(str(exc)) from None
    return start_worker(app, args, args.concurrency or settings.worker.model_concurrency)


def start_worker(app: Any, args: argparse.Namespace, concurrency: int) -> int:
    """Run Celery's worker in this process, as ``celery worker`` does, without loading Celery's CLI.

    ``app.worker_main`` goes through Celery's click command line, which imports every subcommand and
    plugin (Flower's, the amqp shell's prompt_toolkit): 0.3 s of CPU at each start for nothing the
    worker uses. The options are the ones that command would pass; the rest come from the app's
    configuration, as there.
    """
    from celery.utils.log import mlevel
    from celery.utils.nodenames import default_nodename, host_format

    worker = app.Worker(
        hostname=host_format(default_nodename(args.hostname)),
        pool_cls=args.pool,
        concurrency=concurrency,
        queues=args.queues,
        loglevel=mlevel(args.loglevel.upper()),
        logfile=args.logfile,
        without_mingle=args.without_mingle,
        without_gossip=args.without_gossip,
    )
    worker.start()
    return int(worker.exitcode or 0)
