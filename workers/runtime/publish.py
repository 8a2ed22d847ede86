"""The one way suture publishes a task: ids only, shown as such, with its task-sent event in one pipeline.

The producer (``enqueue``, ``resume``, ``cancel``) and the workers (each job's next step) both call
``publish``; the producer through ``publish_or_refuse``, which bounds the retries and turns a broker
failure into ``BrokerUnavailable`` (never showing the URL's password). Importing it loads Celery's app
(``suture.workers.runtime.app``) and nothing of the
worker side: no task module, no model client, and kombu stays unpatched.
"""

from __future__ import annotations

from typing import Any

import redis
from celery import Celery
from kombu.exceptions import OperationalError

from suture.config.redaction import redact, url_secrets
from suture.config.settings import Settings
from suture.workers.errors import BrokerUnavailable
from suture.workers.runtime.amqp_queues import PRECONDITION_FAILED
from suture.workers.runtime.app import broker_url, configure, queue_for

# A producer's publish retries briefly (a broker failing over), then gives up: an enqueue must not
# hang on a dead broker. Celery's default is 3 retries; each retry also waits for the connection attempt.
PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


def publish(
    app: Celery,
    name: str,
    *args: Any,
    producer: Any = None,
    retry_policy: dict[str, Any] | None = None,
    countdown: float | None = None,
    ahead: bool = False,
    **kwargs: Any,
) -> None:
    """Send task ``name`` with ``args``/``kwargs`` (ids only) to its queue; raises what kombu raises.

    The task and its task-sent event go out in one Redis pipeline (kombu's publish batch; an
    enclosing batch, as for a surgical round's slices, flushes them with the rest). ``ignore_result``:
    without it ``send_task`` subscribes this process to the task's result channel (one more Redis
    command per task, and a subscription kept for good), and results live in the job store.
    ``retry_policy`` bounds the publish retries (the producer's must not hang on a dead broker);
    ``countdown``: run no sooner than this many seconds from now (a deferred model call). A model
    call's ``priority`` keyword (its job's class, also shown in Flower) picks its queue; ``ahead``: a bulk
    call of a tenant running less than its share, read before the other bulk calls (``lanes``).
    """
    options: dict[str, Any] = {"retry_policy": retry_policy} if retry_policy is not None else {}
    if countdown is not None:
        options["countdown"] = countdown
    with app.producer_or_acquire(producer) as publisher, publisher.batch():
        app.send_task(
            name,
            args=list(args),
            kwargs=kwargs,
            queue=queue_for(name, kwargs.get("priority"), ahead=ahead),
            argsrepr=repr(args),
            kwargsrepr=repr(kwargs),
            producer=publisher,
            ignore_result=True,
            **options,
        )


def publish_or_refuse(
    settings: Settings, name: str, *args: Any, consequence: str = "", **kwargs: Any
) -> None:
    """Publish task ``name`` (ids only); raises BrokerUnavailable (``consequence`` appended) if it fails."""
    try:
        publish(configure(settings), name, *args, retry_policy=PUBLISH_RETRY_POLICY, **kwargs)
    except (OperationalError, OSError, redis.exceptions.ConnectionError) as exc:
        reason = redact(f"{type(exc).__name__}: {_first_line(exc)}", url_secrets(broker_url(settings)))
        reason = reason.rstrip(".")
        raise BrokerUnavailable(f"{reason}; {consequence}" if consequence else reason) from None
    except Exception as exc:
        if getattr(exc, "reply_code", None) != PRECONDITION_FAILED:
            raise
        # RabbitMQ still holds a classic queue of this name (an upgrade not yet migrated): nothing was sent
        reason = f"RabbitMQ refused suture's queue ({_first_line(exc)[:160]}); run `suture migrate-queues`"
        raise BrokerUnavailable(f"{reason}; {consequence}" if consequence else reason) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0][:200]
