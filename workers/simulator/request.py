"""A validated Chat Completions request, or the 400/404 OpenAI would answer instead."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, get_args

from suture.config.settings import ReasoningEffort
from suture.workers.simulator.errors import RequestRejected
from suture.workers.simulator.tokens import prompt_tokens

REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)


@dataclass(frozen=True)
class ChatRequest:
    """The fields of ``POST /v1/chat/completions`` the simulator honours."""

    model: str
    messages: list[dict[str, Any]]
    schema_name: str
    json_schema: dict[str, Any] | None
    reasoning_effort: str | None
    max_completion_tokens: int | None
    seed: int | None
    prompt_cache_key: str | None = None


def parse_request(raw: bytes, models: tuple[str, ...]) -> ChatRequest:
    """Check a request body like the real API would; raises ``RequestRejected`` with its status."""
    try:
        body = json.loads(raw)
    except ValueError:
        raise _invalid("We could not parse the JSON body of your request.") from None
    if not isinstance(body, dict):
        raise _invalid("The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("You must provide a model parameter.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("Missing required parameter: 'messages'.")
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        raise _invalid("Each message must be an object with a 'role'.")
    if body.get("stream"):
        raise _invalid("Streaming is not supported by the suture simulator.")
    if model not in models:
        raise RequestRejected(
            404, "model_not_found", f"The model `{model}` does not exist or you do not have access to it."
        )
    name, schema = _response_format(body.get("response_format"))
    return ChatRequest(
        model=model,
        messages=messages,
        schema_name=name,
        json_schema=schema,
        reasoning_effort=_effort(body.get("reasoning_effort")),
        max_completion_tokens=_positive_int(body, "max_completion_tokens"),
        seed=_optional_int(body, "seed"),
        prompt_cache_key=_cache_key(body.get("prompt_cache_key")),
    )


def check_context(chat: ChatRequest, context_tokens: int) -> None:
    """Refuse a request whose messages and reply would not fit the model's context window, as OpenAI
    does: HTTP 400, code ``context_length_exceeded``, both numbers in the message."""
    given = prompt_tokens(chat.messages)
    reply = chat.max_completion_tokens or 0  # without a cap asked, only the messages must fit
    if given + reply > context_tokens:
        message = (
            f"This model's maximum context length is {context_tokens} tokens. However, you requested "
            f"{given + reply} tokens ({given} in the messages, {reply} in the completion). "
            "Please reduce the length of the messages or completion."
        )
        raise RequestRejected(400, "context_length_exceeded", message, param="messages")


def _cache_key(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _invalid("Invalid type for 'prompt_cache_key': expected a string.")
    return value


def _response_format(value: Any) -> tuple[str, dict[str, Any] | None]:
    if value is None:
        return "", None
    if not isinstance(value, dict) or value.get("type") not in ("json_schema", "json_object", "text"):
        raise _invalid("Invalid value for 'response_format.type'.")
    if value["type"] != "json_schema":
        return "", None
    spec = value.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise _invalid("Missing required parameter: 'response_format.json_schema.name'.")
    schema = spec.get("schema")
    if schema is not None and not isinstance(schema, dict):
        raise _invalid("Invalid type for 'response_format.json_schema.schema': expected an object.")
    return spec["name"], schema


def _effort(value: Any) -> str | None:
    if value is not None and value not in REASONING_EFFORTS:
        raise _invalid(
            f"Invalid value for 'reasoning_effort': supported values are {', '.join(REASONING_EFFORTS)}."
        )
    return value


def _positive_int(body: dict[str, Any], key: str) -> int | None:
    value = _optional_int(body, key)
    if value is not None and value < 1:
        raise _invalid(f"Invalid '{key}': integer below minimum value 1.")
    return value


def _optional_int(body: dict[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise _invalid(f"Invalid type for '{key}': expected an integer.")
    return value


def _invalid(message: str) -> RequestRejected:
    return RequestRejected(400, "invalid_request_error", message)
