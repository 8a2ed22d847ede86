"""A batch input file read as OpenAI's ``validating`` step reads it: the request lines, or why it fails.

Each line is ``{"custom_id": ..., "method": "POST", "url": "/v1/chat/completions", "body": {...}}``.
A file fails as a whole (batch status ``failed``, ``errors.data`` of ``BatchError`` objects with
``code``, ``line``, ``message``, ``param``) for the reasons OpenAI documents: ``invalid_json_line``,
``duplicate_custom_id``, ``url_mismatch``, ``model_mismatch``, ``empty_file``, ``too_many_tasks``,
plus ``missing_required_parameter`` / ``invalid_request`` for a line without its fields. A body
the endpoint would refuse (no messages, an unknown model) is not a file error: that line gets its
400/404 in the batch's error file, as OpenAI answers it. Blank lines are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MAX_LINES = 50_000  # OpenAI's cap on requests in one batch
MAX_LISTED_ERRORS = 100  # errors.data lists the first ones; the rest only make the file fail


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: its 1-based line number, ``custom_id`` and Chat Completions body."""

    number: int
    custom_id: str
    body: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class BatchInput:
    """The requests of a valid file, or the errors that fail it (then ``lines`` is empty)."""

    lines: list[BatchLine]
    model: str | None
    errors: list[dict[str, Any]]


def batch_error(code: str, message: str, line: int | None = None, param: str | None = None) -> dict[str, Any]:
    """A ``BatchError`` object as OpenAI lists it in ``errors.data``."""
    return {"code": code, "line": line, "message": message, "param": param}


def read_input(content: bytes, endpoint: str) -> BatchInput:
    """Validate a JSONL input file for ``endpoint``; pure, so it can run off the event loop."""
    lines: list[BatchLine] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    model: str | None = None
    for number, raw in enumerate(content.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if len(lines) + len(errors) >= MAX_LINES:
            message = f"The batch input file has more than {MAX_LINES} requests."
            return BatchInput([], None, [batch_error("too_many_tasks", message)])
        line, error = _read_line(number, raw, endpoint)
        if error is None and line is not None:
            model = model or line.body["model"]
            error = _conflict(line, seen, model)
            seen.add(line.custom_id)
        if error is not None:
            errors.append(error)
        elif line is not None:
            lines.append(line)
    if not lines and not errors:
        errors.append(batch_error("empty_file", "The batch input file is empty."))
    if errors:
        return BatchInput([], None, errors[:MAX_LISTED_ERRORS])
    return BatchInput(lines, model, [])


def _read_line(number: int, raw: bytes, endpoint: str) -> tuple[BatchLine | None, dict[str, Any] | None]:
    try:
        item = json.loads(raw)
    except ValueError:
        item = None
    if not isinstance(item, dict):
        return None, batch_error("invalid_json_line", "This line is not parseable as valid JSON.", number)
    for name in ("custom_id", "method", "url", "body"):
        if name not in item:
            message = f"Missing required parameter: '{name}'."
            return None, batch_error("missing_required_parameter", message, number, name)
    custom_id, body = item["custom_id"], item["body"]
    if not isinstance(custom_id, str) or not custom_id:
        return None, batch_error(
            "invalid_request", "'custom_id' must be a non-empty string.", number, "custom_id"
        )
    if item["method"] != "POST":
        return None, batch_error("invalid_request", "The method must be 'POST'.", number, "method")
    if item["url"] != endpoint:
        message = f"The url '{item['url']}' does not match the batch's endpoint '{endpoint}'."
        return None, batch_error("url_mismatch", message, number, "url")
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        message = "Missing required parameter: 'body.model'."
        return None, batch_error("missing_required_parameter", message, number, "body.model")
    return BatchLine(number, custom_id, body), None


def _conflict(line: BatchLine, seen: set[str], model: str) -> dict[str, Any] | None:
    if line.custom_id in seen:
        message = f"The custom_id '{line.custom_id}' is used by more than one request."
        return batch_error("duplicate_custom_id", message, line.number, "custom_id")
    if line.body["model"] != model:
        message = f"Every request of a batch must use one model: '{model}', then '{line.body['model']}'."
        return batch_error("model_mismatch", message, line.number, "body.model")
    return None
