"""The watchdog as a Sentry Cron monitor: each sweep checks in, so an operator learns when it stops.

Only the worker that wins an interval's lock sweeps (``suture.workers.runtime.watchdog``), so the
cluster checks in once per interval: ``in_progress`` when a sweep starts, then ``ok`` or ``error``
with its duration. The monitor is created (upserted) from the first check-in's config: an interval
schedule in whole minutes (Sentry's smallest unit), a margin of one schedule, and an issue after two
missed or failed check-ins. Without Sentry the sweep simply runs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

from sentry_sdk.crons import MonitorStatus, capture_checkin

from suture.workers.runtime.sentry import enabled

MONITOR_SLUG = "suture-watchdog"
T = TypeVar("T")


def monitor_config(interval_s: float) -> dict[str, Any]:
    """The monitor's schedule for a watchdog that sweeps every ``interval_s`` seconds."""
    minutes = max(1, math.ceil(interval_s / 60))
    return {
        "schedule": {"type": "interval", "value": minutes, "unit": "minute"},
        "checkin_margin": minutes,
        "max_runtime": max(1, minutes * 2),
        "failure_issue_threshold": 2,
        "recovery_threshold": 1,
    }


def checked_in(sweep: Callable[[], T], *, interval_s: float) -> T:
    """Run ``sweep`` between an ``in_progress`` and an ``ok``/``error`` check-in (just run it without
    Sentry)."""
    if not enabled():
        return sweep()
    config: Any = monitor_config(interval_s)
    check_in_id = capture_checkin(
        monitor_slug=MONITOR_SLUG, status=MonitorStatus.IN_PROGRESS, monitor_config=config
    )
    started = time.monotonic()
    status = MonitorStatus.ERROR
    try:
        result = sweep()
        status = MonitorStatus.OK
        return result
    finally:
        capture_checkin(
            monitor_slug=MONITOR_SLUG,
            check_in_id=check_in_id,
            status=status,
            duration=time.monotonic() - started,
            monitor_config=config,
        )
