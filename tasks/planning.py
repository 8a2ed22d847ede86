"""Planning the next attempt: build its prompt(s), refuse repeats, and estimate its cost for the budget.

Pure functions of the job state and policy; ``suture.tasks.engine.next_action`` strings them together.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from suture.contracts.contract import Contract
from suture.contracts.examples import AcceptedOutput, Example, choose_example, estimate_tokens
from suture.tasks.calls import ModelCall
from suture.tasks.job import ExampleInfo, JobState, RunFull, RunSurgical
from suture.tasks.policy import Policy, Step, StepContext
from suture.tasks.prompts import Messages, redact_messages, retry_messages, task_messages
from suture.tasks.surgery import rejected_repairs, slice_prompt, slice_value, targets_for
from suture.tasks.trace import SkipRecord

RAW_FEEDBACK_CHARS = 2000  # how much of an unparseable previous output a retry prompt quotes


def fingerprint(call: ModelCall) -> str:
    """A digest of (model, schema, messages): equal digests mean a byte-identical prompt to one model."""
    payload = json.dumps([call.model, call.schema_name, call.messages], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def step_context(state: JobState) -> StepContext:
    """The view of the state a step's ``when``/``target`` callables receive (counts of this round)."""
    best = state.best
    return StepContext(
        failures=tuple(best.failures if best else state.last_failures),
        output=best.output if best else None,
        attempts_made=len(state.round_model_attempts),
        spent_usd=state.round_spent_usd,
    )


def plan_full(
    state: JobState,
    policy: Policy,
    index: int,
    contract: Contract,
    accepted: Sequence[AcceptedOutput],
    secrets: Sequence[str],
) -> RunFull | SkipRecord:
    """The next full attempt for step ``index``, or why it is skipped."""
    step = policy.steps[index]
    if not step.holds(step_context(state)):
        return SkipRecord(
            step=step.label(index), step_index=index, reason="its 'when' condition does not hold"
        )
    example = _example(state, policy, contract, accepted)
    messages = redact_messages(_full_messages(state, policy, step, contract, example), secrets)
    call = _model_call(
        state, step, messages, contract.name, contract.response_schema(), contract.reply_tokens()
    )
    digest = fingerprint(call)
    if digest in state.sent:
        reason = f"an identical prompt was already sent to {step.model} in this job"
        return SkipRecord(step=step.label(index), step_index=index, reason=reason)
    info = (
        ExampleInfo(tier=example.tier, tokens=example.tokens, truncated=example.truncated)
        if example
        else None
    )
    return RunFull(
        n=len(state.attempts) + 1,
        step_index=index,
        step=step.label(index),
        call=call,
        fingerprint=digest,
        example=info,
    )


def _example(
    state: JobState, policy: Policy, contract: Contract, accepted: Sequence[AcceptedOutput]
) -> Example | None:
    if not policy.examples:
        return None
    options = state.spec.options
    if not state.attempts:
        return choose_example(contract, [], budget_tokens=options.first_prompt_example_tokens)
    failures = state.best.failures if state.best else state.last_failures
    return choose_example(contract, failures, accepted, budget_tokens=options.retry_example_tokens)


def _full_messages(
    state: JobState, policy: Policy, step: Step, contract: Contract, example: Example | None
) -> Messages:
    instructions = step.instructions(contract.task_instructions())
    source, human = state.spec.source, state.spec.feedback
    if not state.attempts or not policy.feedback:
        return task_messages(instructions, source, example, human)
    if state.best is not None:
        return retry_messages(instructions, source, state.best.output, state.best.failures, example, human)
    if state.last_raw is not None:
        previous = state.last_raw[:RAW_FEEDBACK_CHARS]
        return retry_messages(instructions, source, previous, state.last_failures, example, human)
    return task_messages(instructions, source, example, human)


