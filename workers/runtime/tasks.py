"""Thin Celery adapters: each task hands its ids to one ``suture.workers.flow.job_flow.Flow`` method.

Messages carry only ids (job id, attempt number, pointer), never documents or outputs, and set
``argsrepr``/``kwargsrepr`` explicitly so Flower and Sentry show exactly that. A task that ends
its job returns how it ended (``delivered``, ``soft_delivered``, ``refused``, ``cancelled``), so
Flower's ``result:soft_delivered`` search finds it, or, for a failed job, raises ``JobFailed('failed:<cause>
...')``
after the result was stored, so Flower's Failed tab lists it. Errors: a Redis or broker
outage (``StoreUnavailable``, a failed publish) re-runs the step in-process with backoff (steps are
idempotent), then requeues the same message; any other unexpected error is reported once to Sentry
(``incidents.report_internal``), gives the job up (cause ``internal``: its best output, or failed)
instead of leaving it to hang until the watchdog, and ends the task ``FAILURE`` with::

    InternalError(reason)   the error's type and text, scrubbed of the job's document and output

Each execution gets one token, kept across its in-process re-runs, so the poison cap counts it once
(``suture.workers.flow.executions``). A step whose model call must wait for its budget (or got a
429) is re-queued with a countdown and ends ``deferred`` (``suture.workers.runtime.deferral``). Worker
start-up (Sentry, metrics, the watchdog's clock) is in
``suture.workers.runtime.lifecycle``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any

import redis
from celery import Task
from celery.exceptions import Reject, SoftTimeLimitExceeded
from kombu.exceptions import BatchPublishError, OperationalError

from suture.config.settings import Settings, load_settings
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.causes import GiveUpCause
from suture.workers.errors import JobNotFound, StoreUnavailable
from suture.workers.flow.batch_flow import BatchFlow
from suture.workers.flow.job_flow import Flow
from suture.workers.model.budgeted_caller import CallDeferred
from suture.workers.runtime import lifecycle, metrics
from suture.workers.runtime.app import app
from suture.workers.runtime.batch_tasks import build_rounds
from suture.workers.runtime.callback_alerts import CallbackGivenUp
from suture.workers.runtime.cpu_turns import cpu_turn, turn_given_back
from suture.workers.runtime.deferral import defer
from suture.workers.runtime.dispatcher import CeleryDispatcher
from suture.workers.runtime.kombu_patches import patch_redis_transport
from suture.workers.store.job_store import get_store
from suture.workers.store.keys import Keys
from suture.workers.store.outbox import Pending
from suture.workers.webhooks.courier import Courier
from suture.workers.webhooks.sender import Sender

log = logging.getLogger(__name__)
# A worker process loads this module before it connects to the broker (the app's ``include``).
patch_redis_transport()

STORE_RETRY_FIRST_S = 0.25
STORE_RETRY_MAX_S = 5.0
# Redis (store) or broker unreachable: worth waiting for, unlike a bug.
OUTAGES: tuple[type[Exception], ...] = (
    StoreUnavailable,
    OperationalError,
    BatchPublishError,  # kombu's Redis publish of several messages met a lost connection
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,  # a Redis that stopped answering (socket timeout)
)


class InternalError(Exception):
    """A task failed for a reason that is suture's (a bug, corrupt stored data); str() is safe to show."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class JobFailed(Exception):
    """The task that ended its job ``failed`` ends in FAILURE with it, after the result was stored once.

    So Flower's Failed tab (``state:FAILURE``) lists failed jobs; the job's own Sentry event was sent
    by the delivery (``suture.workers.runtime.alerts``), so this one is expected, not reported again.
    """

    def __init__(self, ending: str, job_id: str) -> None:
        super().__init__(f"{ending} (job {job_id}; its result is stored: suture result {job_id})")
        self.ending = ending
        self.job_id = job_id


# Expected by Celery: logged without a traceback, and not sent again by Sentry's Celery integration.
THROWS = (InternalError, JobFailed)


@cache
def worker_settings() -> Settings:
    """This process's settings, loaded once; a configured policy that cannot run refuses the worker."""
    from suture.tasks.policy_choice import check_configured_policies
    from suture.workers.contract_sources import install_contracts

    return check_configured_policies(install_contracts(load_settings()))


