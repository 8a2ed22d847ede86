"""``suture migrate-queues``: turn suture's classic RabbitMQ queues into quorum queues, messages kept.

For a broker that held classic queues before suture declared quorum ones (``network.amqp_queue_type``). Run
with every worker and producer stopped; it refuses a queue that still has consumers. Safe to run again: a
queue already of the right type is left as it is (docs/operations.md, "RabbitMQ").
"""

from __future__ import annotations

import argparse
from typing import Any

from suture.workers.cli import UsageError


def register(subparsers: Any) -> None:
    """Add ``suture migrate-queues``."""
    parser = subparsers.add_parser(
        "migrate-queues",
        help="turn suture's classic RabbitMQ queues into quorum queues, keeping their messages",
        description="Move each of suture's classic RabbitMQ queues to a quorum queue of the same name "
        "(stop every worker and producer first).",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Migrate every suture queue; 0 when each is of the configured type."""
    from suture.workers.cli.common import settings_from
    from suture.workers.errors import NoBrokerConfigured
    from suture.workers.runtime.amqp_queues import QueueTypeMismatch, migrate
    from suture.workers.runtime.app import ALL_QUEUES, CeleryConfigError, configure

    try:
        app = configure(settings_from(args))
    except (CeleryConfigError, NoBrokerConfigured) as exc:
        raise UsageError(str(exc)) from None
    if not app.conf.task_queues:
        raise UsageError(
            "nothing to migrate: the broker is not RabbitMQ, or network.amqp_queue_type is classic"
        )
    try:
        migrate(app, ALL_QUEUES)
    except QueueTypeMismatch as exc:
        raise UsageError(str(exc)) from None
    return 0
