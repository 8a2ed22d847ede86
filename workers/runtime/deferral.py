"""A task whose model call must wait is published again with a countdown, and this execution ends.

The alternative, sleeping in the worker thread, holds one of the pool's threads per waiting call:
behind a spent budget every thread would sleep and the worker would take no other work. Instead the
task's own message is sent again (same name, same ids) with a countdown, and the execution returns
``deferred``: an outcome that did not apply its work, so the poison cap does not count it
(``suture.workers.flow.executions``). Every step is idempotent, so a worker killed between the
re-publish and the ack (the message then runs twice) changes nothing. The countdown is capped below
the broker's visibility timeout (a held message past it would be handed out again) and the watchdog's
stall time (a deferred job still opens a task that often, so it is never taken for stalled).
"""

from __future__ import annotations

import logging
import random

from celery import Task
from celery.exceptions import Reject

from suture.config.settings import Settings
from suture.workers.model.budget_math import countdown_cap_s, countdown_s
from suture.workers.model.budgeted_caller import CallDeferred
from suture.workers.runtime import metrics
from suture.workers.runtime.app import app
from suture.workers.runtime.publish import publish
from suture.workers.runtime.queue_order import BULK_AHEAD_QUEUE, routed_to

log = logging.getLogger(__name__)
DEFERRED = "deferred"


def defer(
    task: Task, deferred: CallDeferred, settings: Settings, outages: tuple[type[Exception], ...]
) -> str:
    """Publish ``task``'s message again after the wait ``deferred`` asks for; returns ``deferred``."""
    cap_s = countdown_cap_s(settings.worker.visibility_timeout_s, settings.worker.stall_s)
    wait_s = countdown_s(deferred.wait_s, cap_s, random.random())
    args, kwargs = list(task.request.args or ()), dict(task.request.kwargs or {})
    ahead = routed_to(task.request.delivery_info) == BULK_AHEAD_QUEUE  # its lane, kept
    try:
        publish(app, task.name, *args, countdown=wait_s, ahead=ahead, **kwargs)
    except outages as exc:  # the broker is away: this very message comes back instead
        raise Reject(type(exc).__name__, requeue=True) from None
    log.info("%s%r deferred %.2f s: %s", task.name, tuple(args), wait_s, deferred)
    reason = "budget" if deferred.reason == "budget" else "provider_429"  # known_labels.DEFERRAL_REASONS
    metrics.call_deferred(deferred.model, reason, wait_s)
    return DEFERRED
