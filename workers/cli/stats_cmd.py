"""``suture stats``: what waits and what runs, as JSON, for an operator or an autoscaler.

Messages ready in each of suture's queues (read from the broker) and the jobs not yet finished,
with how many are past their deadline (read from the job store). The store unreachable is an
error (exit 2, one line); the broker unreachable still prints the store's figures, with
``"queues": null`` and the error's type (never its URL), and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from workers.cli import UsageError


def register(subparsers: Any) -> None:
    """Add the ``stats`` subcommand."""
    parser = subparsers.add_parser(
        "stats",
        help="print waiting messages per queue and unfinished jobs as JSON",
        description="Messages ready in suture's queues and jobs not yet finished (with how many are overdue).",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the figures; 1 if the broker cannot be read, 2 if the store cannot."""
    from config.settings import ConfigError, load_settings
    from workers.celery_app import CeleryConfigError, configure, waiting_messages
    from workers.store import StoreError, get_store

    try:
        settings = load_settings(args.config)
        jobs = get_store(settings).watchlist.counts(time.time())
        configure(settings)
    except (ConfigError, CeleryConfigError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    figures: dict[str, Any] = {"jobs": jobs}
    try:
        figures["queues"] = waiting_messages()
    except Exception as exc:  # any broker failure: report it by type, the URL may hold a password
        figures["queues"] = None
        figures["broker_error"] = f"broker unreachable ({type(exc).__name__})"
    print(json.dumps(figures, indent=2))
    if figures["queues"] is None:
        print(f"suture: {figures['broker_error']}", file=sys.stderr)
        return 1
    return 0
