"""The attempt-chain engine: pure step functions that decide, attempt by attempt, how to satisfy a contract.

The driver (``tasks.runner.run_inline`` in-process, or the Celery tasks) loops::

    state = start(spec)
    while True:
        action = next_action(state, policy, accepted=accepted, secrets=settings.secrets())
        if isinstance(action, Finish):
            break
        if isinstance(action, RunFull):
            state = apply_full(state, action, caller(action.call))
        else:  # RunSurgical: the slice calls are independent (run them in parallel)
            state = apply_surgical(state, action, {p: caller(c) for p, c in action.calls.items()})
    final = result(state, action)

Properties the drivers rely on:

- Pure and deterministic: no I/O, no clock, no randomness; equal inputs give equal outputs.
- ``JobState`` and the actions are pydantic models (``model_dump_json`` / ``model_validate_json``).
- Redelivery-safe: applying an action whose attempt number ``n`` is already recorded returns the
  state unchanged; an action from the future raises ``EngineError``.
- ``next_action`` never sends a byte-identical prompt to the same model twice in one job, runs a
  surgical step only if its ``when`` holds, and stops at once on refusal or a terminal transport
  error; soft delivery returns the best attempt (fewest failures, ties -> later), never an
  unparsed one; with no parseable output at all the job ends ``failed`` with output ``None``.
- ``secrets`` (``settings.secrets()``) are redacted from prompts; they are never stored in the state.
- ``resume(state, feedback)`` (``tasks.feedback``) reopens a soft-delivered state for a new round:
  the chain restarts with a fresh attempt cap and cost budget, the feedback in every later prompt;
  each attempt record says its ``round``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contracts.diff import diff
from contracts.examples import AcceptedOutput
from contracts.failure import Failure, Verdict
from contracts.preserve import merge_with_preserve
from tasks.calls import ModelReply
from tasks.feedback import resume
from tasks.job import (
    Action,
    EngineError,
    EngineOptions,
    Finish,
    JobSpec,
    JobState,
    RunFull,
    RunSurgical,
    Standing,
    contract_for,
    score,
)
from tasks.planning import estimate_cost_usd, plan_full, plan_surgical
from tasks.policy import Policy
from tasks.recording import full_record, surgical_record
from tasks.trace import AttemptRecord, Outcome, SkipRecord, build_result

TERMINAL_ERRORS = frozenset({"auth", "bad_request", "not_found"})

__all__ = [
    "Action",
    "EngineError",
    "EngineOptions",
    "Finish",
    "JobSpec",
    "JobState",
    "RunFull",
    "RunSurgical",
    "apply_full",
    "apply_surgical",
    "finish",
    "next_action",
    "result",
    "resume",
    "start",
]


def start(spec: JobSpec) -> JobState:
    """The initial state of a job (no attempts yet)."""
    return JobState(spec=spec)


def next_action(
    state: JobState,
    policy: Policy,
    *,
    accepted: Sequence[AcceptedOutput] = (),
    secrets: Sequence[str] = (),
) -> Action:
    """Decide what to do next: run a full attempt, a surgical step, or finish (and how)."""
    if state.status is not None:
        return Finish(status=state.status, reason=state.reason)
    skipped: list[SkipRecord] = []
    if len(state.round_attempts) >= policy.attempt_cap:
        return _stop(state, skipped, f"max_attempts ({policy.attempt_cap}) reached")
    contract = contract_for(state.spec)
    for index in range(state.next_step, len(policy.steps)):
        step = policy.steps[index]
        if step.mode == "full":
            plan: Action | SkipRecord = plan_full(state, policy, index, contract, accepted, secrets)
        else:
            plan = plan_surgical(state, policy, index, contract, secrets)
        if isinstance(plan, SkipRecord):
            skipped.append(plan)
            continue
        assert isinstance(plan, RunFull | RunSurgical)
        over = _over_budget(state, policy, plan)
        if over:
            return _stop(state, skipped, over)
        return plan.model_copy(update={"skipped": skipped})
    return _stop(state, skipped, "every step of the policy was tried")


def _over_budget(state: JobState, policy: Policy, action: RunFull | RunSurgical) -> str | None:
    # A round's first attempt always runs: a budget bounds escalation, not the job's existence.
    if policy.budget_usd is None or not state.round_attempts:
        return None
    estimate = estimate_cost_usd(state, action)
    if estimate is None:
        return None
    spent = state.round_spent_usd
    if spent + estimate > policy.budget_usd:
        return (
            f"budget of ${policy.budget_usd:.6f} reached: spent ${spent:.6f}, "
            f"next step {action.step} would cost about ${estimate:.6f}"
        )
    return None


def _stop(state: JobState, skipped: list[SkipRecord], why: str) -> Finish:
    best = state.best
    if best is None:
        return Finish(
            status="failed", reason=f"{why}; no attempt produced a parseable output", skipped=skipped
        )
    remaining = len(best.failures)
    reason = f"{why}; delivering the best attempt (#{best.n}) with {remaining} failure(s) remaining"
    return Finish(status="soft_delivered", reason=reason, skipped=skipped)


def apply_full(state: JobState, action: RunFull, reply: ModelReply) -> JobState:
    """Record a full attempt's reply: validate it, keep it if it is the best so far, decide if the job ends."""
    if _already_applied(state, action.n):
        return state
    state = _note_simulation(state, [reply])
    contract = contract_for(state.spec)
    base = _advance(state, action.step_index, action.skipped, [action.fingerprint])
    record = full_record(action, reply, state.spec.options)
    if reply.error is not None:
        return _transport_error(base, record, reply)
    verdict = contract.validate(reply.text or "", finish_reason=reply.finish_reason)
    if reply.refusal:
        message = f"The model refused: {reply.refusal}"
        verdict = Verdict(
            ok=False, failures=[Failure(kind="refusal", pointer="/", code="refusal", message=message)]
        )
    refusal = next((f.message for f in verdict.failures if f.kind == "refusal"), None)
    if refusal is not None:
        record = record.model_copy(update={"outcome": "refused", "failures": verdict.failures})
        return _ended(
            base, record, "refused", f"attempt {action.n} was refused, so the chain stopped: {refusal}"
        )
    if verdict.output is None:
        record = record.model_copy(update={"outcome": "unparseable", "failures": verdict.failures})
        raw = (reply.text or "")[:4000]
        return _with_attempt(base, record, last_failures=verdict.failures, last_raw=raw)
    return _judged(base, record, verdict.output, verdict.failures, verdict.ok)


