"""Attempt records built from model replies: usage, cost, latency, example, slices, stored prompts.

Prompts are stored redacted (the engine redacts before sending) and with the source document
replaced by a placeholder, since the spec holds it once; ``store_prompts: false`` leaves them out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from suture.tasks.calls import ModelReply, Usage
from suture.tasks.job import RunFull, RunSurgical
from suture.tasks.spec import EngineOptions
from suture.tasks.surgery import read_slice_reply
from suture.tasks.trace import AttemptRecord, SliceRecord


def full_record(action: RunFull, reply: ModelReply, options: EngineOptions) -> AttemptRecord:
    example = action.example
    return AttemptRecord(
        n=action.n,
        step=action.step,
        step_index=action.step_index,
        mode="full",
        model=action.call.model,
        reasoning_effort=action.call.reasoning_effort,
        usage=reply.usage,
        cost_usd=cost_usd(reply, options),
        latency_ms=reply.latency_ms,
        transport_retries=reply.transport_retries,
        asked_completion_tokens=reply.asked_completion_tokens,
        cap_retries=reply.cap_retries,
        batch_id=reply.batch_id,
        example_tier=example.tier if example else None,
        example_tokens=example.tokens if example else None,
        example_truncated=example.truncated if example else None,
        outcome="no_better",
        prompt=stored_prompt(action.call.messages, options),
    )


def surgical_record(
    action: RunSurgical, replies: Mapping[str, ModelReply], options: EngineOptions
) -> AttemptRecord:
    slices, usage, costs = [], Usage(), []
    for pointer, call in action.calls.items():
        reply = replies.get(pointer) or ModelReply(
            model=action.model, error="no reply", error_kind="unavailable"
        )
        slices.append(slice_record(pointer, action.sent_values.get(pointer), reply, call.messages, options))
        usage = usage + reply.usage
        costs.append(cost_usd(reply, options))
    present = [replies[p] for p in action.calls if p in replies]
    return AttemptRecord(
        n=action.n,
        step=action.step,
        step_index=action.step_index,
        mode="surgical",
        model=action.model,
        reasoning_effort=action.reasoning_effort,
        targets=list(action.calls),
        slices=slices,
        usage=usage,
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        # Slices run in parallel: the step takes as long as its slowest slice.
        latency_ms=max((r.latency_ms for r in present), default=0.0),
        transport_retries=sum(r.transport_retries for r in present),
        asked_completion_tokens=sum(r.asked_completion_tokens for r in present),
        cap_retries=sum(r.cap_retries for r in present),
        batch_id=next((r.batch_id for r in present if r.batch_id), None),
        outcome="no_better",
    )


def slice_record(
    pointer: str, sent: Any, reply: ModelReply, messages: list[dict[str, str]], options: EngineOptions
) -> SliceRecord:
    prompt = stored_prompt(messages, options)
    if reply.error is not None:
        return SliceRecord(
            pointer=pointer, sent=sent, status="transport_error", detail=reply.error, prompt=prompt
        )
    if reply.refusal:
        return SliceRecord(pointer=pointer, sent=sent, status="refused", detail=reply.refusal, prompt=prompt)
    value, problem = read_slice_reply(reply.text)
    if problem is not None or reply.finish_reason == "length":
        detail = problem or "cut off at the token limit"
        return SliceRecord(pointer=pointer, sent=sent, status="unparseable", detail=detail, prompt=prompt)
    return SliceRecord(pointer=pointer, sent=sent, received=value, status="applied", prompt=prompt)


def cost_usd(reply: ModelReply, options: EngineOptions) -> float | None:
    if reply.cost_usd is not None:
        return reply.cost_usd
    price = options.prices.get(reply.model)
    if price is None:
        return None
    usage = reply.usage
    fresh_input = usage.input_tokens - usage.cached_input_tokens
    return (
        fresh_input * price.input_per_1m_usd
        + usage.cached_input_tokens * price.cached_input_per_1m_usd
        + usage.output_tokens * price.output_per_1m_usd  # output_tokens include reasoning (OpenAI)
    ) / 1_000_000


def stored_prompt(messages: list[dict[str, str]], options: EngineOptions) -> list[dict[str, str]] | None:
    if not options.store_prompts:
        return None
    # The source is in the spec once; a trace repeating it per attempt would bloat the stored state.
    return [{**m, "content": _without_document(m["content"])} for m in messages]


def _without_document(text: str) -> str:
    start_tag, end_tag = "<document>\n", "\n</document>"
    head, sep, rest = text.partition(start_tag)
    if not sep:
        return text
    body, sep2, tail = rest.partition(end_tag)
    if not sep2:
        return text
    return f"{head}<document>[source document, {len(body)} characters]</document>{tail}"
