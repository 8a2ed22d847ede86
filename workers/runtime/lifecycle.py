"""A suture worker's life: what starts with it (Sentry, metrics, the watchdog's clock) and stops with it.

- ``worker_init`` (main process, before the pool): the Celery app configured, Sentry started if a DSN
  is set, and for a prefork worker with metrics, ``prometheus_client``'s multiprocess mode chosen
  before any metric exists.
- ``worker_process_init`` (each prefork child): Sentry again (its transport does not survive a fork).
- ``worker_ready``: a loud warning if the store's Redis has no AOF (``persistence``), the metrics endpoint on
  ``worker.metrics_port``, and the watchdog's clock, a thread
  of the worker's own process that beats for the worker (``suture status``; with the slots its bulk model
  calls may hold, which the dispatcher keeps busy) and, in a worker that
  consumes ``suture.control``, sweeps (ends jobs past their deadline, nudges stalled ones) at most once
  per interval cluster-wide, each sweep a Sentry Cron check-in. No task per tick: nothing floods
  Flower's task list, and a SIGKILLed worker's lock simply expires so another control worker's clock
  takes the next interval. Beside it, in a worker that consumes ``suture.control``, the dispatcher of new
  jobs (``suture.workers.runtime.feeder``): one active cluster-wide under its lease.
- ``worker_shutdown``: the clock and the endpoint stopped, the multiprocess directory removed.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from celery import signals

from suture.config.settings import Settings

log = logging.getLogger(__name__)

_running: dict[str, Any] = {}
_concurrency = {"slots": 0}  # this worker's, read at init: its heartbeat reports the slots bulk calls may use


def connect(settings: Callable[[], Settings], flow: Callable[[], Any]) -> None:
    """Connect the worker's signal handlers; ``settings`` and ``flow`` give this process's (cached) ones."""

    def on_worker_init(sender: Any = None, **_: Any) -> None:
        _init_worker(sender, settings())

    def on_process_init(**_: Any) -> None:
        from suture.workers.runtime.sentry import init_sentry

        init_sentry(settings())

    def on_process_shutdown(pid: int | None = None, **_: Any) -> None:
        from suture.workers.runtime import metrics

        metrics.child_exited(pid or os.getpid())

    def on_worker_ready(sender: Any = None, **_: Any) -> None:
        current = settings()
        if current.worker.metrics_port is not None:
            from suture.workers.runtime import metrics

            _running["metrics"] = metrics.serve(current, current.worker.metrics_port)
        _warn_if_bulk_unread(sender)
        from suture.workers.runtime.persistence import warn_if_not_persistent

        warn_if_not_persistent(current)  # a Redis without AOF loses every job in a restart: say it loudly
        control = _consumes_control(sender)
        _running["clock"] = _start_clock(current, flow, sweeps=control, model_slots=_model_slots(sender))
        if control:  # not beside 100 model-call threads: its passes would wait for their GIL
            from suture.workers.runtime.feeder import start_feeder

            _running["feeder"] = start_feeder(current)  # the dispatcher of new jobs (one active: a lease)

    def on_worker_shutdown(**_: Any) -> None:
        from suture.workers.runtime import metrics

        for name in ("feeder", "clock"):
            running = _running.pop(name, None)
            if running is not None:
                running.stop()
        server = _running.pop("metrics", None)
        if server is not None:
            server.shutdown()
        metrics.remove_multiprocess_dir()

    # weak=False: the handlers are closures, kept alive by the signals themselves.
    signals.worker_init.connect(on_worker_init, weak=False)
    signals.worker_process_init.connect(on_process_init, weak=False)
    signals.worker_process_shutdown.connect(on_process_shutdown, weak=False)
    signals.worker_ready.connect(on_worker_ready, weak=False)
    signals.worker_shutdown.connect(on_worker_shutdown, weak=False)


def _init_worker(sender: Any, current: Settings) -> None:
    """Set up a worker process before it takes a task: pools, broker, slots kept for interactive calls,
    Sentry."""
    from suture.tasks.dispatch_order import bulk_slot_limit
    from suture.workers.runtime import metrics
    from suture.workers.runtime.app import configure
    from suture.workers.runtime.cpu_turns import use_turns
    from suture.workers.runtime.queue_order import ClassFirstCycle
    from suture.workers.runtime.sentry import init_sentry
    from suture.workers.store.connection import size_pool_for

    # Before any task opens the store: one connection per concurrent task, so none waits for one.
    concurrency = int(getattr(sender, "concurrency", 0) or 0)
    _concurrency["slots"] = concurrency
    size_pool_for(concurrency)
    _quiet_http_logs()
    configure(current)
    ClassFirstCycle.bulk_slots = bulk_slot_limit(concurrency, current.dispatch.interactive_slots)
    use_turns(current.worker.bulk_cpu_turns, current.worker.bulk_cpu_turns_beside_interactive)
    init_sentry(current)
    if current.worker.metrics_port is not None and _is_prefork(sender):
        metrics.use_multiprocess_mode()


def _quiet_http_logs() -> None:
    """No log line per model request: at 1,000 calls in flight the SDK's HTTP client's INFO lines cost
    CPU the worker needs, and suture logs each failed or retried call itself (its status, never its body)."""
    for name in ("httpx", "httpx2"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _start_clock(settings: Settings, flow: Callable[[], Any], *, sweeps: bool, model_slots: int = 0) -> Any:
    from suture.workers.runtime.monitor import checked_in
    from suture.workers.runtime.watchdog import WatchdogClock
    from suture.workers.store.job_store import get_store
    from suture.workers.webhooks import target_rules

    interval_s = settings.worker.watchdog_interval_s
    store = get_store(settings)
    owner = f"{socket.gethostname()}:{os.getpid()}"

    def sweep() -> None:
        checked_in(lambda: flow().watchdog(), interval_s=interval_s)

    rules = target_rules(settings.webhook)

    def beat() -> None:
        store.watchlist.beat(owner, time.time(), model_slots, in_hand=_jobs_in_hand())
        # Producers check a callback against these at enqueue (a `suture serve` configured apart from us).
        store.outbox.announce(rules, ttl_s=3 * interval_s)

    # Beats often enough that a task running longer than idle_stall_s is in this worker's last beat.
    beat_s = min(interval_s, settings.worker.idle_stall_s / 3)
    clock = WatchdogClock(
        store.redis, sweep if sweeps else None, interval_s=interval_s, owner=owner, beat=beat, beat_s=beat_s
    )
    clock.start()
    return clock


def _jobs_in_hand() -> set[str]:
    """The jobs of the suture tasks this worker holds: running, prefetched, or waiting for a countdown."""
    from celery.worker import state

    held = [*state.active_requests, *state.reserved_requests, *state.scheduled_requests]
    jobs: set[str] = set()
    for request in held:
        try:
            args = request.args
        except Exception:  # a request whose body cannot be read names no job
            continue
        if str(getattr(request, "task_name", "")).startswith("suture.") and args:
            jobs.add(str(args[0]))
    return jobs


def _model_slots(consumer: Any) -> int:
    """The slots this worker's bulk model calls may hold (0: it reads no model queue), for its heartbeat."""
    from suture.workers.runtime.app import MODEL_QUEUES
    from suture.workers.runtime.queue_order import ClassFirstCycle

    names = _queue_names(consumer)
    if names is not None and not names & set(MODEL_QUEUES):
        return 0
    return ClassFirstCycle.bulk_slots or _concurrency["slots"]


