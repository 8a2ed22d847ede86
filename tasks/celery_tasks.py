"""Thin Celery adapters: each task hands its ids to one ``workers.flow.Flow`` method.

Messages carry only ids (job id, attempt number, pointer), never documents or outputs, and set
``argsrepr``/``kwargsrepr`` explicitly so Flower and Sentry show exactly that. Errors: a Redis or
broker outage (``StoreUnavailable``, a failed publish) re-runs the step in-process with backoff
(steps are idempotent), then requeues the same message; any other unexpected error ends the job
``failed`` with the error named, instead of leaving it to hang until the watchdog. Each execution
gets one token, kept across its in-process re-runs, so the poison cap counts it once
(``workers.executions``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import urllib.request
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any

import redis
from celery import Task, signals
from celery.exceptions import Reject, SoftTimeLimitExceeded
from kombu.exceptions import OperationalError

from config.settings import Settings, load_settings
from tasks.calls import ModelCall, ModelReply
from tasks.job import JobState
from workers.celery_app import CONTROL_QUEUE, MODEL_QUEUE, TASK_QUEUES, app, configure, waiting_messages
from workers.flow import Flow
from workers.store import StoreUnavailable, get_store

log = logging.getLogger(__name__)

WATCHED_QUEUES = (MODEL_QUEUE, CONTROL_QUEUE)
STORE_RETRY_FIRST_S = 0.25
STORE_RETRY_MAX_S = 5.0
# Redis (store) or broker unreachable: worth waiting for, unlike a bug.
OUTAGES: tuple[type[Exception], ...] = (
    StoreUnavailable,
    OperationalError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,  # a Redis that stopped answering (socket timeout)
)


@cache
def worker_settings() -> Settings:
    """This process's settings, loaded once."""
    return load_settings()


@cache
def flow() -> Flow:
    """This process's job flow (store, rate-limited model client, Celery dispatcher)."""
    settings = worker_settings()
    client = _model_client(settings)
    return Flow(
        settings=settings,
        store=get_store(settings),
        caller=_limited_caller(settings, client.call),
        dispatcher=CeleryDispatcher(settings),
        simulated=lambda: bool(getattr(client, "simulated", False)),
        progress=_report_progress,
    )


def _report_progress(job_id: str, state: JobState) -> None:
    from celery import current_task

    from workers.events import report_progress

    last = state.attempts[-1] if state.attempts else None
    step = last.step_index if last else 0
    failures = len(state.best.failures) if state.best else len(state.last_failures)
    if current_task:
        report_progress(
            current_task, job_id, step=step, attempt=len(state.attempts), failures=failures, status="running"
        )


def _model_client(settings: Settings) -> Any:
    from workers.model_client import get_model_client

    return get_model_client(settings)


def _limited_caller(
    settings: Settings, call: Callable[[ModelCall], ModelReply]
) -> Callable[[ModelCall], ModelReply]:
    from workers.ratelimit import RateLimiter

    limiter = RateLimiter(get_store(settings).redis, settings.worker.rate_limits_rpm)

    def caller(model_call: ModelCall) -> ModelReply:
        limiter.acquire(model_call.model)
        try:
            return call(model_call)
        except SoftTimeLimitExceeded:
            return ModelReply(
                model=model_call.model, error="task soft time limit exceeded", error_kind="unavailable"
            )

    return caller


class CeleryDispatcher:
    """Publishes a job's next tasks; arguments are ids only, and shown as such."""

    def __init__(self, settings: Settings) -> None:
        self._timeout_s = settings.client.timeout_s

    def attempt(self, job_id: str, n: int) -> None:
        _send("suture.attempt", job_id, n)

    def slices(self, job_id: str, n: int, pointers: list[str]) -> None:
        # One Redis pipeline for every slice and its task-sent event: all are published on leaving
        # the block, or none if one fails (the redelivered step re-sends them).
        with app.producer_or_acquire() as producer, producer.batch():
            for pointer in pointers:
                _send("suture.surgical_slice", job_id, n, pointer, producer=producer)

    def merge(self, job_id: str, n: int) -> None:
        _send("suture.merge", job_id, n)

    def waiting(self) -> int | None:
        try:
            return sum(waiting_messages(WATCHED_QUEUES).values())
        except Exception as exc:  # the broker is down or the queue unknown: the watchdog waits
            log.info("cannot count waiting messages: %s", type(exc).__name__)
            return None

    def deliver(self, job_id: str, *, give_up: str | None = None) -> None:
        _send("suture.deliver", job_id, give_up=give_up)

    def callback(self, target: str, job_id: str, status: str) -> None:
        if target.startswith(("http://", "https://")):
            self._webhook(target, job_id)
        else:
            app.send_task(target, args=[job_id, status], argsrepr=repr((job_id, status)), kwargsrepr="{}")

    def _webhook(self, url: str, job_id: str) -> None:
        result = get_store(worker_settings()).result(job_id)
        body = json.dumps(result).encode("utf-8")
        headers = {"Content-Type": "application/json", "Idempotency-Key": job_id}
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                response.read()
        except OSError as exc:  # the result is stored either way; the hook is told once, best-effort
            log.warning("job %s: webhook failed: %s", job_id, type(exc).__name__)


