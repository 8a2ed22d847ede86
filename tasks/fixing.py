"""Deterministic fixes: the contract's fixers run on a new best output before any further model step.

``plan_fix`` asks for a fix when the latest attempt produced the best output, that output has a
failure code the contract can fix without a model (``Contract.fixers``, ``contracts.fixer``), and
the policy allows fixers; ``apply_fix`` runs them, validates the whole output again and keeps it
only if it scores better. Either way the trace gets an attempt of its own: mode ``fix``, model
``FIX_MODEL``, cost 0, with its RFC 6902 patch when kept (a dropped fix: outcome ``no_better``, no
patch, the failures the fixed output would have had). A fix is never planned twice for one output
(the attempt after it is the fix itself), and it counts toward neither the attempt cap nor the budget.
"""

from __future__ import annotations

from suture.contracts.contract import Contract
from suture.tasks.job import EngineError, JobState, RunFix, contract_for, score
from suture.tasks.policy import Policy
from suture.tasks.trace import AttemptRecord
from suture.tasks.transitions import already_applied, judged, with_attempt

FIX_MODEL = "fixer"  # what a fix attempt's ``model`` says: no model was called


def plan_fix(state: JobState, policy: Policy, contract: Contract) -> RunFix | None:
    """The fix the best output needs before the next model step, or None."""
    best = state.best
    if not policy.fixers or best is None or not state.attempts:
        return None
    last = state.attempts[-1]
    if last.mode == "fix" or last.n != best.n:
        return None
    fixers = contract.fixers()
    codes = sorted({f.code for f in best.failures if f.code in fixers})
    if not codes:
        return None
    return RunFix(
        n=len(state.attempts) + 1, step_index=last.step_index, step=f"fix:{'+'.join(codes)}", codes=codes
    )


def apply_fix(state: JobState, action: RunFix) -> JobState:
    """Run the fixers of ``action`` on the best output; keep the result only if it scores better."""
    if already_applied(state, action.n):
        return state
    best = state.best
    if best is None:
        raise EngineError(state.spec.job_id, f"fix attempt {action.n} without an output to fix")
    contract = contract_for(state.spec)
    fixers = contract.fixers()
    output = best.output
    for code in action.codes:
        failures = [f for f in best.failures if f.code == code]
        fixed = fixers[code](output, failures) if code in fixers else None
        if fixed is not None:
            output = fixed
    record = AttemptRecord(
        n=action.n,
        step=action.step,
        step_index=action.step_index,
        mode="fix",
        model=FIX_MODEL,
        reasoning_effort=None,
        targets=sorted({f.pointer for f in best.failures if f.code in action.codes}),
        cost_usd=0.0,
        outcome="no_better",
    )
    verdict = contract.validate(output)
    if verdict.output is not None and score(verdict.failures) < score(best.failures):
        return judged(state, record, verdict.output, verdict.failures, verdict.ok)
    return with_attempt(state, record.model_copy(update={"failures": verdict.failures}))
