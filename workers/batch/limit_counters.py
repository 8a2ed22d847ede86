"""The cluster's per-model budget counters over one batch run: calls deferred for the budget, their wait,
429s.

Read from Redis (``Budget.stats``) when the run starts and whenever its report is written; the
difference is this run's (on a shared cluster, other producers' calls in the same minutes count too).
Best-effort: a Redis error leaves the report without them.
"""

from __future__ import annotations

import logging

import redis

from suture.config.settings import Settings
from suture.workers.model.budget import Budget
from suture.workers.store.job_store import get_store

log = logging.getLogger(__name__)


class LimitCounters:
    """Snapshots the per-model counters at the start; ``since()`` is what they grew by."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._start = self._read()

    def _read(self) -> dict[str, dict[str, float]] | None:
        if not self._settings.limits:
            return None
        try:
            return Budget(get_store(self._settings).redis, self._settings.limits).stats()
        except (redis.exceptions.RedisError, OSError) as exc:
            log.info("budget counters not read: %s", type(exc).__name__)
            return None

    def since(self) -> dict[str, dict[str, float]] | None:
        """Per model, each counter's growth since the run started (None: no limits, or Redis unreadable)."""
        now = self._read()
        if now is None:
            return None
        start = self._start or {}
        return {
            model: {field: value - start.get(model, {}).get(field, 0.0) for field, value in counts.items()}
            for model, counts in now.items()
        }
