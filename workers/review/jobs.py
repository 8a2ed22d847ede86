"""Jobs from the store as review views: one job's page, and the soft-delivered jobs waiting for a person."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from suture.tasks.job import JobState
from suture.workers.errors import JobNotFound
from suture.workers.idempotency import check_owner
from suture.workers.review.view import ReviewView, build_view
from suture.workers.store.job_store import JobRecord, JobStore


@dataclass(frozen=True)
class Waiting:
    """A soft-delivered job on the review list, with its view and when it was delivered."""

    view: ReviewView
    delivered_s: float

    @property
    def when(self) -> str:
        return datetime.fromtimestamp(self.delivered_s, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def job_view(
    store: JobStore, job_id: str, tenant: str | None = None, *, operator: bool = False
) -> ReviewView | None:
    """The job's page as its latest result shows it, or None while it has no result; raises JobNotFound
    (also for a job ``tenant``, when given, may not see: ``suture.workers.idempotency.check_owner``)."""
    return record_view(readable_job(store, job_id, tenant, operator=operator))


def readable_job(store: JobStore, job_id: str, tenant: str | None, *, operator: bool = False) -> JobRecord:
    """The stored job, if ``tenant`` (None: a trusted reader) may see it; else JobNotFound."""
    record = store.load(job_id)
    check_owner(job_id, record.tenant, tenant, operator=operator)
    return record


def record_view(
    record: JobRecord, result: dict[str, Any] | None = None, *, source: dict[str, Any] | None = None
) -> ReviewView | None:
    """A stored job's view: its result (or ``result``), its whole trace (every round), its document."""
    result = result if result is not None else record.result
    if result is None:
        return None
    attempts = None
    if record.state:
        attempts = [a.public() for a in JobState.model_validate(record.state).attempts]
    text = record.job_spec.source  # the stored spec, read through JobSpec (any spec version)
    return build_view(result, text, attempts=attempts, source=source)


def waiting(
    store: JobStore, limit: int = 200, tenant: str | None = None, *, operator: bool = False
) -> list[Waiting]:
    """Soft-delivered jobs waiting for a person, newest first (jobs expired from the store dropped).

    No ``tenant``: every job's. Given one, its own jobs (and with ``operator`` those enqueued without a
    tenant), read from its own review list in the store: other tenants' jobs, however many, never push
    its own out of the window.
    """
    tenants = None if tenant is None else [tenant, *([None] if operator else [])]
    found: list[Waiting] = []
    for job_id, delivered_s in store.waiting_review(limit, tenants):
        try:
            record = store.load(job_id)
        except JobNotFound:
            store.forget_review(job_id)
            continue
        try:
            check_owner(job_id, record.tenant, tenant, operator=operator)
        except JobNotFound:  # the lists hold only the caller's; never show another's, whatever they hold
            continue
        view = record_view(record)
        if view is not None and view.status == "soft_delivered":
            found.append(Waiting(view, delivered_s))
    return found
