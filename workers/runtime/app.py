"""suture's Celery app: JSON-only messages, a queue per kind of work, late acks and ordered time limits.

Model calls (``suture.attempt``, ``suture.surgical_slice``) go to ``suture.model``, or for a bulk job
to ``suture.model.bulk`` (``.ahead`` for a tenant running less than its share; ``queue_for``: a worker
takes interactive calls first, with ``dispatch.bulk_share`` of its turns kept for bulk, ``queue_order``),
bookkeeping
(``suture.merge``, ``suture.deliver``, ``suture.watchdog``) to ``suture.control`` and callbacks
(``suture.callback``, handed to the worker's courier) to ``suture.callbacks``, so each can be
scaled apart and a slow receiver never queues ahead of a merge. ``configure(settings)`` points the app at the
broker and checks
that client timeout < soft limit < hard limit < visibility timeout, so a running task is never
redelivered and a hung model call is cut by the client before Celery kills the task. Errors::

    CeleryConfigError(problem)   the settings cannot run Celery safely (one line, names the values)
"""

from __future__ import annotations

import threading
from itertools import pairwise
from typing import Any

from celery import Celery

from suture.config.network_settings import NetworkSettings
from suture.config.settings import Settings
from suture.workers.errors import NoBrokerConfigured
from suture.workers.runtime.amqp_queues import amqp_queues
from suture.workers.runtime.queue_order import (
    BULK_AHEAD_QUEUE,
    BULK_MODEL_QUEUE,
    MODEL_QUEUE,
    MODEL_QUEUES,
    ClassFirstCycle,
)
from suture.workers.store.connection import SENTINEL_SCHEME, connection_options
from suture.workers.store.job_store import store_url

CONTROL_QUEUE = "suture.control"
CALLBACK_QUEUE = "suture.callbacks"

AMQP_SCHEMES = ("amqp://", "amqps://", "pyamqp://")

# Every queue a worker serving all of suture consumes (``suture worker``'s default).
ALL_QUEUES = (*MODEL_QUEUES, CONTROL_QUEUE, CALLBACK_QUEUE)

TASK_QUEUES: dict[str, str] = {
    "suture.attempt": MODEL_QUEUE,
    "suture.surgical_slice": MODEL_QUEUE,
    "suture.merge": CONTROL_QUEUE,
    "suture.deliver": CONTROL_QUEUE,
    "suture.watchdog": CONTROL_QUEUE,
    "suture.batch_round": CONTROL_QUEUE,
    "suture.callback": CALLBACK_QUEUE,
    "suture.callback_given_up": CALLBACK_QUEUE,
}


def queue_for(name: str, priority: str | None = None, *, ahead: bool = False) -> str:
    """The queue of task ``name`` for a job of class ``priority``: a bulk job's model calls go apart,
    ``ahead`` of the other bulk calls if its tenant runs less than its share (``lanes``)."""
    queue = TASK_QUEUES[name]
    if queue != MODEL_QUEUE or priority != "bulk":
        return queue
    return BULK_AHEAD_QUEUE if ahead else BULK_MODEL_QUEUE