def plan_surgical(
    state: JobState,
    policy: Policy,
    index: int,
    contract: Contract,
    secrets: Sequence[str],
    forced: Sequence[str] | None = None,
) -> RunSurgical | SkipRecord:
    """The next surgical step for ``index`` (one call per target), or why it is skipped; ``forced``
    targets (a person's, ``tasks.targeted``) are sent whatever the step's ``when`` and target rule say."""
    step = policy.steps[index]
    label = step.label(index)
    best = state.best
    if best is None:
        return SkipRecord(step=label, step_index=index, reason="no parseable output to repair")
    ctx = step_context(state)
    if forced is None and not step.holds(ctx):
        reason = (
            f"its 'when' condition does not hold ({len(ctx.failures)} failure(s); surgery needs "
            f"1..{step.max_failures}, all targetable)"
        )
        return SkipRecord(step=label, step_index=index, reason=reason)
    calls, values, digests = {}, {}, []
    pinned: list[str] = []  # the contract's invariants of each target sent (a step's preserve adds none)
    for target in forced if forced is not None else targets_for(step, ctx, contract):
        messages = slice_prompt(
            contract,
            step,
            state.spec.source,
            best.output,
            target,
            best.failures,
            state.spec.feedback,
            rejected_repairs(state.attempts, target),
        )
        schema = contract.slice_schema(best.output, target)
        expected = contract.reply_tokens(best.output, target)
        call = _model_call(
            state, step, redact_messages(messages, secrets), f"{contract.name}_slice", schema, expected
        )
        digest = fingerprint(call)
        if digest not in state.sent:
            calls[target], values[target] = call, slice_value(best.output, target)
            digests.append(digest)
            pinned += contract.slice_invariants(best.output, target)
    if not calls:
        why = f"every slice prompt was already sent to {step.model} in this job (no progress to build on)"
        return SkipRecord(step=label, step_index=index, reason=why)
    return RunSurgical(
        n=len(state.attempts) + 1,
        step_index=index,
        step=label,
        model=step.model,
        reasoning_effort=step.reasoning_effort,
        calls=calls,
        sent_values=values,
        fingerprints=digests,
        preserve=list(dict.fromkeys(pinned)),
    )


def _model_call(
    state: JobState,
    step: Step,
    messages: list[dict[str, str]],
    schema_name: str,
    schema: dict[str, Any],
    expected_reply_tokens: int,
) -> ModelCall:
    """One call of this job to the step's model: the job id as its cache key, the job's class for the budget,
    the contract's expected reply size for its ``max_completion_tokens``."""
    return ModelCall(
        model=step.model,
        messages=messages,
        schema_name=schema_name,
        json_schema=schema,
        reasoning_effort=step.reasoning_effort,
        max_completion_tokens=state.spec.options.max_completion_tokens,
        expected_reply_tokens=expected_reply_tokens,
        cache_key=state.spec.job_id,
        priority=state.spec.priority,
    )


def estimate_cost_usd(state: JobState, action: RunFull | RunSurgical) -> float | None:
    """The expected cost of an action from the price table and observed token counts (None: unknown price)."""
    calls = [action.call] if isinstance(action, RunFull) else list(action.calls.values())
    price = state.spec.options.prices.get(calls[0].model)
    if price is None:
        return None
    input_tokens = sum(estimate_tokens("".join(m["content"] for m in c.messages)) for c in calls)
    output_tokens = _expected_output_tokens(state, action)
    return (input_tokens * price.input_per_1m_usd + output_tokens * price.output_per_1m_usd) / 1_000_000


def _expected_output_tokens(state: JobState, action: RunFull | RunSurgical) -> float:
    # output_tokens include reasoning tokens (OpenAI's completion_tokens), so scale the visible size.
    full = [a.usage.output_tokens for a in state.attempts if a.mode == "full" and a.usage.output_tokens]
    if isinstance(action, RunFull) and full:
        return float(max(full))
    ratio = _visible_ratio(state)
    if isinstance(action, RunFull):
        return (estimate_tokens(json.dumps(state.best.output)) if state.best else 0) / ratio
    return sum(estimate_tokens(json.dumps(v)) for v in action.sent_values.values()) / ratio


def _visible_ratio(state: JobState) -> float:
    output = sum(a.usage.output_tokens for a in state.attempts)
    reasoning = sum(a.usage.reasoning_tokens for a in state.attempts)
    return max(0.05, (output - reasoning) / output) if output else 1.0
