"""A validated Chat Completions request, or the 400/404 OpenAI would answer instead."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from workers.simulator.errors import RequestRejected

REASONING_EFFORTS = ("minimal", "low", "medium", "high")


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
