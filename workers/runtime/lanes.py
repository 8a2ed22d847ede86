"""Whether a bulk job's model call goes ahead of the other bulk calls: its tenant runs less than its share.

Each step a bulk job sends is noted (``TenantLoad.touch``); the counts of unfinished jobs per tenant
(read at most every ``REFRESH_S`` per process) decide, with ``dispatch.tenant_weights``, whether the
job's tenant runs less than its weighted share (``suture.tasks.dispatch_order.under_share``). Such a
job's calls go to ``suture.model.bulk.ahead``, which workers read before ``suture.model.bulk``
(``queue_order``): tenant B's 10 jobs arriving beside tenant A's 1,000 running ones go before every
call A has queued, even those queued before B came, and A's calls take every slot B leaves
(work-conserving). A tenant alone, or one at or over its share, uses ``suture.model.bulk``.
Interactive jobs have a queue of their own and no lanes. Counting is best effort: if Redis cannot
say, the call goes to ``suture.model.bulk``.
"""

from __future__ import annotations

import logging
import threading
import time

from suture.config.dispatch_settings import DispatchSettings
from suture.tasks.dispatch_order import PriorityClass, under_share
from suture.workers.errors import StoreUnavailable
from suture.workers.store.tenant_load import TenantLoad

log = logging.getLogger(__name__)

REFRESH_S = 0.5  # how stale a process's view of the counts may be (they move by a job or two in that time)


class Lanes:
    """One process's view of the running bulk jobs per tenant, and whether each job's next call goes ahead."""

    def __init__(self, load: TenantLoad, settings: DispatchSettings) -> None:
        self._load = load
        self._weights = settings.tenant_weights
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, dict[str, int]]] = {}

    def under(self, job_class: PriorityClass, tenant: str) -> bool:
        """True if ``tenant``'s bulk jobs run under its share (its calls go ahead)."""
        if job_class != "bulk":
            return False
        try:
            return under_share(self._running(job_class), tenant, self._weights)
        except StoreUnavailable as exc:
            log.info("tenant load unknown (%s): bulk calls go to the common lane", exc)
            return False

    def note(self, job_class: PriorityClass, tenant: str, job_id: str) -> None:
        """Note that bulk job ``job_id`` of ``tenant`` sends a call now (it counts as running)."""
        if job_class != "bulk":
            return
        try:
            self._load.touch(job_class, tenant, job_id, time.time())
        except StoreUnavailable as exc:
            log.info("tenant load not noted (%s)", exc)

    def ahead(self, job_class: PriorityClass, tenant: str | None, job_id: str) -> bool:
        """Note the call, then True if it goes ahead (``tenant`` None: unknown, never ahead)."""
        if tenant is None:
            return False
        self.note(job_class, tenant, job_id)
        return self.under(job_class, tenant)

    def _running(self, job_class: PriorityClass) -> dict[str, int]:
        now = time.time()
        with self._lock:
            seen = self._seen.get(job_class)
            if seen is not None and now - seen[0] < REFRESH_S:
                return seen[1]
        running = self._load.running(job_class, now)
        with self._lock:
            self._seen[job_class] = (now, running)
        return running