@cache
def flow() -> Flow:
    """This process's job flow (store, rate-limited model client, Celery dispatcher)."""
    from suture.workers.runtime.observer import RuntimeObserver
    from suture.workers.runtime.sentry import on_simulation

    settings = worker_settings()
    client = _model_client(settings)
    dispatcher = CeleryDispatcher(settings)
    batch = build_rounds(settings, dispatcher)
    simulated = lambda: bool(getattr(client, "simulated", False) or batch.service.simulated)  # noqa: E731
    on_simulation(simulated)
    return BatchFlow(
        settings=settings,
        store=get_store(settings),
        caller=_limited_caller(settings, client),
        dispatcher=dispatcher,
        simulated=simulated,
        observer=RuntimeObserver(settings),
        rounds=batch,
    )


def _model_client(settings: Settings) -> Any:
    from suture.workers.model.client import get_model_client

    return get_model_client(settings)


def _limited_caller(settings: Settings, client: Any) -> Callable[[ModelCall], ModelReply]:
    """Calls within the cluster's per-model budgets (``limits``); a call that must wait defers its task."""
    from suture.workers.model.budget import Budget
    from suture.workers.model.budget_math import countdown_cap_s
    from suture.workers.model.budgeted_caller import BudgetedCaller

    horizon_s = countdown_cap_s(settings.worker.visibility_timeout_s, settings.worker.stall_s)
    budget = Budget(get_store(settings).redis, settings.limits, horizon_s=horizon_s)
    call = BudgetedCaller(settings, budget, client)

    def caller(model_call: ModelCall) -> ModelReply:
        try:
            with metrics.call_in_flight(model_call.model), turn_given_back():
                return call(model_call)
        except SoftTimeLimitExceeded:
            return ModelReply(
                model=model_call.model, error="task soft time limit exceeded", error_kind="unavailable"
            )

    return caller


def _run(task: Task, job_id: str, step: Callable[[str], Any]) -> Any:
    """Run one execution of a task; the one that ended its job ``failed`` raises ``JobFailed`` after.

    Only the execution whose once-only write stored the result returns the ending (a duplicate
    returns ``duplicate`` or ``already_ended``), and the failure is raised after that write, with the
    message acknowledged as for any other ending: nothing runs again.
    """
    outcome = _execute(task, job_id, step)
    if isinstance(outcome, str) and outcome.startswith("failed"):
        raise JobFailed(outcome, job_id)
    return outcome


def _execute(task: Task, job_id: str, step: Callable[[str], Any]) -> Any:
    """Run one execution of a task: ``step(token)``, re-run through outages with the same token."""
    token = uuid.uuid4().hex
    try:
        return _through_outages(lambda: step(token), budget_s=worker_settings().worker.soft_time_limit_s / 2)
    except CallDeferred as deferred:  # its model call must wait: re-queued with a countdown, no thread held
        return defer(task, deferred, worker_settings(), OUTAGES)
    except JobNotFound:  # not a bug: the store lost the job (see ``_gone``)
        return _gone(task, job_id)
    except OUTAGES as exc:
        # Not task.retry(): it publishes a new message and, when that publish fails too (the broker
        # is often this same Redis), rejects this one for good and the job is lost. Requeue this
        # very message; if even that cannot reach Redis it stays unacked and comes back later.
        log.warning(
            "job %s: %s requeued, Redis/broker unavailable: %s", job_id, task.name, type(exc).__name__
        )
        raise Reject(type(exc).__name__, requeue=True) from None
    except Exception as exc:
        reason = _internal_error(task, job_id, exc)
        if task.name not in ("suture.deliver", "suture.watchdog"):
            flow().dispatcher.deliver(job_id, give_up=reason, cause="internal")
        raise InternalError(reason) from None


GONE = "gone"


def _gone(task: Task, job_id: str) -> str:
    """Drop a task whose job the store no longer knows, with one warning per job across the cluster.

    A Redis restarted without persistence (or a job past its ``worker.store_ttl_s``) leaves messages that
    name jobs it no longer holds: Celery even pushes the messages it held back into the empty Redis when it
    reconnects. Nothing can run them; each would otherwise be an internal error (and a Sentry event), one
    per task. The message is acknowledged.
    """
    try:
        first = get_store(worker_settings()).notes.claim_gone_warning(job_id)
    except StoreUnavailable:  # Redis away again: say it rather than stay silent
        first = True
    if first:
        log.warning(
            "job %s is gone from the job store (a Redis restarted without persistence, or a job past "
            "worker.store_ttl_s): its %s task and any later one are dropped, and its producer gets no result "
            "(docs/operations.md, Redis persistence)",
            job_id,
            task.name,
        )
    return GONE


