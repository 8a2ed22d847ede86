"""Simple variants of a retry policy, so ``suture eval --suggest`` can look for a cheaper chain.

A variant changes one thing: it drops a step, swaps one step's model for another priced model,
adds a surgical step after a full step that is not followed by one, replaces a surgical step by a
whole re-ask with the failures on the same model (``N=reask``), or turns feedback on in a policy
without it (``+feedback``: its full steps re-ask with the failures, as Instructor and pydantic-ai do).
The last two let ``--suggest`` choose between surgery and whole re-asks from the measured figures.
Variants that would not be valid policies (e.g. dropping the only full first step) are left out;
duplicates of a given policy or of each other (same steps) are left out too. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from suture.tasks.policy import Policy, PolicyError, Step

# The surgical step added when no given policy has one to copy: the shipped default's shape (what a
# slice keeps is the contract's invariants).
DEFAULT_SURGICAL = Step(
    mode="surgical", model="gpt-5-nano", reasoning_effort="minimal", target="smallest", max_failures=40
)


def variants(policies: Sequence[Policy], models: Sequence[str]) -> list[Policy]:
    """One-change variants of each policy (drop / swap model / add surgical / re-ask), deduplicated and
    valid."""
    template = _surgical_template(policies)
    seen = {_signature(p) for p in policies}
    found: list[Policy] = []
    for policy in policies:
        for candidate in _candidates(policy, models, template):
            signature = _signature(candidate)
            if signature not in seen:
                seen.add(signature)
                found.append(candidate)
    return found


def _candidates(policy: Policy, models: Sequence[str], template: Step) -> Iterator[Policy]:
    steps = list(policy.steps)
    for index in range(len(steps)):
        yield from _built(policy, f"drop{index + 1}", steps[:index] + steps[index + 1 :])
    for index, step in enumerate(steps):
        for model in models:
            if model != step.model:
                swapped = replace(step, model=model, name=None)
                yield from _built(
                    policy, f"{index + 1}={model}", [*steps[:index], swapped, *steps[index + 1 :]]
                )
    for index, step in enumerate(steps):
        following = steps[index + 1] if index + 1 < len(steps) else None
        if step.mode == "full" and (following is None or following.mode != "surgical"):
            added = replace(template, model=step.model, name=None)
            yield from _built(
                policy, f"+surgical@{index + 2}", [*steps[: index + 1], added, *steps[index + 1 :]]
            )
    yield from _reasks(policy)


def _reasks(policy: Policy) -> Iterator[Policy]:
    """Whole re-asks with the failures in place of surgery, or instead of plain retries."""
    steps = list(policy.steps)
    if not policy.feedback:
        yield from _built(replace(policy, feedback=True), "+feedback", steps)
        return
    for index, step in enumerate(steps):
        if step.mode == "surgical":
            reask = Step(mode="full", model=step.model, reasoning_effort=step.reasoning_effort)
            yield from _built(policy, f"{index + 1}=reask", [*steps[:index], reask, *steps[index + 1 :]])


def _built(policy: Policy, change: str, steps: list[Step]) -> Iterator[Policy]:
    cap = policy.max_attempts
    if cap is not None:
        cap = max(1, cap + len(steps) - len(policy.steps))
    try:
        yield replace(policy, name=f"{policy.name}~{change}", steps=tuple(steps), max_attempts=cap)
    except PolicyError:
        return  # not a usable chain (e.g. it would start with a surgical step): not a variant


def _surgical_template(policies: Sequence[Policy]) -> Step:
    for policy in policies:
        for step in policy.steps:
            if step.mode == "surgical" and not callable(step.target) and step.when is None:
                return step
    return DEFAULT_SURGICAL


def _signature(policy: Policy) -> tuple[object, ...]:
    steps = tuple(
        (s.mode, s.model, s.reasoning_effort, repr(s.target), s.preserve, s.max_failures, repr(s.prompt))
        for s in policy.steps
    )
    return (steps, policy.feedback, policy.examples, policy.fixers, policy.max_attempts, policy.budget_usd)