class CeleryConfigError(Exception):
    """Settings that would make Celery lose or duplicate work; str() names the offending values."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


# kombu's Redis transport is patched by the worker side only (suture.workers.runtime.tasks and the
# ``celery -A suture.workers`` entry point): a web app that only enqueues keeps kombu as it is.
app = Celery(
    "suture",
    include=[
        "suture.workers.runtime.tasks",
        "suture.workers.runtime.batch_tasks",
        "suture.workers.runtime.log_redaction",
    ],
)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],  # pickle refused: a message can never execute code on a worker
    result_accept_content=["json"],
    task_routes={name: {"queue": queue} for name, queue in TASK_QUEUES.items()},
    task_default_queue=CONTROL_QUEUE,
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    task_ignore_result=True,  # results live in the job store, not the result backend
    worker_prefetch_multiplier=1,
    worker_send_task_events=True,
    task_send_sent_event=True,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
    enable_utc=True,
)

_configured: dict[str, Any] = {}


def check_time_limits(settings: Settings) -> None:
    """Raise CeleryConfigError unless client call budget < soft limit < hard limit < visibility timeout.

    The call budget bounds a whole model call (transport retries included), so a task ends before
    its soft limit even in the threads pool, where Celery enforces no time limit at all.
    """
    if settings.client.timeout_s > settings.client.call_budget_s:
        raise CeleryConfigError(
            f"client.timeout_s={settings.client.timeout_s:g} must not exceed "
            f"client.call_budget_s={settings.client.call_budget_s:g} (one request within one call)"
        )
    chain = [
        ("client.call_budget_s", settings.client.call_budget_s),
        ("worker.soft_time_limit_s", settings.worker.soft_time_limit_s),
        ("worker.time_limit_s", settings.worker.time_limit_s),
        ("worker.visibility_timeout_s", settings.worker.visibility_timeout_s),
    ]
    for (low_name, low), (high_name, high) in pairwise(chain):
        if not low < high:
            raise CeleryConfigError(
                f"time limits must be ordered client call budget < soft < hard < visibility: "
                f"{low_name}={low:g} is not below {high_name}={high:g}"
            )
    if not settings.worker.redis_timeout_s < settings.worker.soft_time_limit_s:
        raise CeleryConfigError(
            f"worker.redis_timeout_s={settings.worker.redis_timeout_s:g} must be below "
            f"worker.soft_time_limit_s={settings.worker.soft_time_limit_s:g} (a stuck store call ends a task "
            "first)"
        )
    if not settings.store.wait_timeout_ms / 1000 < settings.worker.redis_timeout_s:
        raise CeleryConfigError(
            f"store.wait_timeout_ms={settings.store.wait_timeout_ms} must be below "
            f"worker.redis_timeout_s={settings.worker.redis_timeout_s:g} (a WAIT must end before its reply "
            "times out)"
        )
    if not settings.worker.time_limit_s < settings.worker.stall_s:
        # A stall nudge must never re-send a step whose task may legitimately still be running.
        raise CeleryConfigError(
            f"worker.stall_s={settings.worker.stall_s:g} must exceed "
            f"worker.time_limit_s={settings.worker.time_limit_s:g}"
        )


def broker_url(settings: Settings) -> str:
    """SUTURE_BROKER_URL, else the store's Redis; raises NoBrokerConfigured (never a guessed default)."""
    url = settings.broker_url or settings.redis_url
    if not url:
        raise NoBrokerConfigured()
    return url


def backend_url(settings: Settings) -> str:
    """SUTURE_RESULT_BACKEND, else the store's Redis (only chords of benchmarks read it)."""
    return settings.result_backend or store_url(settings)


def sentinel_options(url: str, settings: Settings) -> dict[str, Any]:
    """kombu's and Celery's transport options for a ``sentinel://`` URL (none for any other URL).

    Both read ``master_name`` and ``sentinel_kwargs`` (the connections to the sentinels themselves: their
    password, and timeouts, which redis-py copies from the primary's only when ``sentinel_kwargs`` is unset).
    """
    if not url.startswith(SENTINEL_SCHEME):
        return {}
    if not settings.sentinel.master_name:
        raise CeleryConfigError(
            "a sentinel:// URL needs the primary's name: set sentinel.master_name "
            "(SUTURE_SENTINEL__MASTER_NAME)"
        )
    to_sentinels = connection_options(settings.network, settings.network.broker_timeout_s)
    to_sentinels.pop("health_check_interval")  # the sentinels' connections are short-lived queries
    if settings.sentinel.password is not None:
        to_sentinels["password"] = settings.sentinel.password.get_secret_value()
    return {"master_name": settings.sentinel.master_name, "sentinel_kwargs": to_sentinels}


