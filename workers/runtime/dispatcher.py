"""How a worker sends a job's next tasks through Celery: the flow's ``Dispatcher`` for real brokers.

A model call goes to its job's class's queue (``app.queue_for``), a bulk one ahead of the others
when its tenant runs less than its share (``lanes``); bookkeeping goes to ``suture.control``.
Arguments are ids only, and shown as such (``publish``).
"""

from __future__ import annotations

import logging
from typing import Any

from suture.config.settings import Settings
from suture.tasks.causes import GiveUpCause
from suture.tasks.dispatch_order import PriorityClass
from suture.workers.runtime.app import CONTROL_QUEUE, MODEL_QUEUES, app, waiting_messages
from suture.workers.runtime.lanes import Lanes
from suture.workers.runtime.publish import publish
from suture.workers.store.job_store import get_store
from suture.workers.store.tenant_load import TenantLoad

log = logging.getLogger(__name__)

WATCHED_QUEUES = (*MODEL_QUEUES, CONTROL_QUEUE)


class CeleryDispatcher:
    """Publishes a job's next tasks; arguments are ids only, and shown as such."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        store = get_store(settings)
        self.lanes = Lanes(
            TenantLoad(store.redis, store.prefix, settings.dispatch.fair_window_s), settings.dispatch
        )

    def attempt(self, job_id: str, n: int, priority: PriorityClass, tenant: str | None) -> None:
        ahead = self.lanes.ahead(priority, tenant, job_id)
        publish(app, "suture.attempt", job_id, n, ahead=ahead, priority=priority)

    def slices(
        self, job_id: str, n: int, pointers: list[str], priority: PriorityClass, tenant: str | None
    ) -> None:
        ahead = self.lanes.ahead(priority, tenant, job_id)
        # One Redis pipeline for every slice and its task-sent event: all are published on leaving
        # the block, or none if one fails (the redelivered step re-sends them).
        with app.producer_or_acquire() as producer, producer.batch():
            for pointer in pointers:
                publish(
                    app,
                    "suture.surgical_slice",
                    job_id,
                    n,
                    pointer,
                    producer=producer,
                    ahead=ahead,
                    priority=priority,
                )

    def merge(self, job_id: str, n: int) -> None:
        publish(app, "suture.merge", job_id, n)

    def waiting(self) -> int | None:
        try:  # new jobs the dispatcher still holds count too: the watchdog must not send them around it
            return sum(waiting_messages(WATCHED_QUEUES).values()) + get_store(self.settings).waiting.total()
        except Exception as exc:  # the broker is down or the queue unknown: the watchdog waits
            log.info("cannot count waiting messages: %s", type(exc).__name__)
            return None

    def deliver(self, job_id: str, *, give_up: str | None = None, cause: GiveUpCause | None = None) -> None:
        # Only what is set: Flower shows the kwargs, and a plain delivery has none.
        kwargs: dict[str, Any] = {
            name: value for name, value in (("give_up", give_up), ("cause", cause)) if value
        }
        publish(app, "suture.deliver", job_id, **kwargs)

    def callback(self, job_id: str, tag: str) -> None:
        publish(app, "suture.callback", job_id, tag)

    def task_callback(self, name: str, job_id: str, status: str) -> None:
        # Only a name listed in webhook.allowed_tasks gets here (Delivery checks it).
        app.send_task(name, args=[job_id, status], argsrepr=repr((job_id, status)), kwargsrepr="{}")
