"""A targeted round: a person named the parts to regenerate (``/questions/13``); only those are touched.

``suture.tasks.feedback.resume(state, feedback, targets=...)`` opens the round; ``next_targeted``
plans it with the policy's own surgical steps, in order, each at most once: a step's slice calls
go to the named targets (its ``when`` and target rule aside, ``planning.plan_surgical(forced=)``),
under the contract's invariants of each target, so the merge keeps what must not change and every
other part of the output byte-identical. No full attempt and no deterministic fixer runs (both
could change other parts). A later step retries only the targets whose regeneration was not applied
(rolled back, or not better) or that still fail. When none is left, or no surgical step is left,
the round ends: ``delivered`` if the output is valid, else ``soft_delivered``. Pure, like the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

from suture.contracts.pointer import exists
from suture.tasks.job import Action, EngineError, Finish, JobState, contract_for
from suture.tasks.planning import plan_surgical
from suture.tasks.policy import Policy
from suture.tasks.surgery import failures_at
from suture.tasks.trace import SkipRecord

KEPT_OUTCOMES = ("valid", "improved")


def check_targets(state: JobState, targets: Sequence[str]) -> list[str]:
    """The targets, de-duplicated, each a pointer into the best output; else ``EngineError``."""
    job_id = state.spec.job_id
    best = state.best
    if best is None:
        raise EngineError(job_id, "there is no output to regenerate parts of")
    checked = list(dict.fromkeys(t.strip() for t in targets))
    for target in checked:
        if not target.startswith("/") or target == "/" or not exists(best.output, target):
            raise EngineError(
                job_id, f"target {target[:80]!r} is not a part of the output (e.g. /questions/3)"
            )
    return checked


def pending_targets(state: JobState) -> list[str]:
    """The round's targets not yet regenerated (no applied slice kept this round) or still failing."""
    failures = state.best.failures if state.best else []
    applied: set[str] = set()
    for attempt in state.round_attempts:
        if attempt.outcome in KEPT_OUTCOMES:
            applied |= {s.pointer for s in attempt.slices if s.status == "applied"}
    return [t for t in state.targets if t not in applied or failures_at(t, failures)]


def next_targeted(state: JobState, policy: Policy, secrets: Sequence[str]) -> Action:
    """The next action of a targeted round: a surgical step on the pending targets, or the end."""
    contract = contract_for(state.spec)
    pending = pending_targets(state)
    skipped: list[SkipRecord] = []
    if pending and len(state.round_model_attempts) < policy.attempt_cap:
        for index in range(state.next_step, len(policy.steps)):
            step = policy.steps[index]
            if step.mode != "surgical":
                why = "a targeted round regenerates only its targets (no full attempt)"
                skipped.append(SkipRecord(step=step.label(index), step_index=index, reason=why))
                continue
            plan = plan_surgical(state, policy, index, contract, secrets, forced=pending)
            if isinstance(plan, SkipRecord):
                skipped.append(plan)
                continue
            return plan.model_copy(update={"skipped": skipped})
    return _finish(state, pending, skipped)


def _finish(state: JobState, pending: list[str], skipped: list[SkipRecord]) -> Finish:
    best = state.best
    assert best is not None
    done = len(state.targets) - len(pending)
    reason = f"regenerated {done} of {len(state.targets)} targeted part(s)"
    if pending:
        reason += f"; not regenerated: {', '.join(pending)}"
    if not best.failures:
        return Finish(status="delivered", reason=reason, skipped=skipped)
    return Finish(
        status="soft_delivered", reason=f"{reason}; {len(best.failures)} failure(s) remain", skipped=skipped
    )
