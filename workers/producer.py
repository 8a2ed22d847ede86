"""The producer API for web apps and the CLI: ``enqueue()`` a job, follow it with a ``JobHandle``.

Importing this module starts nothing. ``enqueue`` checks the job first (``suture.workers.admission``;
a job no worker could run raises ``InvalidJob`` and nothing is stored), then stores its ``JobSpec``,
its idempotency key and its place on the waiting list of its class and tenant in one Redis script:
the dispatcher (``suture.workers.runtime.feeder``) sends its first attempt. Every error is a
``ProducerError`` of the one hierarchy in ``suture.workers.errors``.

With ``dispatch.enabled: false`` enqueue publishes the first attempt itself (ids only). When that
publish fails, ``enqueue`` raises ``BrokerUnavailable`` and removes the job it stored, with its key,
so a retry starts clean; if the store cannot be reached for that either, the job stays queued and
the watchdog's stall nudge (or an enqueue with the same key) sends it. A failed publish after
``resume`` leaves the resumed job queued; the stall nudge sends it the same way.

``cancel`` stops a job that has not finished: its ``cancelled`` result is stored at once, and the
job's queued or running tasks find it finished and stop (a model call in flight completes; its
reply is dropped).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from suture.config.settings import Settings, load_settings
from suture.workers.admission import admit, job_deadline_s
from suture.workers.errors import (
    BrokerUnavailable,
    IdempotencyConflict,
    InvalidJob,
    JobTimeout,
    NotResumable,
    StoreError,
)
from suture.workers.extras import requiring
from suture.workers.idempotency import (
    automatic_key,
    check_actor,
    check_key,
    check_owner,
    check_tenant,
    created_or_read_back,
    scoped_key,
)
from suture.workers.priority import check_priority
from suture.workers.store.job_store import FINAL_STATUSES, JobStore, get_store

if TYPE_CHECKING:
    from suture.tasks.vocabulary import JobStatus

# The producer's own names; its errors have one import path, ``suture.workers.errors`` (and ``suture``).
__all__ = ["JobHandle", "cancel", "enqueue", "get_job", "resume"]

log = logging.getLogger(__name__)

CANCEL_REASON = "cancelled on request"
MAX_REASON_CHARS = 500


@dataclass
class JobHandle:
    """A job by id: its status, its result (waiting for it), and its trace."""

    id: str
    settings: Settings | None = field(default=None, repr=False)

    def _store(self) -> JobStore:
        return get_store(resolved_settings(self.settings))

    def status(self) -> JobStatus:
        """``queued|running|delivered|soft_delivered|refused|failed|cancelled``."""
        return self._store().status(self.id)  # type: ignore[return-value]  # the store writes only these

    def result(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Wait for the result (forever if ``timeout_s`` is None); raises JobTimeout."""
        result = self._store().wait_result(self.id, timeout_s)
        if result is None:
            raise JobTimeout(self.id, float(timeout_s or 0))
        return result

    def trace(self) -> list[dict[str, Any]]:
        """Every attempt so far, across resumes (result schema records), oldest first."""
        from suture.tasks.job import JobState

        record = self._store().load(self.id)
        return [a.public() for a in JobState.model_validate(record.state).attempts] if record.state else []

    def spec(self) -> dict[str, Any]:
        """What the job was enqueued to do, without its document: ``{"contract", "contract_params",
        "policy", "priority"}`` (and a user's policy file's ``policy_rules``): the rules every worker
        judges it by."""
        return self._store().load(self.id).job_spec.described()

    def callback(self) -> dict[str, Any] | None:
        """The delivery of the job's latest callback (None if it has none, or none is owed yet): ``state``
        (``pending``, ``delivered``, ``failed``), ``attempts``, ``last_status`` (HTTP) and ``last_error``."""
        return self._store().outbox.delivery(self.id)

    def history(self) -> list[dict[str, Any]]:
        """The results delivered before each resume, oldest first (the current one is ``result()``)."""
        return self._store().history(self.id)

    def cancel(self, reason: str = CANCEL_REASON) -> bool:
        """Stop the job unless it has finished; True if this call cancelled it (see ``cancel``)."""
        return cancel(self.id, reason, settings=self.settings)

    def done(self) -> bool:
        """True once the job has a final status."""
        return self.status() in FINAL_STATUSES


