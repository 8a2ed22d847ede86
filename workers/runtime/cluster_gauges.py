"""The cluster's gauges, read at scrape time: messages waiting per queue, and unfinished jobs.

The same numbers ``suture stats`` prints, as a ``prometheus_client`` collector: every metrics
endpoint shows the same cluster-wide values (aggregate with ``max``, never ``sum``). A broker or store
that cannot be read leaves its gauges out of that scrape (Prometheus shows a gap, not a false 0).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from suture.config.settings import Settings

log = logging.getLogger(__name__)


class ClusterGauges:
    """A custom collector for ``suture_queue_messages{queue}``, ``suture_jobs_unfinished`` and
    past-deadline jobs."""

    NAMES = (
        "suture_queue_messages",
        "suture_jobs_unfinished",
        "suture_jobs_past_deadline",
        "suture_jobs_waiting",
        "suture_jobs_waiting_oldest_seconds",
        "suture_workers_alive",
    )

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def describe(self) -> list[Any]:
        # Nothing described up front: registering must not read the broker.
        return []

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        queues = self._queues()
        if queues is not None:
            family = GaugeMetricFamily(
                "suture_queue_messages", "Messages waiting in a queue", labels=["queue"]
            )
            for queue, count in sorted(queues.items()):
                family.add_metric([queue], count)
            yield family
        counts = self._jobs()
        if counts is not None:
            yield GaugeMetricFamily(
                "suture_jobs_unfinished", "Jobs not finished yet", value=counts["unfinished"]
            )
            yield GaugeMetricFamily(
                "suture_jobs_past_deadline",
                "Unfinished jobs past their deadline",
                value=counts["past_deadline"],
            )
        waiting = self._waiting()
        if waiting is not None:
            family = GaugeMetricFamily(
                "suture_jobs_waiting", "New jobs the dispatcher has not sent yet", labels=["priority"]
            )
            for job_class, count in waiting.items():
                family.add_metric([job_class], count)
            yield family
        yield from self._backlog()

    def _backlog(self) -> Iterator[Any]:
        """How old the oldest waiting job of each class is (0: none waits), and how many workers beat
        lately."""
        from prometheus_client.core import GaugeMetricFamily

        from suture.workers.store.job_store import get_store
        from suture.workers.store.watchlist import WORKER_SILENT_BEATS

        now = time.time()
        silent_s = WORKER_SILENT_BEATS * self._settings.worker.watchdog_interval_s
        try:
            store = get_store(self._settings)
            oldest = store.waiting.oldest_created()
            alive = store.watchlist.live_workers(now, silent_s)
        except Exception as exc:  # the store is down: no backlog gauges this scrape
            log.info("metrics: cannot read the backlog: %s", type(exc).__name__)
            return
        family = GaugeMetricFamily(
            "suture_jobs_waiting_oldest_seconds",
            "Age of the oldest new job the dispatcher has not sent yet (0: none waits)",
            labels=["priority"],
        )
        for job_class, created_s in oldest.items():
            family.add_metric([job_class], max(0.0, now - created_s) if created_s is not None else 0.0)
        yield family
        yield GaugeMetricFamily(
            "suture_workers_alive", f"Workers whose clock beat in the last {silent_s:g} s", value=alive
        )

    def _queues(self) -> dict[str, int] | None:
        from suture.workers.runtime.app import configure, waiting_messages

        try:
            configure(self._settings)
            return waiting_messages()
        except Exception as exc:  # the broker is down: no queue gauges this scrape
            log.info("metrics: cannot read the queues: %s", type(exc).__name__)
            return None

    def _jobs(self) -> dict[str, int] | None:
        from suture.workers.store.job_store import get_store

        try:
            return get_store(self._settings).watchlist.counts(time.time())
        except Exception as exc:  # the store is down: no job gauges this scrape
            log.info("metrics: cannot read the job store: %s", type(exc).__name__)
            return None

    def _waiting(self) -> dict[str, int] | None:
        from suture.workers.store.job_store import get_store

        try:
            counts = get_store(self._settings).waiting.counts()
        except Exception as exc:  # the store is down: no waiting gauge this scrape
            log.info("metrics: cannot read the waiting jobs: %s", type(exc).__name__)
            return None
        return {job_class: sum(per.values()) for job_class, per in counts.items()}