def _send(name: str, *args: Any, producer: Any = None, **kwargs: Any) -> None:
    # The task and its task-sent event go out in one Redis pipeline (kombu's publish batch; an
    # enclosing batch, as for slices, flushes them with the rest). ignore_result: without it
    # send_task subscribes this process to the task's result channel (one more Redis command per
    # task, and a subscription kept for good), and results live in the job store.
    with app.producer_or_acquire(producer) as publisher, publisher.batch():
        app.send_task(
            name,
            args=list(args),
            kwargs=kwargs,
            queue=TASK_QUEUES[name],
            argsrepr=repr(args),
            kwargsrepr=repr(kwargs),
            producer=publisher,
            ignore_result=True,
        )


def _run(task: Task, job_id: str, step: Callable[[str], Any]) -> Any:
    """Run one execution of a task: ``step(token)``, re-run through outages with the same token."""
    token = uuid.uuid4().hex
    try:
        return _through_outages(lambda: step(token), budget_s=worker_settings().worker.soft_time_limit_s / 2)
    except OUTAGES as exc:
        # Not task.retry(): it publishes a new message and, when that publish fails too (the broker
        # is often this same Redis), rejects this one for good and the job is lost. Requeue this
        # very message; if even that cannot reach Redis it stays unacked and comes back later.
        log.warning(
            "job %s: %s requeued, Redis/broker unavailable: %s", job_id, task.name, type(exc).__name__
        )
        raise Reject(type(exc).__name__, requeue=True) from None
    except Exception as exc:
        reason = f"internal error in {task.name}: {type(exc).__name__}: {str(exc)[:200]}"
        log.exception("job %s: %s", job_id, reason)
        if task.name not in ("suture.deliver", "suture.watchdog"):
            flow().dispatcher.deliver(job_id, give_up=reason)
        return "error"


def _through_outages(step: Callable[[], Any], *, budget_s: float) -> Any:
    """Run ``step``, re-running it with backoff while Redis or the broker is unreachable, for up to ``budget_s``."""
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


@app.task(name="suture.attempt", bind=True)
def attempt(self: Task, job_id: str, n: int) -> Any:
    """Run full attempt ``n`` of a job."""
    return _run(self, job_id, lambda token: flow().attempt(job_id, n, token))


@app.task(name="suture.surgical_slice", bind=True)
def surgical_slice(self: Task, job_id: str, n: int, pointer: str) -> Any:
    """Regenerate one slice (``pointer``) of surgical attempt ``n``."""
    return _run(self, job_id, lambda token: flow().surgical_slice(job_id, n, pointer, token))


@app.task(name="suture.merge", bind=True)
def merge(self: Task, job_id: str, n: int) -> Any:
    """Merge the slices of surgical attempt ``n`` (once)."""
    return _run(self, job_id, lambda token: flow().merge(job_id, n, token))


@app.task(name="suture.deliver", bind=True)
def deliver(self: Task, job_id: str, give_up: str | None = None) -> Any:
    """Store the job's result once and fire its callback once."""
    return _run(self, job_id, lambda _: flow().deliver(job_id, give_up=give_up))


@app.task(name="suture.watchdog", bind=True)
def watchdog(self: Task) -> Any:
    """Finish every job past its deadline."""
    return _run(self, "-", lambda _: flow().watchdog())


@signals.worker_init.connect
def _on_worker_init(**_: Any) -> None:
    settings = worker_settings()
    configure(settings)
    _init_sentry(settings)
    from workers.watchdog import WatchdogClock

    owner = f"{socket.gethostname()}:{os.getpid()}"
    fire = lambda: _send("suture.watchdog")  # noqa: E731
    WatchdogClock(
        get_store(settings).redis, fire, interval_s=settings.worker.watchdog_interval_s, owner=owner
    ).start()


@signals.worker_process_init.connect
def _on_process_init(**_: Any) -> None:
    _init_sentry(worker_settings())


def _init_sentry(settings: Settings) -> None:
    try:
        from workers.sentry import init_sentry
    except ImportError:
        return
    init_sentry(settings)
