"""Model text to JSON, and JSON to the output model: the parse, truncated, empty and schema channels.

The first two checks of ``Contract.validate``, as plain functions of untrusted text; the decisions
they implement are listed in ``suture.contracts.contract``'s docstring.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from suture.contracts.failure import Failure
from suture.contracts.pointer import format_pointer

ROOT = "/"  # the pointer of failures that cannot point anywhere (never targetable)


def decode(raw: str | bytes) -> tuple[Any, list[Failure]]:
    """Parse JSON text; returns the value and the failures (parse, truncated, empty, duplicate_key)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            message = (
                f"The output is not valid UTF-8 (bad byte at position {exc.start}); write plain UTF-8 JSON."
            )
            return None, [_failure("parse", ROOT, "invalid_utf8", message)]
    if not raw.strip():
        return None, [_failure("empty", ROOT, "empty_output", "The output is empty; write one JSON object.")]
    duplicates: list[tuple[int, str]] = []
    try:
        data = json.loads(raw, object_pairs_hook=_pairs_hook(duplicates), parse_constant=_reject_constant)
    except _NonFiniteNumber as exc:
        message = f"The output contains {exc.token}, which is not valid JSON; use a number or null."
        return None, [_failure("parse", ROOT, "non_finite_number", message)]
    except json.JSONDecodeError as exc:
        return None, [_decode_failure(raw, exc)]
    except RecursionError:
        return None, [_failure("parse", ROOT, "invalid_json", "The output is nested too deeply to parse.")]
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        message = (
            f"The output is not usable JSON ({' '.join(str(exc).split())[:120]}); write plain JSON values."
        )
        return None, [_failure("parse", ROOT, "invalid_json", message)]
    return data, _duplicate_failures(data, duplicates) if duplicates else []


def schema_failures(model: type[BaseModel], data: Any) -> list[Failure]:
    """Pydantic's strict validation errors as ``schema`` failures with pointers from ``loc``."""
    try:
        model.model_validate(data, strict=True)
    except ValidationError as exc:
        return [_schema_failure(error) for error in exc.errors(include_url=False)]
    return []


def _schema_failure(error: Any) -> Failure:
    loc = tuple(error["loc"])
    pointer = format_pointer(loc) or ROOT
    kind = error["type"]
    where = f"The value at {pointer}" if loc else "The output"
    if kind == "missing":
        message = f"{where} is missing; add it."
    elif kind == "extra_forbidden":
        message = f"{where} is not part of the schema; remove it."
    else:
        detail = str(error["msg"])
        message = f"{where} is invalid: {detail[:1].lower() + detail[1:]}."
    return _failure("schema", pointer, f"schema_{kind}", message)


def _decode_failure(raw: str, exc: json.JSONDecodeError) -> Failure:
    rest = raw[exc.pos :].strip()
    ends_early = (
        exc.msg.startswith("Unterminated string")
        or not rest
        or (
            exc.msg.startswith("Expecting value")
            and any(word.startswith(rest) for word in ("true", "false", "null"))
        )
    )
    if ends_early:
        message = "The JSON ends before it is complete (cut off); write the whole object."
        return _failure("truncated", ROOT, "truncated_json", message)
    message = (
        f"The output is not valid JSON: {exc.msg.lower()} at line {exc.lineno}, "
        f"column {exc.colno} (character {exc.pos})."
    )
    return _failure("parse", ROOT, "invalid_json", message)


class _NonFiniteNumber(ValueError):
    """NaN or Infinity met while decoding (Python accepts them; JSON does not)."""

    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(f"{token} is not valid JSON")


def _reject_constant(token: str) -> Any:
    raise _NonFiniteNumber(token)


def _pairs_hook(duplicates: list[tuple[int, str]]) -> Any:
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    duplicates.append((id(obj), key))
                seen.add(key)
        return obj

    return build


def _duplicate_failures(data: Any, duplicates: list[tuple[int, str]]) -> list[Failure]:
    # The hook only knows the object, not where it sits; find its pointer by walking the document.
    where: dict[int, str] = {}
    _index_objects(data, [], where)
    failures = []
    for obj_id, key in dict.fromkeys(duplicates):
        pointer = where.get(obj_id, "") + format_pointer([key])
        message = f"The key {key!r} appears more than once at {pointer}; keep exactly one."
        failures.append(_failure("schema", pointer, "duplicate_key", message))
    return failures


def _index_objects(value: Any, path: list[str], where: dict[int, str]) -> None:
    stack: list[tuple[Any, list[str]]] = [(value, path)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            where[id(item)] = format_pointer(at)
            stack.extend((child, [*at, str(key)]) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, [*at, str(index)]) for index, child in enumerate(item))


def _failure(kind: Any, pointer: str, code: str, message: str) -> Failure:
    return Failure(kind=kind, pointer=pointer, code=code, message=message)
