"""A Chat Completions call on the wire: the request body suture sends and what it reads of the reply.

Kept apart from the client so the transport (retries, budget) reads as one thing and the body
format as another; both are plain functions over untrusted JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from suture.config.settings import Settings
from suture.tasks.calls import ModelCall, Usage
from suture.tasks.reply_size import completion_cap, reasoning_allowance


def sized(call: ModelCall, settings: Settings) -> ModelCall:
    """The call with its ``max_completion_tokens`` sized to its expected reply (``tasks.reply_size``), within
    the ceiling (the call's own, else ``client.max_completion_tokens``); the same call when already sized."""
    client = settings.client
    ceiling = call.max_completion_tokens or client.max_completion_tokens
    if call.expected_reply_tokens is None:
        return (
            call if call.max_completion_tokens else call.model_copy(update={"max_completion_tokens": ceiling})
        )
    allowance = reasoning_allowance(
        call.expected_reply_tokens,
        client.reasoning_allowance,
        client.reasoning_allowance_by_model,
        call.model,
        call.reasoning_effort,
    )
    cap = completion_cap(
        call.expected_reply_tokens, margin=client.reply_margin, reasoning_tokens=allowance, ceiling=ceiling
    )
    return call.model_copy(update={"max_completion_tokens": cap, "expected_reply_tokens": None})


def request_body(call: ModelCall, settings: Settings) -> dict[str, Any]:
    """The JSON body of a Chat Completions request for a call.

    Sent with the SDK's plain ``post`` (its documented way to send a body as is): the typed
    ``chat.completions.create`` walks every message and schema node against its parameter types
    first, which cost more than the rest of a call to a fast model. Same endpoint, headers, auth,
    timeouts and status errors; the reply is parsed as ``create`` parses it.
    """
    arguments: dict[str, Any] = {
        "model": call.model,
        "messages": call.messages,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": call.schema_name, "schema": call.json_schema, "strict": True},
        },
        "max_completion_tokens": sized(call, settings).max_completion_tokens,
    }
    if call.reasoning_effort is not None:
        arguments["reasoning_effort"] = call.reasoning_effort
    if call.seed is not None:
        arguments["seed"] = call.seed
    if call.cache_key is not None and settings.client.send_prompt_cache_key:
        arguments["prompt_cache_key"] = call.cache_key
    return arguments


@dataclass(frozen=True)
class Completion:
    """What suture reads of a Chat Completions response body: the first choice and the usage."""

    text: str | None
    finish_reason: str | None
    refusal: str | None
    usage: Usage


def read_completion(body: Any) -> Completion:
    """Read a response body (untrusted JSON) as the SDK's ``ChatCompletion`` would be read.

    Only the fields suture uses are read, and each is type-checked: a body that is not an object,
    has no choice, or has a field of the wrong type raises ``ValueError``/``LookupError``/``TypeError``
    (the caller's "malformed response body"). Building the SDK's ``ChatCompletion`` model of the whole
    body first cost more CPU than the rest of the reply handling, for fields nobody reads.
    """
    choice = body["choices"][0]
    message = choice["message"]
    if not isinstance(message, dict):
        raise TypeError("choices[0].message is not an object")
    return Completion(
        text=_optional_str(message.get("content"), "content"),
        finish_reason=_optional_str(choice.get("finish_reason"), "finish_reason"),
        refusal=_optional_str(message.get("refusal"), "refusal"),
        usage=usage_of(body.get("usage")),
    )


def _optional_str(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} is not a string")
    return value


def usage_of(usage: Any) -> Usage:
    """Token counts from a response's ``usage`` object (output includes reasoning, as OpenAI counts it)."""
    if not isinstance(usage, dict):
        return Usage()
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    return Usage(
        input_tokens=_count(usage.get("prompt_tokens")),
        cached_input_tokens=_count(
            prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else 0
        ),
        output_tokens=_count(usage.get("completion_tokens")),
        reasoning_tokens=_count(
            completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else 0
        ),
    )


def _count(value: Any) -> int:
    """A token count; anything but a non-negative integer counts as unknown (0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
