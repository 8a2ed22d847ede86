"""Job progress as a custom Celery event (``task-progress``), so Flower shows where each job stands.

Celery's event state (which Flower renders) turns an unknown ``task-<x>`` event into the custom state
``X``, so a running task reads ``PROGRESS`` until it succeeds or fails. Flower displays only Celery's
standard task fields, so the event also carries a one-line summary in ``result``; the task's real
result replaces it when the task finishes. Ids, counts and a status only: never document or output.

Reporting never raises into the task: a monitoring hiccup must not fail a model call.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

logger = logging.getLogger(__name__)

PROGRESS_EVENT = "task-progress"
PROGRESS_STATE = "PROGRESS"


class EventSender(Protocol):
    """What report_progress needs of a bound Celery task."""

    def send_event(self, type_: str, retry: bool = ..., retry_policy: Any = ..., **fields: Any) -> Any: ...


def progress_fields(job_id: str, *, step: int, attempt: int, failures: int, status: str) -> dict[str, Any]:
    """The event's fields: the numbers Flower and `celery events` show for one job's progress."""
    return {
        "job_id": job_id,
        "step": step,
        "attempt": attempt,
        "failures": failures,
        "status": status,
        "result": f"job {job_id}: {status}, step {step}, attempt {attempt}, {failures} failures",
    }


def report_progress(
    task: EventSender, job_id: str, *, step: int, attempt: int, failures: int, status: str
) -> None:
    """Send a ``task-progress`` event for the running task; logged, never raised, if it cannot be sent."""
    fields = progress_fields(job_id, step=step, attempt=attempt, failures=failures, status=status)
    try:
        # No publish retries: progress is advisory and must not stall the task when the broker blips.
        task.send_event(PROGRESS_EVENT, retry=False, **fields)
    except Exception as exc:  # any transport error; the task carries on
        logger.warning("could not send progress of job %s: %s", job_id, type(exc).__name__)