def configure(settings: Settings) -> Celery:
    """Point ``app`` at these settings' broker and backend with checked limits; idempotent.

    With a Sentry DSN set, Sentry starts here too unless this process already runs a client: every
    process that talks to the broker (the producer API, the CLI, ``suture serve``) reports errors.
    """
    check_time_limits(settings)
    if settings.sentry_dsn is not None:
        from suture.workers.runtime.sentry import ensure_sentry

        ensure_sentry(settings)
    visibility_s = settings.worker.visibility_timeout_s
    # Sweep for abandoned (unacked) messages several times per visibility timeout, so a killed
    # worker's tasks come back soon after the timeout rather than up to 100 s later.
    restore_interval_s = max(1, min(10, int(visibility_s / 4)))
    transport = {
        "visibility_timeout": visibility_s,
        "unacked_restore_interval": restore_interval_s,
        "unacked_restore_throttle": 1,
        # The restore sweep's lock: kombu holds it up to 300 s by default, so a worker killed
        # mid-sweep would stop every other worker from restoring a dead worker's tasks that long.
        "unacked_mutex_expire": max(2, restore_interval_s),
        # Redis: a worker's BRPOP lists the interactive model queue before the bulk ones, but for the
        # share of turns kept for bulk (AMQP has no such option: there the broker alternates queues).
        "queue_order_strategy": "suture.workers.runtime.queue_order:ClassFirstCycle",
    }
    broker, backend = broker_url(settings), backend_url(settings)
    amqp = broker.startswith(AMQP_SCHEMES)
    if amqp and settings.network.amqp_confirm_publish:
        # Publisher confirms: a publish returns once RabbitMQ has the message, or raises; without them a
        # message the broker dropped (a node going down) was sent as far as the publisher knew.
        transport["confirm_publish"] = True
    wanted = {
        "broker_url": broker,
        "result_backend": backend,
        "broker_transport_options": transport
        | broker_socket_options(settings.network)
        | sentinel_options(broker, settings),
        "result_backend_transport_options": {"visibility_timeout": visibility_s}
        | sentinel_options(backend, settings),
        "task_soft_time_limit": settings.worker.soft_time_limit_s,
        "task_time_limit": settings.worker.time_limit_s,
        # RabbitMQ: quorum queues on a topic exchange (native delayed delivery for countdowns), amqp_queues
        "task_queues": amqp_queues(ALL_QUEUES, settings.network.amqp_queue_type) if amqp else None,
    } | connection_settings(settings.network)
    ClassFirstCycle.bulk_share = settings.dispatch.bulk_share
    if wanted != _configured:
        if _configured:
            _drop_connections()
        app.conf.update(wanted)
        _configured.clear()
        _configured.update(wanted)
    return app


def broker_socket_options(network: NetworkSettings) -> dict[str, Any]:
    """The broker connection's socket options, for kombu's Redis and AMQP transports alike.

    Redis: a read timeout on every command (a PUBLISH of a task event into a silent partition fails
    and the consumer reconnects, instead of blocking Celery's loop for the kernel's 15 minutes),
    keep-alive with short probes, and kombu's own check of its BRPOP and pub/sub connections every
    ``health_check_interval_s``. ``retry_on_timeout`` stays off: a timed-out LPUSH may have been applied,
    and kombu sends its publish pipelines only when no write is retried blindly. AMQP (py-amqp): read and
    write timeouts and the same keep-alive probes (``socket_settings``).
    """
    options = connection_options(network, network.broker_timeout_s)
    return options | {
        "retry_on_timeout": False,
        "read_timeout": network.broker_timeout_s,
        "write_timeout": network.broker_timeout_s,
        "socket_settings": options["socket_keepalive_options"],
    }


def connection_settings(network: NetworkSettings) -> dict[str, Any]:
    """Celery's own settings for its broker connect timeout and its Redis result backend's sockets
    (Celery's backend takes no keep-alive probe options: its idle connections rely on the health check)."""
    return {
        "broker_connection_timeout": network.connect_timeout_s,
        "redis_socket_timeout": network.broker_timeout_s,
        "redis_socket_connect_timeout": network.connect_timeout_s,
        "redis_socket_keepalive": True,
        "redis_retry_on_timeout": False,
        "redis_backend_health_check_interval": network.health_check_interval_s,
    }


def waiting_messages(queues: tuple[str, ...] = (*MODEL_QUEUES, CONTROL_QUEUE)) -> dict[str, int]:
    """Messages ready in each of ``queues``, not yet taken by a worker; raises if the broker is unreachable.

    Declaring a queue as Celery declares it reports its ready messages, on Redis (the list's length)
    and AMQP alike; it creates nothing a worker would not (a passive declare fails on a Redis broker
    no worker has consumed from yet).
    """
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        return {q: int(app.amqp.queues[q].bind(channel).queue_declare().message_count) for q in queues}


def _drop_connections() -> None:
    """Forget pooled broker/backend connections so a re-configured app uses its new URLs.

    Only a process that switches brokers needs this (tests, benchmarks); Celery itself does the
    same after a fork (``Celery._after_fork``).
    """
    # Dropped, not closed: kombu keeps pools in a registry by URL and would hand a closed one back
    # if this URL is configured again.
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None
        for cached in ("queues", "default_queue", "router", "send_task_message"):  # hold task_queues
            app.amqp.__dict__.pop(cached, None)
        app.amqp._rtable = None
    app._local = threading.local()