def _is_prefork(worker: Any) -> bool:
    pool = getattr(worker, "pool_cls", None)
    name = pool if isinstance(pool, str) else getattr(pool, "__module__", "")
    return any(kind in str(name).lower() for kind in ("prefork", "processes"))


def _queue_names(consumer: Any) -> set[str] | None:
    """The queues this worker consumes (None: they cannot be told)."""
    try:
        return {queue.name for queue in consumer.task_consumer.queues}
    except AttributeError:
        return None


def _consumes_control(consumer: Any) -> bool:
    """True if this worker consumes ``suture.control`` (or its queues cannot be told: sweep anyway)."""
    from suture.workers.runtime.app import CONTROL_QUEUE

    names = _queue_names(consumer)
    return names is None or CONTROL_QUEUE in names


def _warn_if_bulk_unread(consumer: Any) -> None:
    """Warn a worker told to read ``suture.model`` alone (a ``-Q`` written before the bulk queues existed):
    bulk jobs wait until some worker reads the bulk queues."""
    from suture.workers.runtime.app import MODEL_QUEUE, MODEL_QUEUES

    names = _queue_names(consumer) or set()
    missing = [queue for queue in MODEL_QUEUES if queue not in names]
    if MODEL_QUEUE in names and missing:
        log.warning(
            "this worker reads %s but not %s: bulk jobs wait for a worker that reads them "
            "(add them to --queues; `suture worker` reads every queue by default)",
            MODEL_QUEUE,
            ", ".join(missing),
        )
