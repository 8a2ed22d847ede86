"""Callbacks a job's producer asks for: checked at enqueue, signed, and delivered off the job's path.

A callback is an http(s) URL (a Standard Webhooks POST of the job's result) or, only if listed in
``webhook.allowed_tasks``, a Celery task name. The same check runs for every entry point (the Python
API, the CLI, the HTTP API) at enqueue, against the producer's settings and the rules the workers
announce (``target_rules``, refreshed with their heartbeat: a callback the workers would refuse is
refused at enqueue, naming the settings that differ), and again at delivery after resolving the host, so a
callback
never reaches a loopback, private, link-local or metadata address unless ``webhook.allowed_hosts``
names it. A merge or an attempt only publishes ``suture.callback`` (queue ``suture.callbacks``); the
worker's courier delivers it within ``webhook.deadline_s`` and retries with backoff through the
callback outbox (``suture.workers.store.outbox``). Modules: ``addresses`` (which addresses are
internal), ``targets`` (the URL and task-name checks, DNS resolution), ``signing`` (Standard
Webhooks headers), ``exchange`` (one bounded HTTP POST to a pinned address), ``sender`` (one
delivery, start to outcome) and ``courier`` (deliveries in flight in a worker process). Errors::

    CallbackError
     └── CallbackRefused(callback, reason)   not an allowed callback (at enqueue: the producer's
                                             InvalidJob on field ``callback``; at delivery: given up)
"""

from __future__ import annotations

from suture.workers.webhooks.targets import (
    CallbackError,
    CallbackRefused,
    check_callback,
    check_callback_for_workers,
    target_rules,
)

__all__ = ["CallbackError", "CallbackRefused", "check_callback", "check_callback_for_workers", "target_rules"]
