"""The dispatcher: feeds waiting new jobs to the model queue, interactive first, tenants by weight, exactly
once.

A thread in every worker that consumes ``suture.control`` (started with the watchdog's clock, ``lifecycle``;
not in a model-only worker, whose call threads would slow its passes); the one holding the Redis
lease (``dispatch.lease_s``, renewed a few times per lease) dispatches, the others stand by. Each pass,
for each class while fewer than ``dispatch.ready_target`` messages are ready in its model queue
(``suture.model``, ``suture.model.bulk``: ``app.queue_for``), it picks a class and a tenant
(``suture.tasks.dispatch_order``), moves that tenant's oldest job id to the dispatching record (one Lua
step, only while it holds the lease), publishes the job's first attempt and marks it sent. Steps of
started jobs never pass here: workers publish them at once, so they go ahead of every job still
waiting, and a bulk backlog in ``suture.model.bulk`` never holds back an interactive job. A tenant
running less than its share of the bulk jobs (``lanes``) has its calls go ahead of the others' (in
``suture.model.bulk.ahead``), and its new jobs go while fewer than ``ready_target`` calls are ready
there; any other tenant's while fewer are ready in both bulk queues, so its started jobs still
go before its new ones, or while fewer bulk jobs are in flight than ``dispatch.bulk_jobs_per_slot``
per bulk slot of the live workers (each worker reports its slots with its heartbeat): a started job's
calls then queue behind at most those few new ones, and long first calls overlap the CPU-bound repairs
of jobs further on instead of the whole batch moving in waves. That fill is paced (``FillRamp``): each
job that ends earns 1.5 new ones, so a batch starts with what the ready target sends and grows as its
first jobs end, rather than as one wave of every slot's worth. A batch's last few jobs (at most
``dispatch.bulk_tail_share`` of that fill) go at once, not as a small wave of their own at the end.

A pass that sent nothing is followed by the next after ``dispatch.idle_pass_s`` (0.1 s); meanwhile the
dispatcher only asks, every ``poll_s`` (20 ms), whether an interactive job waits, and passes at once if
so. Full passes fifty times a second while a batch waited on full queues cost a few per cent of the
machine's CPU (measured on the bench), which the batch's own work then lacked.

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
from suture.tasks.dispatch_order import (
    PRIORITY_CLASSES,
    DispatchTurns,
    FillRamp,
    PriorityClass,
    bulk_fill,
    next_class,
    next_tenant,
    tail_fill,
)
from suture.workers.errors import JobNotFound, StoreUnavailable
from suture.workers.store.job_store import JobStore

log = logging.getLogger(__name__)

# Sends a new job's first attempt (``suture.attempt``, n = 1): (job id, its class, shown in Flower (None:
# unknown), its tenant, and whether it goes ahead of the class's other calls, ``lanes``).
Publish = Callable[[str, PriorityClass | None, str | None, bool], None]
# Messages ready in a class's model queues: (in the one read first, in all of them).
ReadyCount = Callable[[PriorityClass], tuple[int, int]]
# Whether a tenant's jobs of a class run under its share (its calls go ahead of the class's others).
UnderShare = Callable[[PriorityClass, str], bool]
# How often the dispatcher re-reads the live workers' bulk slots (they change when a worker starts or stops).
SLOTS_REFRESH_S = 5.0


class Feeder:
    """One dispatcher: ``run_pass()`` once, or ``start()`` a thread that runs passes until ``stop()``."""

    def __init__(
        self,
        store: JobStore,
        settings: DispatchSettings,
        publish: Publish,
        ready: ReadyCount,
        under: UnderShare = lambda job_class, tenant: False,
        slots: Callable[[], int] = lambda: 0,
    ) -> None:
        self._waiting = store.waiting
        self._store = store
        self._settings = settings
        self._publish = publish
        self._ready = ready
        self._under = under
        self._slots = slots
        self._turns = DispatchTurns()
        self._ramp = FillRamp(settings.bulk_jobs_per_slot)
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
        target = self._settings.ready_target
        room = {c: [target - n for n in self._ready(c)] for c in PRIORITY_CLASSES if tenants.get(c)}
        cap, in_flight = self._settings.max_in_flight, None
        if cap is not None:
            in_flight = self._waiting.sent_unfinished()
            cap -= in_flight
        fill = self._fill(tenants, in_flight)
        sent, first = 0, True
        while cap is None or sent < cap:
            tenants, first = (tenants if first else self._waiting.tenants()), False
            sendable = {c: self._sendable(c, tenants.get(c, []), room, fill) for c in PRIORITY_CLASSES}
            job_class = next_class(
                {c: bool(t) for c, t in sendable.items()}, self._turns, self._settings.bulk_share
            )
            if job_class is None:
                break
            weights = self._settings.tenant_weights
            tenant = next_tenant(job_class, tenants[job_class], weights, self._turns, sendable[job_class])
            if tenant is None:
                break
            job_id = self._waiting.take(self.owner, job_class, tenant, time.time())
            if job_id is False:  # the lease lapsed (a long pause): another dispatcher has taken over
                self._renewed_s = 0.0
                break
            if job_id is None:
                continue
            ahead = self._under(job_class, tenant)
            self._publish(str(job_id), job_class, tenant, ahead)
            self._waiting.sent(str(job_id))
            sent += 1
            self._ramp.sent()
            if job_class == "bulk":
                fill -= 1
                if not ahead and room[job_class][1] <= 0:  # sent by the fill, not by the ready target
                    self._ramp.spend()
            room[job_class] = [room[job_class][0] - ahead, room[job_class][1] - 1]
        return sent

    def _fill(self, tenants: dict[PriorityClass, list[str]], in_flight: int | None) -> int:
        """How many bulk jobs may go whatever the bulk queues hold (``bulk_fill``, paced by ``FillRamp``;
        0: none, or the workers' slots are unknown)."""
        per_slot = self._settings.bulk_jobs_per_slot
        live = self._slots() if per_slot > 0 and tenants.get("bulk") else 0
        if live <= 0:
            self._ramp.stop()
            return 0
        counts = self._waiting.counts()  # read once: the jobs in flight and the tail both need it
        in_flight = self._waiting.sent_unfinished(counts) if in_flight is None else in_flight
        self._ramp.observe(in_flight)
        fill = self._ramp.allowed(bulk_fill(live, per_slot, in_flight))
        waiting = sum(counts["bulk"].values())
        return max(fill, tail_fill(live, per_slot, in_flight, waiting, self._settings.bulk_tail_share))

    def _sendable(
        self, job_class: PriorityClass, tenants: list[str], room: dict[PriorityClass, list[int]], fill: int
    ) -> list[str]:
        """The tenants of ``job_class`` whose next job can go now: one under its share (its job goes ahead)
        while fewer than ``ready_target`` calls are ready ahead; any other while fewer are ready in all the
        class's queues (its started jobs go before its new ones), or, for bulk, while fewer jobs are in
        flight than keep the workers' bulk slots busy (``fill``)."""
        if job_class not in room:
            return []
        ahead, total = room[job_class]
        if job_class == "bulk":
            total = max(total, fill)
        return [t for t in tenants if (ahead if self._under(job_class, t) else total) > 0]

    def _resend(self, before_s: float) -> None:
        for job_id in self._waiting.stranded(before_s):
            if self._waiting.unopened(job_id):
                log.warning("job %s: sent again, its dispatcher stopped before marking it sent", job_id)
                self._publish(job_id, self._job_class(job_id), None, False)
            else:
                log.info("job %s: its first attempt was sent before the dispatcher stopped", job_id)
            self._waiting.sent(job_id)

    def _job_class(self, job_id: str) -> PriorityClass | None:
        """A stranded job's class, so it goes to its class's queue again (None: its record is gone)."""
        try:
            return self._store.load(job_id).job_spec.priority
        except JobNotFound:
            return None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                sent = self.run_pass()
            except Exception as exc:  # Redis or the broker down: try again shortly, the ids stay put
                log.warning("dispatcher pass failed: %s: %s", type(exc).__name__, str(exc)[:200])
                sent = 0
                self._stop.wait(1.0)
            if not sent:
                self._idle()

    def _idle(self) -> None:
        """Wait ``idle_pass_s`` for the next pass, cut short as soon as an interactive job waits."""
        until = time.monotonic() + self._settings.idle_pass_s
        while not self._stop.wait(self._settings.poll_s):
            try:
                if time.monotonic() >= until or self._waiting.waits("interactive"):
                    return
            except StoreUnavailable:
                return  # the pass meets the outage and reports it


def start_feeder(settings: Settings) -> Feeder | None:
    """Start this worker's dispatcher thread (None with ``dispatch.enabled`` off: enqueue publishes
    itself)."""
    if not settings.dispatch.enabled:
        return None
    from suture.workers.runtime.app import app, queue_for, waiting_messages
    from suture.workers.runtime.lanes import Lanes
    from suture.workers.runtime.publish import publish
    from suture.workers.store.job_store import get_store
    from suture.workers.store.tenant_load import TenantLoad
    from suture.workers.store.watchlist import WORKER_SILENT_BEATS

    store = get_store(settings)
    lanes = Lanes(TenantLoad(store.redis, store.prefix, settings.dispatch.fair_window_s), settings.dispatch)

    def first_attempt(job_id: str, job_class: PriorityClass | None, tenant: str | None, ahead: bool) -> None:
        shown: dict[str, Any] = {"priority": job_class} if job_class else {}  # Flower shows the kwargs
        if job_class is not None and tenant is not None:
            lanes.note(job_class, tenant, job_id)
        publish(app, "suture.attempt", job_id, 1, ahead=ahead, **shown)

    client = queue_lengths_client(settings)

    def ready(job_class: PriorityClass) -> tuple[int, int]:
        queues = tuple(dict.fromkeys(queue_for("suture.attempt", job_class, ahead=a) for a in (True, False)))
        if client is None:
            counts = list(waiting_messages(queues).values())
        else:  # a Redis broker: LLENs, not kombu's declare, on every pass
            pipe = client.pipeline(transaction=False)
            for queue in queues:
                pipe.llen(queue)
            counts = [int(n) for n in pipe.execute()]
        return counts[0], sum(counts)

    silent_s = settings.worker.watchdog_interval_s * WORKER_SILENT_BEATS
    seen = {"at_s": float("-inf"), "slots": 0}

    def slots() -> int:  # the live workers' bulk slots, re-read every SLOTS_REFRESH_S
        now = time.time()
        if now - seen["at_s"] >= SLOTS_REFRESH_S:
            seen["at_s"], seen["slots"] = now, store.watchlist.model_slots(now, silent_s)
        return int(seen["slots"])

    feeder = Feeder(store, settings.dispatch, first_attempt, ready, lanes.under, slots)
    feeder.start()
    return feeder


def queue_lengths_client(settings: Settings) -> Any:
    """The dispatcher's client for reading queue lengths on a Redis broker (None for another broker), with
    the broker's socket options: a silent broker fails a pass, never hangs the dispatcher."""
    from suture.workers.runtime.app import broker_url
    from suture.workers.store.connection import SENTINEL_SCHEME, Pool, redis_client
    from suture.workers.store.job_store import sentinels_of

    broker = broker_url(settings)
    # Redis with Sentinel: the primary the sentinels name
    if not broker.startswith(("redis://", "rediss://", SENTINEL_SCHEME)):
        return None
    lengths = Pool(2, settings.worker.redis_pool_timeout_s, settings.network.broker_timeout_s)
    return redis_client(broker, lengths, settings.network, sentinels=sentinels_of(settings), decode=False)