def apply_surgical(state: JobState, action: RunSurgical, replies: Mapping[str, ModelReply]) -> JobState:
    """Record a surgical step: splice the slices under preserve, re-validate the whole, keep it if better."""
    if _already_applied(state, action.n):
        return state
    state = _note_simulation(state, list(replies.values()))
    best = state.best
    if best is None:
        raise EngineError(state.spec.job_id, f"surgical attempt {action.n} without an output to repair")
    base = _advance(state, action.step_index, action.skipped, action.fingerprints)
    record = surgical_record(action, replies, state.spec.options)
    terminal = next((r for r in replies.values() if r.error_kind in TERMINAL_ERRORS), None)
    if terminal is not None:
        return _transport_error(base, record, terminal)
    slices = {s.pointer: s.received for s in record.slices if s.status == "applied"}
    merged = merge_with_preserve(best.output, slices, action.preserve)
    verdict = contract_for(state.spec).validate(merged.output)
    rolled_back = set(merged.rolled_back)
    record.slices = [
        s.model_copy(update={"status": "rolled_back"}) if s.pointer in rolled_back else s
        for s in record.slices
    ]
    record.rolled_back = sorted(rolled_back)
    if verdict.output is not None and score(verdict.failures) < score(best.failures):
        record.failures = [*verdict.failures, *merged.failures]
        return _judged(base, record, merged.output, verdict.failures, verdict.ok)
    record.failures = [*verdict.failures, *merged.failures]
    record.outcome = "no_better"
    record.slices = [
        s.model_copy(update={"status": "not_improving"}) if s.status == "applied" else s
        for s in record.slices
    ]
    return _with_attempt(base, record)


def finish(state: JobState, action: Finish) -> JobState:
    """Mark the job finished as ``action`` says (idempotent: a finished job stays as it is)."""
    if state.status is not None:
        return state
    return state.model_copy(
        update={
            "status": action.status,
            "reason": action.reason,
            "skipped": [*state.skipped, *action.skipped],
        }
    )


def result(state: JobState, action: Finish | None = None) -> dict[str, Any]:
    """The job result (schema in docs/architecture.md); pass the ``Finish`` action if not yet applied."""
    if action is not None:
        state = finish(state, action)
    if state.status is None:
        raise EngineError(state.spec.job_id, "result() of a job that has not finished")
    delivered = state.status in ("delivered", "soft_delivered")
    best = state.best
    if delivered and best is None:
        raise EngineError(state.spec.job_id, f"status {state.status} without an output")
    failures = best.failures if delivered and best else state.last_failures
    return build_result(
        job_id=state.spec.job_id,
        status=state.status,
        reason=state.reason,
        output=best.output if delivered and best else None,
        failures=failures,
        attempts=state.attempts,
        skipped=state.skipped,
        simulated=state.spec.simulated,
        job_round=state.round,
    )


def _note_simulation(state: JobState, replies: list[ModelReply]) -> JobState:
    """Mark the job simulated once any reply says it came from the simulator, whatever the config said."""
    if state.spec.simulated or not any(r.simulated for r in replies):
        return state
    return state.model_copy(update={"spec": state.spec.model_copy(update={"simulated": True})})


def _already_applied(state: JobState, n: int) -> bool:
    expected = len(state.attempts) + 1
    if n < expected:
        return True
    if n > expected or state.status is not None:
        raise EngineError(state.spec.job_id, f"attempt {n} applied out of order (expected {expected})")
    return False


def _advance(state: JobState, step_index: int, skipped: list[SkipRecord], digests: list[str]) -> JobState:
    return state.model_copy(
        update={
            "next_step": step_index + 1,
            "skipped": [*state.skipped, *skipped],
            "sent": [*state.sent, *digests],
        }
    )


def _judged(
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
    new = _with_attempt(state, record, best=best, last_failures=failures, last_raw=None)
    if ok:
        return new.model_copy(update={"status": "delivered", "reason": f"valid on attempt {record.n}"})
    return new


def _transport_error(state: JobState, record: AttemptRecord, reply: ModelReply) -> JobState:
    record = record.model_copy(update={"outcome": "transport_error", "error": reply.error})
    if reply.error_kind in TERMINAL_ERRORS:
        reason = f"model call failed terminally ({reply.error_kind}) on attempt {record.n}: {reply.error}"
        return _ended(state, record, "failed", reason)
    return _with_attempt(state, record)


def _ended(state: JobState, record: AttemptRecord, status: Any, reason: str) -> JobState:
    new = _with_attempt(state, record, last_failures=record.failures)
    return new.model_copy(update={"status": status, "reason": reason})


def _with_attempt(state: JobState, record: AttemptRecord, **update: Any) -> JobState:
    record = record.model_copy(update={"round": state.round})
    return state.model_copy(update={"attempts": [*state.attempts, record], **update})