def enqueue(
    contract: str,
    input: str | bytes,
    *,
    questions: int | None = None,
    params: dict[str, Any] | None = None,
    policy: str | None = None,
    policy_rules: dict[str, Any] | None = None,
    idempotency_key: str | None = None,
    callback: str | None = None,
    batch: str | None = None,
    meta: dict[str, Any] | None = None,
    tenant: str | None = None,
    priority: str = "interactive",
    settings: Settings | None = None,
    batch_api: str = "off",
) -> JobHandle:
    """Check the job, store it and queue its first attempt; the same idempotency key returns the same job.

    ``input`` is the document's text (or its bytes, decoded as a text file is); ``params`` the
    contract's parameters (``questions`` is short for ``params={"questions": N}``), completed from
    the settings and stored with the job, so every worker judges it by them. Raises ``InvalidJob``
    (nothing stored) for a job no worker could run; see ``suture.workers.admission``. ``policy`` names
    a configured policy, never a path (no file is opened); ``policy_rules`` is one's declarative form as
    data (a user's file the CLI read, ``suture.workers.cli.policy_arg``), stored with the job. The same key
    with a different request (another document, contract, parameters, policy or callback) raises
    IdempotencyConflict: a caller never receives a job another request created. ``tenant`` scopes the
    key (the same key from two tenants makes two jobs) and is stored with the job: the reads given a
    tenant find another tenant's job as no job (``JobNotFound``). ``priority`` (interactive, bulk): which
    new jobs the dispatcher sends first; ``batch_api`` (off, all, first): which calls use the Batch API.
    Without ``idempotency_key`` the job gets an automatic one. A store write that fails (it may have been
    applied) is read back under the key: the job is returned if it exists, else ``EnqueueOutcomeUnknown``
    carries its id and the key, and enqueueing again with that key never makes a second job.
    """
    settings = resolved_settings(settings)
    # A key of its own when the caller gave none: an outcome-unknown error carries it, so a retry
    # with it can never make a second job.
    tenant, idempotency_key = check_tenant(tenant), check_key(idempotency_key) or automatic_key()
    job_class = check_priority(priority)
    job_id = uuid.uuid4().hex
    given = dict(params or {}) | ({"questions": questions} if questions is not None else {})
    admitted = admit(
        job_id,
        contract,
        input,
        settings,
        params=given,
        policy=policy,
        policy_rules=policy_rules,
        callback=callback,
        batch=batch,
        batch_api=batch_api,
    )
    spec = admitted.spec.model_copy(update={"priority": job_class}).stored()
    store = get_store(settings)
    if callback is not None:
        _check_callback_for_workers(callback, store, settings)
    key, request_sha256 = scoped_key(idempotency_key, spec, tenant)
    dispatched = settings.dispatch.enabled

    def create() -> tuple[str, bool, str]:
        return store.create(
            job_id,
            spec,
            deadline_s=time.time() + job_deadline_s(settings, admitted.spec),
            idempotency_key=key,
            request_sha256=request_sha256,
            meta=meta,
            tenant=tenant,
            waiting=store.waiting.slot(job_class, tenant) if dispatched else None,
        )

    found, created, stored_sha256 = created_or_read_back(create, store, job_id, idempotency_key, key)
    if not created and stored_sha256 and stored_sha256 != request_sha256:
        raise IdempotencyConflict(str(idempotency_key), found)
    if not dispatched:  # else stored and listed in one step: the dispatcher sends it
        _publish_new(store, found, created, settings, key, job_class)
    return JobHandle(found, settings)


def _check_callback_for_workers(callback: str, store: JobStore, settings: Settings) -> None:
    """Refuse at enqueue a callback the workers would refuse at delivery (their settings differ from ours)."""
    from suture.workers.webhooks import CallbackRefused, check_callback_for_workers

    try:
        check_callback_for_workers(callback, settings.webhook, store.outbox.workers_rules())
    except CallbackRefused as exc:
        raise InvalidJob(str(exc), field="callback", value=callback) from None


def _publish_new(
    store: JobStore, job_id: str, created: bool, settings: Settings, key: str | None, job_class: str
) -> None:
    """Publish the first attempt of a job just stored, or again of one still queued: its first publish
    may have been lost (the producer died after storing); the attempt applies once however often sent."""
    if created:
        _publish_or_discard(store, job_id, settings, key, job_class)
    elif store.status(job_id) == "queued":
        publish(
            settings, "suture.attempt", [job_id, 1], consequence=_stays_queued(job_id), priority=job_class
        )


def _publish_or_discard(
    store: JobStore, job_id: str, settings: Settings, key: str | None, job_class: str
) -> None:
    """Publish a new job's first attempt; if that fails, remove the job (see the module docstring)."""
    try:
        publish(settings, "suture.attempt", [job_id, 1], priority=job_class)
    except BrokerUnavailable as exc:
        try:
            discarded = store.discard(job_id, key)
        except StoreError:
            raise BrokerUnavailable(f"{exc.reason}; {_stays_queued(job_id)}") from None
        if discarded:
            raise BrokerUnavailable(f"{exc.reason}; nothing was enqueued") from None
        # Not queued any more: a worker opened the job, so the message did get through.


def get_job(
    job_id: str, settings: Settings | None = None, *, tenant: str | None = None, operator: bool = False
) -> JobHandle:
    """A handle on an existing job; raises JobNotFound if the store does not know it (or, given
    ``tenant``, if the job is another tenant's, or enqueued without a tenant and ``operator`` is False)."""
    settings = resolved_settings(settings)
    check_owner(job_id, get_store(settings).tenant(job_id), tenant, operator=operator)
    return JobHandle(job_id, settings)


