"""The Celery side of Batch API rounds: ``suture.batch_round`` and the rounds object a worker's flow holds.

``suture.batch_round(round_id)`` (queue ``suture.control``) takes one round one step on
(``suture.workers.flow.batch_rounds.BatchRounds.advance``): submit its batch, poll it, or collect
it. It is published by the watchdog's sweep, never with a countdown (a message held for later by a
worker would be lost with it, or come back after the visibility timeout): the round's next poll
time is in the job store, and the sweep that finds it due sends the task. A Redis or broker outage
requeues the message (the step is idempotent); a Files/Batch API failure is retried at the next
poll; any other error is logged and reported, and the sweep sends the round again after its lease.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from celery import Task
from celery.exceptions import Reject
from kombu.exceptions import OperationalError

from suture.config.settings import Settings
from suture.workers.errors import StoreUnavailable
from suture.workers.flow.batch_rounds import BatchRounds, StepSender
from suture.workers.model.batch_client import BatchClient
from suture.workers.runtime.app import app
from suture.workers.runtime.publish import publish
from suture.workers.store.batch_lines import BatchLines
from suture.workers.store.job_store import get_store

log = logging.getLogger(__name__)
_OUTAGES = (
    StoreUnavailable,
    OperationalError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)


def build_rounds(settings: Settings, steps: StepSender) -> BatchRounds:
    """The rounds of this process: the job store's Batch API state, one Files/Batch client."""
    store = get_store(settings)
    lines = BatchLines(store.redis, prefix=store.prefix, ttl_s=settings.worker.store_ttl_s)
    return BatchRounds(
        settings=settings,
        lines=lines,
        service=BatchClient(settings),
        steps=steps,
        send_round=lambda round_id: publish(app, "suture.batch_round", round_id),
    )


@app.task(name="suture.batch_round", bind=True)
def batch_round(self: Task, round_id: str) -> Any:
    """Submit, poll or collect one Batch API round; returns the round's status."""
    from suture.workers.runtime.tasks import flow

    rounds = getattr(flow(), "rounds", None)
    if rounds is None:
        return "no batch api"
    try:
        return rounds.advance(round_id)
    except _OUTAGES as exc:
        log.warning("batch round %s requeued, Redis/broker unavailable: %s", round_id, type(exc).__name__)
        raise Reject(type(exc).__name__, requeue=True) from None
    except Exception:  # a bug: logged; the sweep sends the round again once its lease expires
        log.exception("batch round %s failed", round_id)
        return "error"
