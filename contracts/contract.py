"""The ``Contract`` base: turn untrusted model output into a verdict whose failures point at paths.

``validate`` runs the channels in order and stops at the first that fails, because each needs the
previous one to have passed: text -> JSON (``parse``/``truncated``), JSON -> anything at all
(``empty``), JSON -> the output model (``schema``), model -> the contract's own ``rule`` checks.

Decisions documented here (and relied on by tests):

- Raw ``str``/``bytes`` are parsed as JSON text; any other value is taken as already-parsed JSON.
- ``finish_reason == "length"`` is ``truncated`` even if the text happens to parse; JSON that ends
  early (an unterminated string, or a decoder error at the end of the input) is ``truncated``;
  any other decoding error is ``parse`` with line, column and character position.
  ``finish_reason == "content_filter"`` is a ``refusal``.
- ``NaN``/``Infinity`` are not JSON: ``parse`` (code ``non_finite_number``); invalid UTF-8 bytes
  are ``parse`` (code ``invalid_utf8``) with the byte position.
- A duplicate key inside an object is a ``schema`` failure ``duplicate_key`` at the pointer of the
  key (the last value wins in ``output``): the output is ambiguous, and regenerating that slice fixes it.
- ``null``, ``{}``, and an object with no non-blank string anywhere are ``empty`` (code ``empty_output``).
- A JSON value that is not an object is a ``schema`` failure at ``"/"`` (code ``schema_model_type``):
  ``"/"`` makes the failure untargetable, so surgery is impossible and a full attempt follows.
- Pydantic validates strictly (no ``"3"`` -> ``3`` coercion): model output is untrusted input.

Subclasses set ``name``, ``title`` and ``output_model`` and implement ``rule_failures``,
``task_instructions``, ``canonical_example`` and ``params``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from contracts.errors import ContractDefinitionError
from contracts.failure import Failure, Verdict
from contracts.pointer import exists, format_pointer, get, parent, parse_pointer
from contracts.strict_schema import strict_schema, sub_schema, template_from_schema

ROOT = "/"  # the pointer of failures that cannot point anywhere (never targetable)


class Contract(ABC):
    """What a valid output is for one kind of task, and the prompt-side facts surgery needs."""

    name: ClassVar[str]
    title: ClassVar[str]
    output_model: ClassVar[type[BaseModel]]

    def validate(self, raw: str | bytes | Any, *, finish_reason: str | None = None) -> Verdict:
        """Judge one output; bad output becomes failures, only a broken contract raises."""
        if finish_reason == "content_filter":
            return _fail(
                "refusal", ROOT, "content_filter", "The model's output was withheld by its content filter."
            )
        if finish_reason == "length":
            return _fail(
                "truncated",
                ROOT,
                "finish_length",
                "The output was cut off at the token limit; write a shorter, complete JSON object.",
            )
        if isinstance(raw, str | bytes):
            data, failures = decode(raw)
            if failures:
                return Verdict(ok=False, failures=failures, output=None)
        else:
            data, failures = raw, []
        return self._judge(data, failures)

    def _judge(self, data: Any, duplicates: list[Failure]) -> Verdict:
        if self.is_empty(data):
            return _fail("empty", ROOT, "empty_output", self.empty_message())
        failures = list(duplicates) + schema_failures(self.output_model, data)
        if len(failures) > len(duplicates):
            return Verdict(ok=False, failures=failures, output=data)
        model = self.output_model.model_validate(data, strict=True)
        failures += self.rule_failures(model, data)
        return Verdict(ok=not failures, failures=failures, output=data)

    def is_empty(self, data: Any) -> bool:
        """True if the output says nothing: ``null``, or an object without a non-blank string anywhere."""
        return data is None or (isinstance(data, dict) and not _has_text(data))

    def empty_message(self) -> str:
        """The one-sentence message of an ``empty_output`` failure."""
        return f"The output is empty; write a complete {self.title.lower()} as one JSON object."

    @abstractmethod
    def rule_failures(self, model: Any, data: Any) -> list[Failure]:
        """The contract's semantic failures of a schema-valid output, each at a precise pointer."""

    @abstractmethod
    def task_instructions(self) -> str:
        """The instructions a full prompt gives for this contract's parameters."""

    @abstractmethod
    def canonical_example(self) -> dict[str, Any]:
        """The contract's own realistic, valid example output (example tier 1)."""

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The JSON-able parameters that rebuild this contract (without any source document)."""

    def response_schema(self) -> dict[str, Any]:
        """The strict JSON schema of a full output (OpenAI structured-output compatible).

        Built once per output model and handed out as a fresh copy: pydantic's schema generation
        costs far more than the rest of planning a call, and callers may keep or change the copy.
        """
        return dict(json.loads(self._schema_text()))

    def slice_schema(self, output: Any, pointer: str) -> dict[str, Any]:
        """The strict schema of ``{"value": <slice>}``, the reply of a surgical call at ``pointer``."""
        return dict(json.loads(_slice_schema_text(self._schema_text(), pointer)))

    def _schema_text(self) -> str:
        """The strict schema as JSON text, cached per output model (the schema depends on nothing else)."""
        try:
            return _strict_schema_text(self.output_model)
        except ValueError as exc:
            raise ContractDefinitionError(self.name, str(exc)) from exc

    def slice_context(self, output: Any, pointer: str) -> dict[str, Any]:
        """The enclosing value a surgical prompt shows around ``pointer``: its nearest existing parent."""
        context = parent(pointer) if parse_pointer(pointer) else ""
        while context and not exists(output, context):
            context = parent(context)
        return {"parent_pointer": context, "parent": get(output, context)}

    def source_excerpt(self, output: Any, pointer: str) -> str | None:
        """The part of the source document relevant to ``pointer``, or None if there is none."""
        return None

    def schema_template(self) -> dict[str, Any]:
        """A placeholder output generated from the schema (example tier 3)."""
        template = template_from_schema(self.response_schema())
        if not isinstance(template, dict):
            raise ContractDefinitionError(self.name, "the output schema's root is not an object")
        return template


@lru_cache(maxsize=64)
def _strict_schema_text(model: type[BaseModel]) -> str:
    return json.dumps(strict_schema(model.model_json_schema()))


# Keyed by the whole schema text (its hash is computed once per string) so two contracts with the
# same pointer but different schemas never share an entry; bounded because pointers come from
# model output (an index per question).
@lru_cache(maxsize=1024)
def _slice_schema_text(schema_text: str, pointer: str) -> str:
    value_schema = sub_schema(json.loads(schema_text), parse_pointer(pointer), pointer)
    slice_schema = {
        "type": "object",
        "properties": {"value": value_schema},
        "required": ["value"],
        "additionalProperties": False,
    }
    return json.dumps(slice_schema)


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


def _has_text(value: Any) -> bool:
    # Iterative on purpose: model output can nest thousands of levels deep.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and item.strip():
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _failure(kind: Any, pointer: str, code: str, message: str) -> Failure:
    return Failure(kind=kind, pointer=pointer, code=code, message=message)


def _fail(kind: Any, pointer: str, code: str, message: str) -> Verdict:
    return Verdict(ok=False, failures=[_failure(kind, pointer, code, message)], output=None)


__all__ = ["ROOT", "Contract", "decode", "schema_failures"]
