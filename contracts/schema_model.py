"""A declared JSON Schema checked against OpenAI's strict mode, and turned into a pydantic model.

A declarative contract states its output as JSON Schema; ``strict_problem`` says, in one line with a
JSON pointer into the schema, why OpenAI's strict structured output would refuse it (a root that is not
an object, an object without ``additionalProperties: false`` or with an optional property, a keyword
outside the strict subset, too deep a nesting). ``model_from_schema`` builds the pydantic model the
``Contract`` base validates with, so schema failures point at paths exactly as the quiz's do.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from suture.contracts.pointer import format_pointer
from suture.contracts.strict_schema import ALLOWED_KEYWORDS

MAX_NESTING = 10  # OpenAI: objects nested at most 10 levels deep
MAX_PROPERTIES = 5000
MAX_ENUM_VALUES = 1000
_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": None}
_TYPES = (*_SCALARS, "object", "array")


def strict_problem(schema: Any) -> str | None:
    """Why strict mode refuses ``schema`` (``<pointer>: <reason>``, pointer into the schema), or None."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "/: the root must be an object schema (type: object)"
    problems: list[str] = []
    count = [0]
    _check(schema, [], 0, problems, count)
    if not problems and count[0] > MAX_PROPERTIES:
        problems.append(f"/: {count[0]} properties, over strict mode's {MAX_PROPERTIES}")
    return problems[0] if problems else None


def _check(node: Any, path: list[str | int], depth: int, problems: list[str], count: list[int]) -> None:
    where = format_pointer(path) or "/"
    if problems:
        return
    if not isinstance(node, dict):
        problems.append(f"{where}: a schema must be an object")
        return
    extra = sorted(set(node) - ALLOWED_KEYWORDS)
    if extra:
        problems.append(f"{where}: keyword {extra[0]!r} is not supported in strict mode")
        return
    if "anyOf" in node:
        for index, option in enumerate(node["anyOf"] if isinstance(node["anyOf"], list) else [None]):
            _check(option, [*path, "anyOf", index], depth, problems, count)
        return
    if "enum" in node and (not isinstance(node["enum"], list) or len(node["enum"]) > MAX_ENUM_VALUES):
        problems.append(f"{where}: enum must be a list of at most {MAX_ENUM_VALUES} values")
        return
    kind = node.get("type")
    if kind not in _TYPES and "enum" not in node and "const" not in node:
        problems.append(f"{where}: type must be one of {', '.join(_TYPES)}")
    elif kind == "object":
        _check_object(node, path, depth, problems, count)
    elif kind == "array":
        if "items" not in node:
            problems.append(f"{where}: an array needs items")
        else:
            _check(node["items"], [*path, "items"], depth, problems, count)


def _check_object(
    node: dict[str, Any], path: list[str | int], depth: int, problems: list[str], count: list[int]
) -> None:
    where = format_pointer(path) or "/"
    properties = node.get("properties")
    if depth >= MAX_NESTING:
        problems.append(f"{where}: objects nested deeper than strict mode's {MAX_NESTING} levels")
    elif not isinstance(properties, dict) or not properties:
        problems.append(f"{where}: an object needs properties")
    elif node.get("additionalProperties") is not False:
        problems.append(f"{where}: strict mode needs additionalProperties: false")
    elif sorted(node.get("required") or []) != sorted(properties):
        missing = sorted(set(properties) - set(node.get("required") or []))
        problems.append(f"{where}: strict mode needs every property required (not: {', '.join(missing)})")
    else:
        count[0] += len(properties)
        for key, sub in properties.items():
            _check(sub, [*path, "properties", key], depth + 1, problems, count)


def model_from_schema(schema: dict[str, Any], name: str) -> type[BaseModel]:
    """The pydantic model of a strict-checked object ``schema`` (``strict_problem`` returned None)."""
    model: type[BaseModel] = _annotation(schema, _class_name(name))
    return model


def _annotation(node: dict[str, Any], name: str) -> Any:
    if "anyOf" in node:
        options = tuple(_annotation(option, f"{name}Option{i}") for i, option in enumerate(node["anyOf"]))
        union: Any = options[0]
        for option in options[1:]:
            union = union | option
        return union
    if "enum" in node or "const" in node:
        values = tuple(node["enum"]) if "enum" in node else (node["const"],)
        return Literal[values]
    kind = node.get("type")
    if kind == "array":
        items, item = node["items"], _annotation(node["items"], f"{name}Item")
        if isinstance(items, dict) and items.get("description") and items.get("type") != "object":
            item = Annotated[item, Field(description=items["description"])]  # kept in the items' schema
        return list[item]  # type: ignore[valid-type]
    if kind == "object":
        fields: dict[str, Any] = {}
        for index, (key, sub) in enumerate(node["properties"].items()):
            field = Field(alias=key, description=sub.get("description")) if isinstance(sub, dict) else Field()
            fields[f"field_{index}"] = (_annotation(sub, f"{name}{_class_name(key)}"), field)
        config = ConfigDict(extra="forbid", populate_by_name=False)
        model = create_model(name, __config__=config, __doc__=node.get("description"), **fields)
        return model
    return _SCALARS.get(str(kind), Any)


def _class_name(text: str) -> str:
    return "".join(part.capitalize() for part in "".join(c if c.isalnum() else " " for c in text).split())
