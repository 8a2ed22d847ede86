"""The attempt-chain engine: pure step functions that decide, attempt by attempt, how to satisfy a contract.

The driver (``suture.tasks.runner.run_inline`` in-process, or the Celery tasks) loops::

    state = start(spec)
    while True:
        action = next_action(state, policy, accepted=accepted, secrets=settings.secrets())
        if isinstance(action, Finish):
            break
        if isinstance(action, RunFull):
            state = apply_full(state, action, caller(action.call))
        elif isinstance(action, RunFix):  # the contract's deterministic fixers: no model call
            state = apply_fix(state, action)
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
- ``resume(state, feedback)`` (``suture.tasks.feedback``) reopens a soft-delivered state for a new round:
  the chain restarts with a fresh attempt cap and cost budget, the feedback in every later prompt;
  each attempt record says its ``round``. ``resume(state, feedback, targets)`` opens a targeted round
  (``suture.tasks.targeted``): only the named parts are regenerated, by the policy's surgical steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from suture.contracts.examples import AcceptedOutput
from suture.contracts.failure import Failure, Verdict
from suture.contracts.preserve import merge_with_preserve
from suture.tasks.calls import ModelReply
from suture.tasks.causes import stop_cause
from suture.tasks.feedback import resume
from suture.tasks.fixing import apply_fix, plan_fix
from suture.tasks.job import (
    Action,
    EngineError,
    Finish,
    JobState,
    RunFix,
    RunFull,
    RunSurgical,
    contract_for,
    score,
)
from suture.tasks.planning import estimate_cost_usd, plan_full, plan_surgical
from suture.tasks.policy import Policy
from suture.tasks.recording import full_record, surgical_record
from suture.tasks.spec import EngineOptions, JobSpec
from suture.tasks.targeted import next_targeted
from suture.tasks.trace import SkipRecord, build_result
from suture.tasks.transitions import (
    TERMINAL_ERRORS,
    advance,
    already_applied,
    ended,
    judged,
    note_simulation,
    transport_error,
    with_attempt,
)
from suture.tasks.vocabulary import DELIVERED_STATUSES

__all__ = [
    "Action",
    "EngineError",
    "EngineOptions",
    "Finish",
    "JobSpec",
    "JobState",
    "RunFix",
    "RunFull",
    "RunSurgical",
    "apply_fix",
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
    """Decide what to do next: fix the best output without a model, run a full attempt or a surgical
    step, or finish (and how)."""
    if state.status is not None:
        return Finish(status=state.status, reason=state.reason, cause=state.cause)
    if state.targets:
        return next_targeted(state, policy, secrets)
    contract = contract_for(state.spec)
    fix = plan_fix(state, policy, contract)
    if fix is not None:
        return fix
    skipped: list[SkipRecord] = []
    if len(state.round_model_attempts) >= policy.attempt_cap:
        return _stop(state, skipped, f"max_attempts ({policy.attempt_cap}) reached")
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
            return _stop(state, skipped, over, budget=True)
        return plan.model_copy(update={"skipped": skipped})
    return _stop(state, skipped, "every step of the policy was tried")


def _over_budget(state: JobState, policy: Policy, action: RunFull | RunSurgical) -> str | None:
    # A round's first attempt always runs: a budget bounds escalation, not the job's existence.
    if policy.budget_usd is None or not state.round_model_attempts:
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


def _stop(state: JobState, skipped: list[SkipRecord], why: str, *, budget: bool = False) -> Finish:
    best = state.best
    outcomes = [a.outcome for a in state.round_attempts]
    cause = stop_cause(delivered=best is not None, budget=budget, outcomes=outcomes)
    if best is None:
        reason = f"{why}; no attempt produced a parseable output"
        return Finish(status="failed", reason=reason, skipped=skipped, cause=cause)
    remaining = len(best.failures)
    reason = f"{why}; delivering the best attempt (#{best.n}) with {remaining} failure(s) remaining"
    return Finish(status="soft_delivered", reason=reason, skipped=skipped, cause=cause)


def apply_full(state: JobState, action: RunFull, reply: ModelReply) -> JobState:
    """Record a full attempt's reply: validate it, keep it if it is the best so far, decide if the job
    ends."""
    if already_applied(state, action.n):
        return state
    state = note_simulation(state, [reply])
    contract = contract_for(state.spec)
    base = advance(state, action.step_index, action.skipped, [action.fingerprint])
    record = full_record(action, reply, state.spec.options)
    if reply.error is not None:
        return transport_error(base, record, reply)
    verdict = contract.validate(reply.text or "", finish_reason=reply.finish_reason)
    if reply.refusal:
        message = f"The model refused: {reply.refusal}"
        verdict = Verdict(
            ok=False, failures=[Failure(kind="refusal", pointer="/", code="refusal", message=message)]
        )
    refusal = next((f.message for f in verdict.failures if f.kind == "refusal"), None)
    if refusal is not None:
        record = record.model_copy(update={"outcome": "refused", "failures": verdict.failures})
        return ended(
            base, record, "refused", f"attempt {action.n} was refused, so the chain stopped: {refusal}"
        )
    if verdict.output is None:
        record = record.model_copy(update={"outcome": "unparseable", "failures": verdict.failures})
        raw = (reply.text or "")[:4000]
        return with_attempt(base, record, last_failures=verdict.failures, last_raw=raw)
    return judged(base, record, verdict.output, verdict.failures, verdict.ok)


def apply_surgical(state: JobState, action: RunSurgical, replies: Mapping[str, ModelReply]) -> JobState:
    """Record a surgical step: splice the slices under preserve, re-validate the whole, keep it if better."""
    if already_applied(state, action.n):
        return state
    state = note_simulation(state, list(replies.values()))
    best = state.best
    if best is None:
        raise EngineError(state.spec.job_id, f"surgical attempt {action.n} without an output to repair")
    base = advance(state, action.step_index, action.skipped, action.fingerprints)
    record = surgical_record(action, replies, state.spec.options)
    terminal = next((r for r in replies.values() if r.error_kind in TERMINAL_ERRORS), None)
    if terminal is not None:
        return transport_error(base, record, terminal)
    slices = {s.pointer: s.received for s in record.slices if s.status == "applied"}
    merged = merge_with_preserve(best.output, slices, action.preserve)
    verdict = contract_for(state.spec).validate(merged.output)
    rolled_back = set(merged.rolled_back)
    record.slices = [
        s.model_copy(update={"status": "rolled_back"}) if s.pointer in rolled_back else s
        for s in record.slices
    ]
    record.rolled_back = sorted(rolled_back)
    # A targeted round asked for these parts to change: a regeneration no worse than before is kept.
    better = score(verdict.failures) <= score(best.failures) if state.targets else None
    if verdict.output is not None and (better or score(verdict.failures) < score(best.failures)):
        record.failures = [*verdict.failures, *merged.failures]
        new = judged(base, record, merged.output, verdict.failures, verdict.ok)
        if state.targets:  # a targeted round ends when its targets are done (suture.tasks.targeted)
            return new.model_copy(update={"status": None, "reason": ""})
        return new
    record.failures = [*verdict.failures, *merged.failures]
    record.outcome = "no_better"
    record.slices = [
        s.model_copy(update={"status": "not_improving"}) if s.status == "applied" else s
        for s in record.slices
    ]
    return with_attempt(base, record)


def finish(state: JobState, action: Finish) -> JobState:
    """Mark the job finished as ``action`` says (idempotent: a finished job stays as it is)."""
    if state.status is not None:
        return state
    return state.model_copy(
        update={
            "status": action.status,
            "reason": action.reason,
            "cause": action.cause,
            "skipped": [*state.skipped, *action.skipped],
        }
    )


def result(state: JobState, action: Finish | None = None) -> dict[str, Any]:
    """The job result (schema in docs/architecture.md); pass the ``Finish`` action if not yet applied."""
    if action is not None:
        state = finish(state, action)
    if state.status is None:
        raise EngineError(state.spec.job_id, "result() of a job that has not finished")
    delivered = state.status in DELIVERED_STATUSES
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
        cause=state.cause,
        spec=state.spec.public(),
    )
