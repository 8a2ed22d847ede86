"""Placeholder values shaped by a strict JSON schema, for requests that are not quizzes."""

from __future__ import annotations

import random
from typing import Any

MAX_DEPTH = 8


def fill(
    schema: dict[str, Any], rng: random.Random, defs: dict[str, Any] | None = None, depth: int = 0
) -> Any:
    """A value valid for simple strict schemas (objects, arrays, scalars, enums, local $refs)."""
    defs = defs if defs is not None else {**schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return fill(schema[key][0], rng, defs, depth + 1)
    kind = schema.get("type", "object")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if depth > MAX_DEPTH:
        return None
    if kind == "object":
        props = schema.get("properties", {})
        return {name: fill(sub, rng, defs, depth + 1) for name, sub in props.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        return [fill(schema.get("items", {}), rng, defs, depth + 1) for _ in range(count)]
    return {"string": "simulated text", "integer": rng.randint(0, 3), "number": 0.5, "boolean": True}.get(
        kind
    )
