"""What waits and what runs, for ``suture stats`` and ``GET /v1/stats``: one read, two front ends.

Messages ready in each of suture's queues (from the broker) and the jobs not yet finished, with
how many are past their deadline, and the new jobs waiting for the dispatcher per class (from the job store). The store unreachable raises its
``StoreUnavailable``; the broker unreachable gives ``queues: None`` and the error's type (never its
URL, which may hold a password).
"""

from __future__ import annotations

import time
from typing import Any

from suture.config.settings import Settings
from suture.workers.runtime.app import configure, waiting_messages
from suture.workers.store.job_store import get_store


def service_stats(settings: Settings) -> dict[str, Any]:
    """``{"jobs": {...}, "queues": {queue: ready messages} | None[, "broker_error": ...]}``; ``jobs`` holds
    ``waiting``, the new jobs the dispatcher has not sent yet per class (they are in no queue)."""
    store = get_store(settings)
    jobs: dict[str, Any] = dict(store.watchlist.counts(time.time()))
    jobs["waiting"] = {job_class: sum(per.values()) for job_class, per in store.waiting.counts().items()}
    configure(settings)
    figures: dict[str, Any] = {"jobs": jobs}
    try:
        figures["queues"] = waiting_messages()
    except Exception as exc:  # any broker failure: report it by type, the URL may hold a password
        figures["queues"] = None
        figures["broker_error"] = f"broker unreachable ({type(exc).__name__})"
    return figures
