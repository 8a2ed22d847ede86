"""The producer API for web apps and the CLI: ``enqueue()`` a job, follow it with a ``JobHandle``.

Importing this module starts nothing. ``enqueue`` costs one Redis round trip (the job and its
idempotency key stored atomically) and one publish of a message that carries only the job id.
Errors::

    ProducerError
     ├── JobTimeout(job_id, timeout_s)       the result did not arrive in time
     ├── InvalidJob(problem)                 bad arguments (empty input, unknown contract name)
     ├── NotResumable(job_id, status)        resume asked of a job that is not soft-delivered
     └── BrokerUnavailable(reason)           the broker refused the message (URL password never shown)
    (plus workers.store.JobNotFound / StoreUnavailable from the store)

A job counts as accepted once ``enqueue`` returned. When the publish fails (the broker is down or
unreachable: a few quick retries, about a second in all when connections are refused), ``enqueue``
raises ``BrokerUnavailable`` and removes the job it just stored, with its idempotency key, so a
retry (same key or not) starts clean and nothing runs behind the caller's back. If the store cannot
be reached for that removal either, the job stays queued: the watchdog's stall nudge sends its first
attempt once ``worker.stall_s`` passed without progress, and an enqueue with the same idempotency key
re-publishes it at once. A failed publish after ``resume`` leaves the resumed job queued; the stall
nudge sends it the same way.

``cancel`` stops a job that has not finished: its ``cancelled`` result is stored at once, and the
job's queued or running tasks find it finished and stop (a model call in flight completes; its
reply is dropped).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from config.settings import Settings, load_settings
from workers.store import FINAL_STATUSES, JobRecord, JobStore, StoreError, get_store

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from tasks.job import JobState

# A publish retries briefly (a broker failing over), then gives up: an enqueue must not hang on a
# dead broker. Celery's default is 3 retries; each retry also waits for the connection attempt.
CANCEL_REASON = "cancelled on request"
MAX_REASON_CHARS = 500
PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


class ProducerError(Exception):
    """Base of the producer's errors."""


class JobTimeout(ProducerError):
    """The job's result was not there within ``timeout_s``; the job keeps running."""

    def __init__(self, job_id: str, timeout_s: float) -> None:
        super().__init__(f"job {job_id} has no result after {timeout_s:g} s (it keeps running)")
        self.job_id = job_id
        self.timeout_s = timeout_s


class InvalidJob(ProducerError):
    """The job cannot be enqueued as asked."""


class BrokerUnavailable(ProducerError):
    """The message broker could not take a job's message; the message never contains a password."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"message broker unavailable: {reason}")
        self.reason = reason


class NotResumable(ProducerError):
    """Only a soft-delivered job can be resumed with feedback."""

    def __init__(self, job_id: str, status: str) -> None:
        super().__init__(f"job {job_id} is {status}; only a soft_delivered job can be resumed")
        self.job_id = job_id
        self.status = status


@dataclass
class JobHandle:
    """A job by id: its status, its result (waiting for it), and its trace."""

    id: str
    settings: Settings | None = field(default=None, repr=False)

    def _store(self) -> JobStore:
        return get_store(self.settings or load_settings())

    def status(self) -> str:
        """``queued|running|delivered|soft_delivered|refused|failed|cancelled``."""
        return self._store().status(self.id)

    def result(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Wait for the result (forever if ``timeout_s`` is None); raises JobTimeout."""
        result = self._store().wait_result(self.id, timeout_s)
        if result is None:
            raise JobTimeout(self.id, float(timeout_s or 0))
        return result

    def trace(self) -> list[dict[str, Any]]:
        """Every attempt so far, across resumes (result schema records), oldest first."""
        store = self._store()
        attempts: list[dict[str, Any]] = []
        record = store.load(self.id)
        if record.state:
            from tasks.job import JobState

            state = JobState.model_validate(record.state)
            attempts = [a.public() for a in state.attempts]
        return attempts

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
    input: str,
    *,
    questions: int | None = None,
    policy: str | None = None,
    idempotency_key: str | None = None,
    callback: str | None = None,
    batch: str | None = None,
    meta: dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> JobHandle:
    """Store a job and publish its first attempt; the same idempotency key returns the same job."""
    settings = settings or load_settings()
    if not input or not input.strip():
        raise InvalidJob("the input document is empty")
    if questions is not None and questions < 1:
        raise InvalidJob(f"questions must be at least 1, got {questions}")
    params = {"questions": questions} if questions is not None else {}
    spec: dict[str, Any] = {"contract": contract, "params": params, "input": input, "policy": policy}
    spec |= {"callback": callback, "batch": batch, "feedback": []}
    job_id = uuid.uuid4().hex
    deadline_s = time.time() + settings.worker.job_deadline_s
    store = get_store(settings)
    found, created = store.create(
        job_id, spec, deadline_s=deadline_s, idempotency_key=idempotency_key, meta=meta
    )
    # A repeated enqueue of a job still queued re-publishes: the first publish may have been lost
    # (the producer died after storing); the attempt task applies once however often it arrives.
    if created:
        _publish_or_discard(store, found, settings, idempotency_key)
    elif store.status(found) == "queued":
        _publish_first_attempt(found, settings, n=1, consequence=_stays_queued(found))
    return JobHandle(found, settings)


