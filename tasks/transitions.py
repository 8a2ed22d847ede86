"""How one applied attempt changes a job's state: judged, failed in transport, or ending the job.

The engine's step functions (``suture.tasks.engine``) decide what to run; these small pure updates
record what came back, so each step function reads as its decision and nothing else.
"""

from __future__ import annotations

from typing import Any

from suture.contracts.diff import diff
from suture.contracts.failure import Failure
from suture.tasks.calls import ModelReply
from suture.tasks.causes import Cause, error_cause
from suture.tasks.job import EngineError, JobState, Standing, score
from suture.tasks.trace import AttemptRecord, Outcome, SkipRecord

TERMINAL_ERRORS = frozenset({"auth", "bad_request", "not_found"})


def note_simulation(state: JobState, replies: list[ModelReply]) -> JobState:
    """Mark the job simulated once any reply says it came from the simulator, whatever the config said."""
    if state.spec.simulated or not any(r.simulated for r in replies):
        return state
    return state.model_copy(update={"spec": state.spec.model_copy(update={"simulated": True})})


def already_applied(state: JobState, n: int) -> bool:
    expected = len(state.attempts) + 1
    if n < expected:
        return True
    if n > expected or state.status is not None:
        raise EngineError(state.spec.job_id, f"attempt {n} applied out of order (expected {expected})")
    return False


def advance(state: JobState, step_index: int, skipped: list[SkipRecord], digests: list[str]) -> JobState:
    return state.model_copy(
        update={
            "next_step": step_index + 1,
            "skipped": [*state.skipped, *skipped],
            "sent": [*state.sent, *digests],
        }
    )


def judged(
    state: JobState, record: AttemptRecord, output: Any, failures: list[Failure], ok: bool
) -> JobState:
    previous = state.best
    keep = previous is None or score(failures) <= score(previous.failures)
    outcome: Outcome = "valid" if ok else ("improved" if keep else "no_better")
    update: dict[str, Any] = {"outcome": outcome, "failures": record.failures or failures}
    if keep and previous is not None:
        update["patch"] = diff(previous.output, output)  # only on retries: no diffing when attempt 1 passes
    record = record.model_copy(update=update)
    best = Standing(n=record.n, output=output, failures=failures) if keep else previous
    new = with_attempt(state, record, best=best, last_failures=failures, last_raw=None)
    if ok:
        return new.model_copy(update={"status": "delivered", "reason": f"valid on attempt {record.n}"})
    return new


def transport_error(state: JobState, record: AttemptRecord, reply: ModelReply) -> JobState:
    record = record.model_copy(update={"outcome": "transport_error", "error": reply.error})
    if reply.error_kind in TERMINAL_ERRORS:
        reason = f"model call failed terminally ({reply.error_kind}) on attempt {record.n}: {reply.error}"
        return ended(state, record, "failed", reason, cause=error_cause(reply.error_kind))
    return with_attempt(state, record)


def ended(
    state: JobState, record: AttemptRecord, status: Any, reason: str, *, cause: Cause | None = None
) -> JobState:
    new = with_attempt(state, record, last_failures=record.failures)
    return new.model_copy(update={"status": status, "reason": reason, "cause": cause})


def with_attempt(state: JobState, record: AttemptRecord, **update: Any) -> JobState:
    record = record.model_copy(update={"round": state.round})
    return state.model_copy(update={"attempts": [*state.attempts, record], **update})
