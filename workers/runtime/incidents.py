"""Sentry events for what went wrong around jobs rather than in them: internal errors, lost workers, stalls.

An internal error (a bug, corrupt stored data) is reported once, as an error with its traceback and
the ``job_id`` tag; its exception text is scrubbed of the job's document and output, and of pydantic's
``input_value``. A worker lost mid-task, or a job the watchdog re-sends after a stall, sends one
*warning* per job saying what was redone (the flow claims a once-flag per job and kind first).

Nothing here raises into the caller, and nothing is sent when Sentry is off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sentry_sdk
from sentry_sdk.types import Event, Hint

from suture.workers.runtime.alerts import JobFacts
from suture.workers.runtime.sentry import scrub_text

REDONE_TITLES = {
    "worker_lost": "{title} job redone after a worker was lost",
    "stalled": "{title} job re-sent by the watchdog after a stall",
}


def report_internal(
    exc: BaseException, *, job_id: str, task: str, sensitive: Sequence[str] = ()
) -> str | None:
    """Send ``exc`` once as an error event (traceback, ``job_id`` tag, scrubbed text); its event id."""
    with sentry_sdk.new_scope() as scope:
        scope.set_tag("job_id", job_id)
        scope.set_tag("task", task)
        scope.set_tag("cause", "internal")
        scope.fingerprint = ["suture", "internal", task, type(exc).__name__]
        scope.add_event_processor(_exception_scrubber(sensitive))
        return sentry_sdk.capture_exception(exc)


def report_redone(facts: JobFacts, kind: str, what: str) -> str | None:
    """Send one warning that a job's work runs again (``kind``: worker_lost or stalled; ``what``: which
    task)."""
    return sentry_sdk.capture_message(
        REDONE_TITLES[kind].format(title=facts.title),
        level="warning",
        tags={"job_id": facts.job_id, "contract": facts.contract, "redone": kind},
        contexts={"redone": {"job_id": facts.job_id, "what": what, "kind": kind}},
        fingerprint=["suture", "redone", facts.contract, kind],
    )


def safe_error_text(exc: BaseException, sensitive: Sequence[str] = ()) -> str:
    """``Type: message`` of an exception, one line, scrubbed of the job's text: safe for task arguments."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {scrub_text(text, sensitive)}"[:300]


def _exception_scrubber(sensitive: Sequence[str]) -> Any:
    def scrub(event: Event, hint: Hint) -> Event | None:
        for exception in (event.get("exception") or {}).get("values") or []:
            if isinstance(exception.get("value"), str):
                exception["value"] = scrub_text(exception["value"], sensitive)
        return event

    return scrub