def _internal_error(task: Task, job_id: str, exc: Exception) -> str:
    """Log and report an internal error once; its one-line reason, without the job's text."""
    from suture.workers.runtime.incidents import report_internal, safe_error_text
    from suture.workers.runtime.sentry import enabled

    sensitive = _job_text(job_id)
    reason = f"internal error in {task.name}: {safe_error_text(exc, sensitive)}"
    log.error("job %s: %s", job_id, reason, exc_info=True)
    if enabled():
        report_internal(exc, job_id=job_id, task=task.name, sensitive=sensitive)
    return reason


def _job_text(job_id: str) -> list[str]:
    """The job's document and stored state and result (its outputs), to keep out of error reports.

    Raw, if the stored job cannot be parsed (the error may be that very corruption); best-effort.
    """
    from suture.workers.runtime.sentry import strings_of

    store = get_store(worker_settings())
    try:
        record = store.load(job_id)
        return [str(record.spec.get("input") or ""), strings_of(record.state), strings_of(record.result)]
    except Exception:  # unparsable, or the store is down: the raw fields, else generic scrubbing only
        try:
            raw = store.redis.hmget(Keys(store.prefix).job(job_id), ["spec", "state", "result"])
        except Exception:
            return []
        return [str(value) for value in raw if value]


def _through_outages(step: Callable[[], Any], *, budget_s: float) -> Any:
    """Run ``step``, re-running it with backoff while Redis or the broker is unreachable, for up to
    ``budget_s``."""
    deadline = time.monotonic() + budget_s
    delay_s = STORE_RETRY_FIRST_S
    while True:
        try:
            return step()
        except OUTAGES:
            if time.monotonic() + delay_s > deadline:
                raise
            time.sleep(delay_s)
            delay_s = min(delay_s * 2, STORE_RETRY_MAX_S)


@app.task(name="suture.attempt", bind=True, throws=THROWS)
def attempt(self: Task, job_id: str, n: int, priority: str | None = None) -> Any:
    """Run full attempt ``n`` of a job (``priority``: its class, which picked the queue; Flower shows it)."""
    with cpu_turn(priority == "bulk"):
        return _run(self, job_id, lambda token: flow().attempt(job_id, n, token))


@app.task(name="suture.surgical_slice", bind=True, throws=THROWS)
def surgical_slice(self: Task, job_id: str, n: int, pointer: str, priority: str | None = None) -> Any:
    """Regenerate one slice (``pointer``) of surgical attempt ``n`` (``priority`` as for ``attempt``)."""
    with cpu_turn(priority == "bulk"):
        return _run(self, job_id, lambda token: flow().surgical_slice(job_id, n, pointer, token))


@app.task(name="suture.merge", bind=True, throws=THROWS)
def merge(self: Task, job_id: str, n: int) -> Any:
    """Merge the slices of surgical attempt ``n`` (once)."""
    return _run(self, job_id, lambda token: flow().merge(job_id, n, token))


@app.task(name="suture.deliver", bind=True, throws=THROWS)
def deliver(self: Task, job_id: str, give_up: str | None = None, cause: GiveUpCause | None = None) -> Any:
    """Store the job's result once and fire its callback once; returns how the job ended."""
    return _run(self, job_id, lambda _: flow().deliver(job_id, give_up=give_up, cause=cause))


@app.task(name="suture.watchdog", bind=True, throws=THROWS)
def watchdog(self: Task) -> Any:
    """Sweep once by hand (``celery call suture.watchdog``); workers sweep in their own thread (lifecycle)."""
    return _run(self, "-", lambda _: len(flow().watchdog()))


@cache
def courier() -> Courier:
    """This process's callback courier (deliveries in flight on an event loop of their own)."""
    from suture.workers.runtime.callback_alerts import reporter

    settings = worker_settings()
    sender = Sender(get_store(settings), settings.webhook, on_given_up=reporter(settings))
    return Courier(sender, settings.webhook.concurrency)


@app.task(name="suture.callback", bind=True)
def callback(self: Task, job_id: str, tag: str) -> Any:
    """Hand the job's callback ``tag`` to the courier; this thread never waits on the receiver."""
    courier().submit(Pending(job_id, tag))
    return "submitted"


@app.task(name="suture.callback_given_up", throws=(CallbackGivenUp,))
def callback_given_up(job_id: str, host: str, attempts: int, last: str) -> Any:
    """Fail, so Flower lists a callback given up (the courier already counted and reported it)."""
    raise CallbackGivenUp(job_id, host, attempts, last)


lifecycle.connect(worker_settings, flow)
