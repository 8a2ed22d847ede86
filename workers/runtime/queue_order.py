"""The order a worker reads its queues on a Redis broker: interactive model calls first, then bulk ones.

Model calls wait in three queues, read in this order: ``suture.model`` (interactive jobs, and jobs
stored before classes), ``suture.model.bulk.ahead`` (bulk jobs of a tenant running less than its
share, ``lanes``) and ``suture.model.bulk`` (every other bulk job). kombu's Redis transport asks one BRPOP for
all of a
worker's queues, and Redis answers from the first listed key that holds a message; which key comes
first is a cycle object's choice (``queue_order_strategy``, a transport option set by
``app.configure``). ``ClassFirstCycle`` keeps kombu's round robin over the queues, so control and
callbacks get their turns as before, but lists the model queues in that order wherever they stand,
except for the share of turns kept for bulk (``dispatch.bulk_share``,
``suture.tasks.dispatch_order.bulk_credit_after``), when the bulk queues go first: a steady
interactive stream never stops the batches already started. An AMQP broker has no such option and
delivers from a worker's queues in turn; there an interactive call waits behind a few bulk calls, not
behind the backlog.

Order alone is not enough: a worker whose slots are all held by bulk calls takes nothing new until one
ends, and a batch's first attempts run for seconds. So a worker also keeps ``dispatch.interactive_slots``
of its slots free of bulk calls (``bulk_slots``, set at worker start by ``lifecycle``): while it holds
that many bulk messages, its BRPOP lists no bulk queue, and asks again after ``HELD_BACK_BRPOP_S``
rather than kombu's second (``kombu_patches``), so a bulk slot that frees meanwhile is soon used.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from kombu.utils.scheduling import round_robin_cycle

from suture.tasks.dispatch_order import PriorityClass, bulk_credit_after

MODEL_QUEUE = "suture.model"  # model calls of interactive jobs (and of jobs stored before classes)
BULK_AHEAD_QUEUE = "suture.model.bulk.ahead"  # bulk calls of a tenant running less than its share
BULK_MODEL_QUEUE = "suture.model.bulk"  # every other bulk call: taken last
BULK_QUEUES = (BULK_AHEAD_QUEUE, BULK_MODEL_QUEUE)
MODEL_QUEUES = (MODEL_QUEUE, *BULK_QUEUES)  # in the order a worker reads them
# The 28 countdown bits RabbitMQ's native delayed delivery (quorum queues) puts before a routing key.
DELAY_PREFIX = re.compile(r"^(?:[01]\.){28}")
HELD_BACK_BRPOP_S = 0.05  # a BRPOP that lists no bulk queue (bulk holds its slots) waits this long at most


def routed_to(delivery_info: dict[str, Any] | None) -> str:
    """The queue a message was sent to by name: its routing key, less any countdown prefix (RabbitMQ)."""
    return DELAY_PREFIX.sub("", str((delivery_info or {}).get("routing_key") or ""), count=1)


def bulk_requests_held() -> int:
    """Bulk messages this worker process holds (received, not yet finished): Celery's own bookkeeping."""
    from celery.worker import state

    held = tuple(state.reserved_requests)  # a copy: tasks end (and leave the set) in other threads
    return sum(1 for request in held if routed_to(request.delivery_info) in BULK_QUEUES)


class ClassFirstCycle(round_robin_cycle):
    """kombu's round robin over a worker's queues, with its model queues in class order where they stand."""

    bulk_share: ClassVar[float] = 0.1  # set from the settings by app.configure
    bulk_slots: ClassVar[int | None] = (
        None  # at most this many bulk messages held (None: no limit; lifecycle)
    )

    def __init__(self, it: Any = None) -> None:
        super().__init__(it)
        self.credit = 0.0
        self.bulk_first = False

    def consume(self, n: int) -> list[str]:
        """The queues to read, in order: the model queues put in class order in the places they hold."""
        order = list(self.items[:n])
        if MODEL_QUEUE in order and self.bulk_full():  # the slots left are kept for interactive calls
            order = [queue for queue in order if queue not in BULK_QUEUES]
        both = MODEL_QUEUE in order and any(queue in order for queue in BULK_QUEUES)
        self.bulk_first = both and self.credit >= 1.0 - 1e-9
        ranked = (*BULK_QUEUES, MODEL_QUEUE) if self.bulk_first else MODEL_QUEUES
        places = sorted(i for i, queue in enumerate(order) if queue in MODEL_QUEUES)
        for place, queue in zip(places, [q for q in ranked if q in order], strict=True):
            order[place] = queue
        return order

    def bulk_held(self) -> int:
        """Bulk messages this worker holds now (a method, so a test can say how many)."""
        return bulk_requests_held()

    def bulk_full(self) -> bool:
        """True if this worker holds as many bulk messages as it may (``bulk_slots``)."""
        return self.bulk_slots is not None and self.bulk_held() >= self.bulk_slots

    def rotate(self, last_used: str) -> Any:
        """Note the class of the call just taken (credit toward bulk's turn), then rotate as kombu does."""
        if last_used in MODEL_QUEUES:
            served: PriorityClass = "interactive" if last_used == MODEL_QUEUE else "bulk"
            self.credit = bulk_credit_after(
                self.credit, self.bulk_share, bulk_first=self.bulk_first, served=served
            )
        return super().rotate(last_used)
