"""Strict JSON schemas for OpenAI structured output, derived from pydantic's schema by post-processing.

OpenAI's strict mode accepts a subset of JSON Schema: every object lists all its properties in
``required`` and sets ``additionalProperties: false``, and only a whitelist of keywords is allowed.
``strict_schema`` inlines ``$ref`` (so slices can be cut out of it by pointer) and keeps only the
whitelisted keywords. Recursive models cannot be inlined and are rejected with ``ValueError``,
which ``Contract`` reports as a ``ContractDefinitionError``.
"""

from __future__ import annotations

from typing import Any

from suture.contracts.errors import PointerError

# Keywords OpenAI strict structured output supports (others, e.g. title/default/minLength, are dropped).
ALLOWED_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "description",
        "enum",
        "const",
        "anyOf",
    }
)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A strict, self-contained copy of a pydantic JSON schema (refs inlined, keywords whitelisted)."""
    definitions = schema.get("$defs", {})
    return _strict(schema, definitions, ())


def sub_schema(schema: dict[str, Any], tokens: list[str], pointer: str) -> dict[str, Any]:
    """The part of a strict schema describing the value at ``tokens`` (list indices step into items)."""
    node = schema
    for depth, token in enumerate(tokens):
        where = "/".join(tokens[:depth]) or "the root"
        if node.get("type") == "object" and token in node.get("properties", {}):
            node = node["properties"][token]
        elif node.get("type") == "array" and token.isdigit():
            node = node["items"]
        else:
            raise PointerError(pointer, f"the schema has no {token!r} under {where}")
    return node


def template_from_schema(schema: dict[str, Any]) -> Any:
    """A placeholder value shaped like the schema: descriptions in angle brackets, one item per list."""
    kind = schema.get("type")
    if "anyOf" in schema:
        return template_from_schema(schema["anyOf"][0])
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {key: template_from_schema(sub) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [template_from_schema(schema.get("items", {}))]
    if kind == "integer":
        return 0
    if kind == "number":
        return 0.0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return f"<{schema.get('description', 'text')}>"


def _strict(node: Any, definitions: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_strict(item, definitions, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"model {name!r} is recursive; strict schemas here must be inlinable")
        if name not in definitions:
            raise ValueError(f"schema reference {node['$ref']!r} has no definition")
        merged = {**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _strict(merged, definitions, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in ALLOWED_KEYWORDS:
            continue
        if key == "properties":
            out[key] = {prop: _strict(sub, definitions, seen) for prop, sub in value.items()}
        else:
            out[key] = _strict(value, definitions, seen)
    if out.get("type") == "object" or "properties" in out:
        out["type"] = "object"
        out.setdefault("properties", {})
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out
