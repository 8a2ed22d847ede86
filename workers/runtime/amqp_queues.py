"""suture's task queues on RabbitMQ: quorum queues by default, a check at worker start, the move from classic.

``network.amqp_queue_type: quorum`` (the default) declares each of suture's queues with
``x-queue-type: quorum``, bound to one topic exchange (``suture.tasks``, routing key = queue name): a topic
exchange, so Celery's native delayed delivery carries a countdown (a deferred model call, a retry) in the
broker instead of a worker holding the message until it is due (which per-consumer prefetch, the only kind
quorum queues allow, would turn into a blocked consumer). ``classic`` declares nothing of suture's own:
Celery's defaults, as before quorum queues (a direct exchange per queue).

RabbitMQ refuses to redeclare an existing classic queue as a quorum one (``PRECONDITION_FAILED``). A worker
checks at start (``check_queue_types``) and refuses to run with one line naming the queues and the way out;
``migrate`` (``suture migrate-queues``) moves them: with no consumer left on a classic queue, its messages
go to a holding (classic, durable) queue (each publish confirmed before its original is acked), the classic
queue is deleted only if empty, the quorum one is declared, and the messages come back in their order.
Interrupted, it resumes where it stopped (a holding queue left behind is emptied into its queue next run).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from kombu import Exchange, Queue

TASK_EXCHANGE = "suture.tasks"
PRECONDITION_FAILED, NOT_FOUND = 406, 404  # AMQP reply codes: a redeclare with other arguments; no such queue
HOLDING_SUFFIX = ".migrating"  # a classic queue's messages wait here while it becomes a quorum queue


class QueueTypeMismatch(Exception):
    """The broker holds suture queues of another type than configured; str() is the one line to show."""


def amqp_queues(names: Iterable[str], queue_type: str) -> tuple[Queue, ...] | None:
    """The ``task_queues`` for ``queue_type`` (None for classic: Celery's default declarations)."""
    if queue_type == "classic":
        return None
    exchange = Exchange(TASK_EXCHANGE, type="topic", durable=True)
    arguments = {"x-queue-type": queue_type}
    return tuple(Queue(name, exchange, routing_key=name, queue_arguments=arguments) for name in names)


def mismatched(connection: Any, queues: Iterable[Queue]) -> list[str]:
    """The names among ``queues`` the broker refuses to declare as configured (another type held)."""
    found = []
    for queue in queues:
        channel = connection.channel()
        try:
            queue.bind(channel).declare()
        except connection.channel_errors as exc:
            if getattr(exc, "reply_code", None) != PRECONDITION_FAILED:
                raise
            found.append(queue.name)
        finally:
            with contextlib.suppress(Exception):
                channel.close()
    return found


def check_queue_types(app: Any, names: Iterable[str]) -> None:
    """Declare ``names`` as configured; raises QueueTypeMismatch if the broker holds them as another type."""
    queues = [app.amqp.queues[name] for name in names if name in app.amqp.queues]
    with app.connection_for_write() as connection:
        refused = mismatched(connection, queues)
    if refused:
        queue_type = (queues[0].queue_arguments or {}).get("x-queue-type", "classic")
        raise QueueTypeMismatch(
            f"RabbitMQ holds {', '.join(refused)} as another queue type than {queue_type}: stop every "
            "worker and producer, then run `suture migrate-queues` (it moves their messages), or set "
            'network.amqp_queue_type: classic (docs/operations.md, "RabbitMQ")'
        )


def migrate(app: Any, names: Iterable[str], say: Callable[[str], None] = print) -> dict[str, int]:
    """Make each of ``names`` the configured (quorum) queue, keeping its messages; returns messages moved.

    Refuses (QueueTypeMismatch) a classic queue that still has consumers: workers must be stopped first,
    or a message they hold unacked would come back to a queue about to be deleted.
    """
    moved: dict[str, int] = {}
    with app.connection_for_write() as connection:
        raw = connection.connection  # py-amqp's connection: basic_get and confirmed publishes
        for name in names:
            queue: Queue = app.amqp.queues[name]
            holding = Queue(name + HOLDING_SUFFIX, durable=True)  # classic: deleted only if empty
            count = 0
            if mismatched(connection, [queue]):
                consumers = (_passive(raw, name) or (0, 0))[1]
                if consumers:
                    raise QueueTypeMismatch(
                        f"{name} still has {consumers} consumer(s): stop every worker before migrating"
                    )
                holding.bind(connection.default_channel).declare()
                count += _move(raw, name, holding.name)
                channel = raw.channel()
                channel.queue_delete(name, if_unused=True, if_empty=True)
                channel.close()
                queue.bind(connection.default_channel).declare()
                say(f"{name}: classic queue replaced by a quorum queue")
            if _passive(raw, holding.name) is not None:  # this run's, or one an interrupted run left
                _move(raw, holding.name, name)
                channel = raw.channel()
                channel.queue_delete(holding.name, if_empty=True)
                channel.close()
            moved[name] = count
            say(f"{name}: {count} message(s) moved")
    return moved


def _passive(raw: Any, name: str) -> tuple[int, int] | None:
    """(messages, consumers) of queue ``name``, or None if it does not exist."""
    channel = raw.channel()
    try:
        _, messages, consumers = channel.queue_declare(name, passive=True)
    except Exception as exc:
        if getattr(exc, "reply_code", None) != NOT_FOUND:
            raise
        return None
    with contextlib.suppress(Exception):
        channel.close()
    return int(messages), int(consumers)


def _move(raw: Any, source: str, target: str) -> int:
    """Move every ready message of ``source`` to queue ``target`` in order; each acked once confirmed."""
    channel = raw.channel()
    count = 0
    try:
        while (message := channel.basic_get(source, no_ack=False)) is not None:
            copy = type(message)(message.body, **message.properties)
            channel.basic_publish_confirm(copy, exchange="", routing_key=target)
            channel.basic_ack(message.delivery_tag)
            count += 1
    finally:
        with contextlib.suppress(Exception):
            channel.close()
    return count
