"""The dispatcher: feeds waiting new jobs to the model queue, interactive first, tenants by weight, exactly once.

A thread in every worker that consumes ``suture.control`` (started with the watchdog's clock, ``lifecycle``;
not in a model-only worker, whose call threads would slow its passes); the one holding the Redis
lease (``dispatch.lease_s``, renewed every pass) dispatches, the others stand by. Each pass, while fewer
than ``dispatch.ready_target`` messages are ready in ``suture.model`` (``app.waiting_messages``, on Redis
and AMQP alike), it picks a class and a tenant (``suture.tasks.dispatch_order``), moves that tenant's
oldest job id to the dispatching record (one Lua step, only while it holds the lease), publishes the
job's first attempt and marks it sent. Steps of started jobs never pass here: workers publish them at
once, so they go ahead of every job still waiting.

Exactly once across a SIGKILL: an id is always in one place, its waiting list, the dispatching record,
or sent. A dispatcher killed between taking and marking leaves the id in the record; the next lease
holder finds it there (``stranded``) and publishes it again unless a task has opened the job already.
A message that did get out before the kill is then sent twice, which the flow absorbs: attempt 1
applies once (a compare-and-set on the job's version), the later copy finds it applied. A publish that
fails (a broker outage) leaves the id in the record too, sent again after ``lease_s``.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from suture.config.dispatch_settings import DispatchSettings
from suture.config.settings import Settings
from suture.tasks.dispatch_order import DispatchTurns, PriorityClass, next_class, next_tenant
from suture.workers.store.job_store import JobStore

log = logging.getLogger(__name__)

# Sends a new job's first attempt (``suture.attempt``, n = 1), its class shown in Flower (None: unknown).
Publish = Callable[[str, PriorityClass | None], None]
ReadyCount = Callable[[], int]  # messages ready in the model queue


class Feeder:
    """One dispatcher: ``run_pass()`` once, or ``start()`` a thread that runs passes until ``stop()``."""

    def __init__(
        self, store: JobStore, settings: DispatchSettings, publish: Publish, ready: ReadyCount
    ) -> None:
        self._waiting = store.waiting
        self._settings = settings
        self._publish = publish
        self._ready = ready
        self._turns = DispatchTurns()
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._swept_s = 0.0
        self._renewed_s = 0.0  # when this dispatcher last took or renewed its lease (0: not held)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="suture-dispatcher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def run_pass(self) -> int:
        """Hold the lease, send again what a dead dispatcher left, then feed the queue; returns jobs sent."""
        now = time.time()
        # Renewed a few times per lease, not every pass (a pass every poll_s costs the cluster's CPU):
        # ``take`` checks the lease anyway, so a lapsed one stops this dispatcher at its next job.
        held = 1
        if now - self._renewed_s >= self._settings.lease_s / 4:
            held = self._waiting.hold_lease(self.owner, self._settings.lease_s)
            self._renewed_s = now if held else 0.0
        if not held:
            return 0
        if held == 2 or now - self._swept_s >= self._settings.lease_s:
            # Newly held: whatever is still in the record was left by the previous holder. Later sweeps
            # catch this holder's own failed publishes, once they are a lease old.
            self._resend(now if held == 2 else now - self._settings.lease_s)
            self._swept_s = now
        return self._feed()

    def _feed(self) -> int:
        tenants = self._waiting.tenants()
        if not any(tenants.values()):  # nothing waits: no need to ask the broker
            return 0
        room = self._settings.ready_target - self._ready()
        if self._settings.max_in_flight is not None and room > 0:
            room = min(room, self._settings.max_in_flight - self._waiting.sent_unfinished())
        sent, first = 0, True
        while sent < room:
            tenants, first = (tenants if first else self._waiting.tenants()), False
            job_class = next_class(
                {c: bool(t) for c, t in tenants.items()}, self._turns, self._settings.bulk_share
            )
            if job_class is None:
                break
            tenant = next_tenant(job_class, tenants[job_class], self._settings.tenant_weights, self._turns)
            if tenant is None:
                break
            job_id = self._waiting.take(self.owner, job_class, tenant, time.time())
            if job_id is False:  # the lease lapsed (a long pause): another dispatcher has taken over
                self._renewed_s = 0.0
                break
            if job_id is None:
                continue
            self._publish(str(job_id), job_class)
            self._waiting.sent(str(job_id))
            sent += 1
        return sent

    def _resend(self, before_s: float) -> None:
        for job_id in self._waiting.stranded(before_s):
            if self._waiting.unopened(job_id):
                log.warning("job %s: sent again, its dispatcher stopped before marking it sent", job_id)
                self._publish(job_id, None)
            else:
                log.info("job %s: its first attempt was sent before the dispatcher stopped", job_id)
            self._waiting.sent(job_id)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                sent = self.run_pass()
            except Exception as exc:  # Redis or the broker down: try again shortly, the ids stay put
                log.warning("dispatcher pass failed: %s: %s", type(exc).__name__, str(exc)[:200])
                sent = 0
                self._stop.wait(1.0)
            if not sent:
                self._stop.wait(self._settings.poll_s)


def start_feeder(settings: Settings) -> Feeder | None:
    """Start this worker's dispatcher thread (None with ``dispatch.enabled`` off: enqueue publishes itself)."""
    if not settings.dispatch.enabled:
        return None
    import redis

    from suture.workers.runtime.app import MODEL_QUEUE, app, broker_url, waiting_messages
    from suture.workers.runtime.publish import publish
    from suture.workers.store.job_store import get_store

    def first_attempt(job_id: str, job_class: PriorityClass | None) -> None:
        shown: dict[str, Any] = {"priority": job_class} if job_class else {}  # Flower shows the kwargs
        publish(app, "suture.attempt", job_id, 1, **shown)

    broker = broker_url(settings)
    client = redis.Redis.from_url(broker) if broker.startswith(("redis://", "rediss://")) else None

    def ready() -> int:
        if client is not None:  # a Redis broker: one LLEN, not kombu's declare, on every pass
            return int(client.llen(MODEL_QUEUE))
        return waiting_messages((MODEL_QUEUE,))[MODEL_QUEUE]

    feeder = Feeder(get_store(settings), settings.dispatch, first_attempt, ready)
    feeder.start()
    return feeder
