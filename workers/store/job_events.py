"""A job's events as they happen (model calls starting, attempts applied, the delivery), for followers.

The worker's observer publishes each one on ``{prefix}:events:<id>`` (fire and forget: with no one
following, an event costs one PUBLISH and is gone); ``suture.aio``'s ``handle.events()`` reads them.
An event holds ids, counts, names and a status, as Flower's progress does: never document or output
text. Publishing is best-effort and never raises into the flow.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import redis

from suture.workers.store.keys import Keys

log = logging.getLogger(__name__)


def running(job_id: str, *, step: int, attempt: int, failures: int, doing: str) -> dict[str, Any]:
    """A model call of the job starts: a full attempt, or a slice of a surgical one (``doing``)."""
    return {
        "type": "running",
        "job_id": job_id,
        "step": step,
        "attempt": attempt,
        "failures": failures,
        "doing": doing,
    }


def attempt(job_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """An attempt was applied: ``mode`` full, surgical (a repair of its ``targets``) or fix."""
    return {
        "type": "attempt" if record.get("mode") == "full" else "repair",
        "job_id": job_id,
        "n": record.get("n"),
        "mode": record.get("mode"),
        "step": record.get("step"),
        "model": record.get("model"),
        "targets": list(record.get("targets") or []),
        "failures": len(record.get("failures") or []),
        "cost_usd": record.get("cost_usd"),
    }


def delivered(job_id: str, status: str) -> dict[str, Any]:
    """The job's result was stored with ``status``; its last event."""
    return {"type": "delivered", "job_id": job_id, "status": status}


def publish(client: redis.Redis, keys: Keys, job_id: str, event: dict[str, Any]) -> None:
    """Send ``event`` to the job's followers, if any; a failure is logged, never raised."""
    try:
        client.publish(keys.events(job_id), json.dumps(event, separators=(",", ":")))
    except Exception as exc:
        log.info("job %s: event %s not published: %s", job_id, event.get("type"), type(exc).__name__)
