"""What waits and what runs, for ``suture stats`` and ``GET /v1/stats``: one read, two front ends.

Messages ready in each of suture's queues (from the broker) and the jobs not yet finished, with
how many are past their deadline, and the new jobs waiting for the dispatcher per class (from the job store);
per limited model, tokens served and metered and the calls deferred for the budget (``models``). The store
unreachable raises its
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
    figures: dict[str, Any] = {"jobs": jobs, "models": model_stats(settings, store.redis)}
    try:
        figures["queues"] = waiting_messages()
    except Exception as exc:  # any broker failure: report it by type, the URL may hold a password
        figures["queues"] = None
        figures["broker_error"] = f"broker unreachable ({type(exc).__name__})"
    return figures


def model_stats(settings: Settings, client: Any) -> dict[str, dict[str, Any]]:
    """Per limited model (``limits``): calls, served and metered tokens and their ratio, calls deferred for
    the
    budget and their total wait, 429s; counted since the model was last idle for a day."""
    from suture.workers.model.budget import Budget

    out: dict[str, dict[str, Any]] = {}
    for model, counts in Budget(client, settings.limits).stats().items():
        metered = counts["metered_tokens"]
        out[model] = {
            "calls": int(counts["calls"]),
            "served_tokens": int(counts["served_tokens"]),
            "metered_tokens": int(metered),
            "served_per_metered": round(counts["served_tokens"] / metered, 3) if metered else None,
            "deferred_for_budget": int(counts["deferred_budget"]),
            "deferred_for_budget_s": round(counts["deferred_budget_s"], 1),
            "rate_limited": int(counts["rate_limited"]),
        }
    return out