def cancel(
    job_id: str,
    reason: str = CANCEL_REASON,
    *,
    settings: Settings | None = None,
    tenant: str | None = None,
    operator: bool = False,
) -> bool:
    """Stop a job that has not finished: its result is stored now, status ``cancelled``; False if it
    had already finished (its result stays as it is). Raises JobNotFound (given ``tenant``: also for a
    job it may not see, as ``get_job``), OperatorJob (given ``tenant``, for a job enqueued without one).

    Tasks queued or running for the job find it finished and stop (a model call in flight completes,
    its reply dropped). A callback given at enqueue fires once with ``cancelled``, sent by a worker
    (``suture.deliver``, or the watchdog once a down broker is back): this call never waits on a webhook.
    """
    with requiring("suture.cancel", "worker"):
        from suture.workers.flow.delivery import cancel as cancel_job
        from suture.workers.runtime.observer import RuntimeObserver

    settings = resolved_settings(settings)
    check_actor(job_id, get_store(settings).tenant(job_id), tenant, "cancel", operator=operator)
    text = reason.strip()[:MAX_REASON_CHARS] or CANCEL_REASON
    # The observer counts the cancellation in this process's metrics (e.g. `suture serve`'s /metrics).
    record = cancel_job(settings, get_store(settings), job_id, text, observer=RuntimeObserver(settings))
    if record is None:
        return False
    if record.job_spec.callback:
        try:
            publish(settings, "suture.deliver", [job_id])
        except BrokerUnavailable as exc:
            # The cancel stands: the job stays due on the watchdog's list, which sends its delivery
            # (and so the callback) once the broker is back.
            log.warning("job %s cancelled; its callback waits for the broker: %s", job_id, exc.reason)
    return True


def resume(
    job_id: str,
    feedback: str,
    *,
    targets: Sequence[str] = (),
    callback: str | None = None,
    settings: Settings | None = None,
    tenant: str | None = None,
    operator: bool = False,
) -> JobHandle:
    """Re-run a soft-delivered job with a person's feedback and a fresh retry budget; history kept.

    The delivered result moves to the job's history; the job runs again as a new round, ending with a
    new result (a callback given at enqueue fires once more; ``callback`` replaces it from this round
    on, checked as at enqueue). With ``targets`` (JSON pointers; one naming nothing: ``InvalidJob``)
    only those parts are regenerated.
    """
    from suture.tasks import engine
    from suture.tasks.feedback import MAX_FEEDBACK_CHARS

    settings = resolved_settings(settings)
    text = feedback.strip()
    if not text or len(text) > MAX_FEEDBACK_CHARS:
        size = f"has {len(text)} characters; at most {MAX_FEEDBACK_CHARS} are allowed"
        raise InvalidJob(f"feedback {size if text else 'is empty'}", field="feedback")
    store = get_store(settings)
    if callback is not None:
        from suture.workers.admission import check_callback_of_job

        check_callback_of_job(callback, settings)
        _check_callback_for_workers(callback, store, settings)
    record = store.load(job_id)
    check_actor(job_id, record.tenant, tenant, "resume", operator=operator)  # as ``cancel``
    if record.status != "soft_delivered" or record.state is None:
        raise NotResumable(job_id, record.status)
    try:
        state = engine.resume(record.delivered_state(), text, targets)
    except engine.EngineError as exc:
        raise InvalidJob(exc.problem, field="target") from None
    changed: dict[str, Any] = {"feedback": [*record.job_spec.feedback, text]}
    spec = record.job_spec.model_copy(
        update=changed | ({"callback": callback} if callback is not None else {})
    )
    deadline_s = time.time() + job_deadline_s(settings, spec)
    if not store.resume(job_id, spec.stored(), state.model_dump(mode="json"), deadline_s):
        raise NotResumable(job_id, store.status(job_id))
    publish(
        settings,
        "suture.attempt",
        [job_id, record.version + 1],
        consequence=_stays_queued(job_id),
        priority=spec.priority,
    )
    return JobHandle(job_id, settings)


def publish(
    settings: Settings, name: str, args: list[Any], *, consequence: str = "", priority: str | None = None
) -> None:
    """Publish task ``name`` (ids only; a model call's ``priority`` picks its queue); raises
    BrokerUnavailable."""
    # A task goes to the broker through Celery, a worker-side package: a producer-only install sends
    # new jobs through the dispatcher (stored, never published here) and needs it only for this.
    with requiring(f"sending {name} to the workers", "worker"):
        from suture.workers.runtime.publish import publish_or_refuse

    publish_or_refuse(
        settings, name, *args, consequence=consequence, **({"priority": priority} if priority else {})
    )


def _stays_queued(job_id: str) -> str:
    return f"job {job_id} stays queued (the watchdog sends it once the broker is back)"


def resolved_settings(settings: Settings | None) -> Settings:
    """The given (or loaded) settings, pointing at the running `suture up` if no broker is configured.

    Every producer (this module, ``suture.workers.aio``, the HTTP API, the CLI's job commands) finds
    the stack here, through ``suture.workers.local.discovery.resolve``: configured settings, else the
    running ``suture up``, else ``NoBrokerConfigured``; never a guessed default Redis.
    """
    from suture.workers.contract_sources import install_contracts
    from suture.workers.local.discovery import resolve

    return resolve(install_contracts(settings or load_settings()))
