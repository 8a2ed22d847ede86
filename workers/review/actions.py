"""A reviewer's conclusions: accept a soft-delivered quiz as it is, or cancel it.

Accept: the job becomes ``delivered`` with ``reviewed: true`` in its result. Cancel: it becomes
``cancelled`` (its output withdrawn, the trace kept). Resume with feedback is the producer's
(``suture.workers.producer.resume``). The job's callback, if it has one, is owed again for the new
result (tag ``<round>-reviewed``, so ``webhook-id`` is ``<job id>_<round>-reviewed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from suture.config.settings import Settings
from suture.workers.errors import NotResumable
from suture.workers.idempotency import check_actor
from suture.workers.producer import publish
from suture.workers.store.job_store import get_store
from suture.workers.store.outbox import Pending
from suture.workers.webhooks.sender import owe
from suture.workers.webhooks.targets import is_url

ACCEPT_REASON = "accepted as is by a reviewer"
CANCEL_REASON = "cancelled by a reviewer"


def accept(
    job_id: str,
    *,
    settings: Settings,
    note: str | None = None,
    tenant: str | None = None,
    operator: bool = False,
) -> dict[str, Any]:
    """Deliver the soft-delivered result as it is; returns the new result.

    Raises NotResumable (the job is not soft-delivered), JobNotFound (also for a job ``tenant``, when
    given, may not see) or OperatorJob (given ``tenant``, for a job enqueued without one):
    ``suture.workers.idempotency.check_actor``.
    """
    reason = ACCEPT_REASON + (f": {note.strip()[:500]}" if note and note.strip() else "")
    change = {"status": "delivered", "reviewed": True, "reason": reason}
    return _conclude(job_id, settings, change, ("accept", "accepted"), tenant, operator)


def dismiss(
    job_id: str, *, settings: Settings, tenant: str | None = None, operator: bool = False
) -> dict[str, Any]:
    """Cancel a soft-delivered job: its output is withdrawn; returns the new result (raises as ``accept``)."""
    change = {"status": "cancelled", "reviewed": True, "reason": CANCEL_REASON, "output": None}
    return _conclude(job_id, settings, change, ("cancel", "cancelled"), tenant, operator)


def _conclude(
    job_id: str,
    settings: Settings,
    change: dict[str, Any],
    verbs: tuple[str, str],
    tenant: str | None,
    operator: bool,
) -> dict[str, Any]:
    action, verb = verbs
    store = get_store(settings)
    record = store.load(job_id)
    check_actor(job_id, record.tenant, tenant, action, operator=operator)
    if record.status != "soft_delivered" or record.result is None:
        raise NotResumable(job_id, record.status, action=verb)
    result = dict(record.result) | change
    if not store.conclude_review(job_id, record.round, result):
        raise NotResumable(job_id, store.status(job_id), action=verb)
    callback = record.job_spec.callback
    if callback and is_url(str(callback)):
        owe(
            store,
            Pending(job_id, f"{record.round}-reviewed"),
            _publisher(settings),
            lease_s=settings.webhook.pickup_lease_s,
        )
    return result


def _publisher(settings: Settings) -> Callable[[str, str], None]:
    return lambda job_id, tag: publish(settings, "suture.callback", [job_id, tag])
