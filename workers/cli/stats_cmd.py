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
from typing import Any

from suture.workers.cli import UsageError


def register(subparsers: Any) -> None:
    """Add the ``stats`` subcommand."""
    parser = subparsers.add_parser(
        "stats",
        help="print waiting messages per queue and unfinished jobs as JSON",
        description="Messages ready in suture's queues and jobs not yet finished (with how many are "
        "overdue).",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the figures; 1 if the broker cannot be read, 2 if the store cannot."""
    from suture.config.settings import ConfigError
    from suture.workers.cli.common import producer_settings
    from suture.workers.errors import StoreError
    from suture.workers.runtime.app import CeleryConfigError
    from suture.workers.runtime.stats import service_stats

    settings = producer_settings(args)  # configured, else the running `suture up`
    try:
        figures = service_stats(settings)
    except (ConfigError, CeleryConfigError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(figures, indent=2))
    if figures["queues"] is None:
        print(f"suture: {figures['broker_error']}", file=sys.stderr)
        return 1
    return 0