def _publish_or_discard(store: JobStore, job_id: str, settings: Settings, key: str | None) -> None:
    """Publish a new job's first attempt; if that fails, remove the job (see the module docstring)."""
    try:
        _publish_first_attempt(job_id, settings, n=1)
    except BrokerUnavailable as exc:
        try:
            discarded = store.discard(job_id, key)
        except StoreError:
            raise BrokerUnavailable(f"{exc.reason}; {_stays_queued(job_id)}") from None
        if discarded:
            raise BrokerUnavailable(f"{exc.reason}; nothing was enqueued") from None
        # Not queued any more: a worker opened the job, so the message did get through.


def get_job(job_id: str, settings: Settings | None = None) -> JobHandle:
    """A handle on an existing job; raises JobNotFound if the store does not know it."""
    settings = settings or load_settings()
    get_store(settings).status(job_id)
    return JobHandle(job_id, settings)


def cancel(job_id: str, reason: str = CANCEL_REASON, *, settings: Settings | None = None) -> bool:
    """Stop a job that has not finished: its result is stored now, status ``cancelled``; False if it
    had already finished (its result stays as it is). Raises JobNotFound.

    Tasks queued or running for the job find it finished and stop; a model call already in flight
    completes and its reply is dropped. A callback given at enqueue fires once with ``cancelled``,
    sent by a worker (``suture.deliver``), so this call never waits on a webhook; with the broker
    down, the watchdog sends it once the broker is back.
    """
    from workers.delivery import cancel as cancel_job

    settings = settings or load_settings()
    text = reason.strip()[:MAX_REASON_CHARS] or CANCEL_REASON
    record = cancel_job(settings, get_store(settings), job_id, text)
    if record is None:
        return False
    if record.spec.get("callback"):
        try:
            _publish(settings, "suture.deliver", [job_id])
        except BrokerUnavailable as exc:
            # The cancel stands: the job stays due on the watchdog's list, which sends its delivery
            # (and so the callback) once the broker is back.
            log.warning("job %s cancelled; its callback waits for the broker: %s", job_id, exc.reason)
    return True


def resume(job_id: str, feedback: str, *, settings: Settings | None = None) -> JobHandle:
    """Re-run a soft-delivered job with a person's feedback and a fresh retry budget; history kept.

    The delivered result moves to the job's history, the job is queued again as a new round and
    ends with a new result; a callback given at enqueue fires once more, for that new result.
    """
    from tasks import engine
    from tasks.feedback import MAX_FEEDBACK_CHARS

    settings = settings or load_settings()
    text = feedback.strip()
    if not text:
        raise InvalidJob("feedback is empty")
    if len(text) > MAX_FEEDBACK_CHARS:
        raise InvalidJob(f"feedback has {len(text)} characters; at most {MAX_FEEDBACK_CHARS} are allowed")
    store = get_store(settings)
    record = store.load(job_id)
    if record.status != "soft_delivered" or record.state is None:
        raise NotResumable(job_id, record.status)
    state = engine.resume(_finished_state(record), text)
    spec = dict(record.spec) | {"feedback": [*record.spec.get("feedback", []), text]}
    deadline_s = time.time() + settings.worker.job_deadline_s
    if not store.resume(job_id, spec, state.model_dump(mode="json"), deadline_s):
        raise NotResumable(job_id, store.status(job_id))
    _publish_first_attempt(job_id, settings, n=record.version + 1, consequence=_stays_queued(job_id))
    return JobHandle(job_id, settings)


def _finished_state(record: JobRecord) -> JobState:
    """The engine state as delivered: the flow finishes a state only in the result it stores."""
    from tasks.job import JobState

    state = JobState.model_validate(record.state)
    if state.status is None and record.result is not None:
        state = state.model_copy(
            update={"status": record.result["status"], "reason": record.result["reason"]}
        )
    return state


def _publish_first_attempt(job_id: str, settings: Settings, *, n: int, consequence: str = "") -> None:
    """Publish attempt ``n`` of the job; raises BrokerUnavailable (``consequence`` appended) if it fails."""
    _publish(settings, "suture.attempt", [job_id, n], consequence=consequence)


def _publish(settings: Settings, name: str, args: list[Any], *, consequence: str = "") -> None:
    """Publish task ``name`` (ids only); raises BrokerUnavailable (``consequence`` appended) if it fails."""
    import redis
    from kombu.exceptions import OperationalError

    from workers.celery_app import TASK_QUEUES, broker_url, configure

    app = configure(settings)
    try:
        # One Redis pipeline for the task and its task-sent event (kombu's publish batch).
        with app.producer_or_acquire() as producer, producer.batch():
            app.send_task(
                name,
                args=args,
                queue=TASK_QUEUES[name],
                argsrepr=repr(tuple(args)),
                kwargsrepr="{}",
                producer=producer,
                ignore_result=True,  # else send_task subscribes to a result channel this job never uses
                retry_policy=PUBLISH_RETRY_POLICY,
            )
    except (OperationalError, OSError, redis.exceptions.ConnectionError) as exc:
        reason = _without_password(f"{type(exc).__name__}: {_first_line(exc)}", broker_url(settings)).rstrip(
            "."
        )
        raise BrokerUnavailable(f"{reason}; {consequence}" if consequence else reason) from None


def _stays_queued(job_id: str) -> str:
    return f"job {job_id} stays queued (the watchdog sends it once the broker is back)"


def _without_password(text: str, url: str) -> str:
    """``text`` with the password of ``url`` (if any, and if it shows) replaced by ``***``."""
    from urllib.parse import unquote, urlsplit

    password = urlsplit(url).password
    for form in {password, unquote(password)} if password else ():
        text = text.replace(form, "***")
    return text


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0][:200]
