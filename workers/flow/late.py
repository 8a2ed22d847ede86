"""Late attempts: model calls that finished after their job had ended still count in its result.

The watchdog ends a job at its deadline while one of its attempts may still be running; that call
cost tokens and money, and a failed job must count every attempt it made. When such an attempt comes
back (a full attempt, or the merge of a surgical one whose slices all came back), it cannot be
applied (the job has a result); it is appended to the stored result as ``late``
(``JobStore.notes.add_late_attempt``) and told to the observer, so metrics count its cost too. A
cancelled job's result is left as it is (its reply in flight is dropped, as ``cancel`` promises);
only the metrics count that call.
"""

from __future__ import annotations

from typing import Any

from suture.tasks import engine
from suture.tasks.calls import ModelReply
from suture.tasks.job import JobState
from suture.workers.flow.observer import Observer
from suture.workers.flow.planner import Planner
from suture.workers.store.job_store import JobRecord, JobStore


def count_if_late(store: JobStore, observer: Observer, job_id: str, n: int, state: JobState) -> None:
    """Attempt ``n`` (the last of ``state``) could not be applied: if its job ended without it, count it
    late."""
    attempt = state.attempts[-1] if state.attempts and state.attempts[-1].n == n else None
    if attempt is None:
        return
    record = store.load(job_id)
    if record.result is None:
        return
    if any(a.get("n") == n and not a.get("late") for a in record.result.get("attempts") or []):
        return  # another execution of this attempt applied it: nothing is late
    if record.result.get("status") == "cancelled":
        # A cancelled job's result stays as cancelled (its reply in flight is dropped); the call's
        # cost was spent all the same, so metrics count it. Once: the dropped reply's execution.
        if store.notes.claim_once(job_id, f"late:{n}"):
            observer.attempt_done(record, attempt, late=True)
        return
    if store.notes.add_late_attempt(job_id, attempt.public()):
        observer.attempt_done(record, attempt, late=True)


def count_late_merge(
    store: JobStore,
    planner: Planner,
    observer: Observer,
    record: JobRecord,
    n: int,
    stored: dict[str, Any],
) -> None:
    """Every slice of surgical attempt ``n`` came back after the job ended: count the attempt late."""
    action = planner.surgical_action(record, n)
    if action is None or set(stored) != set(action.calls) or record.state is None:
        return
    state = planner.state(record)
    if state.best is None or len(state.attempts) != n - 1:
        return
    replies = {pointer: ModelReply.model_validate(stored[pointer]) for pointer in action.calls}
    count_if_late(store, observer, record.job_id, n, engine.apply_surgical(state, action, replies))
