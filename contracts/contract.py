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
``task_instructions``, ``canonical_example`` and ``params``. A contract also says which job
parameters it takes (``resolve_params``: the job's values over the settings' defaults, checked,
complete, JSON-able; what a job stores and is judged by), what a surgical repair must keep per kind
of target (``invariants``), the smallest slice that can fix a failure (``repair_target``), the
repairs that need no model (``fixers``), and the retry policy its jobs run when none is named
(``default_policy``).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import BaseModel

from suture.config.settings import Settings
from suture.contracts.decoding import ROOT, decode, schema_failures
from suture.contracts.errors import ContractDefinitionError, ContractError
from suture.contracts.examples import estimate_tokens
from suture.contracts.failure import Failure, Verdict
from suture.contracts.fixer import Fixer
from suture.contracts.invariants import names_for
from suture.contracts.pointer import exists, expand, get, is_prefix, join, parent, parse_pointer
from suture.contracts.strict_schema import strict_schema, sub_schema, template_from_schema

# A surgical reply wraps its slice as {"value": ...}: the wrapper's few tokens.
SLICE_FRAME_TOKENS = 8
# A canonical example shows one or two items of each list where a real output holds several (the
# outline's example: 183 tokens, its replies 600-1,500): a whole output is sized at this many examples.
WHOLE_OUTPUT_EXAMPLES = 6


class Contract(ABC):
    """What a valid output is for one kind of task, and the prompt-side facts surgery needs."""

    name: ClassVar[str]
    title: ClassVar[str]
    output_model: ClassVar[type[BaseModel]]
    # What a surgical repair must keep, whatever the policy: a target kind (a pointer whose ``*``
    # matches any one token) -> the names of the invariants a slice of that kind keeps
    # (``contracts.invariants``; a name is a pointer pattern relative to the target unless
    # ``resolve_invariant`` says otherwise). A slice that breaks one is rolled back alone
    # (``contracts.preserve``).
    invariants: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    # The retry policy a job of this contract runs when neither the job nor the settings name one.
    default_policy: ClassVar[str | None] = None

    @classmethod
    def resolve_params(cls, params: Mapping[str, Any], settings: Settings | None) -> dict[str, Any]:
        """The job's parameters, complete: ``params`` over ``settings``' defaults (the contract's own
        without settings), checked. Raises ``ContractParamsError`` naming the value. JSON-able: a job
        stores them and every worker rebuilds the same contract from them (``from_params``)."""
        return dict(params)

    @classmethod
    def params_for_source(cls, params: dict[str, Any], source: str) -> dict[str, Any]:
        """Resolved ``params`` completed from the job's source at enqueue (the quiz: its detected
        language)."""
        return params

    @classmethod
    def from_params(cls, params: Mapping[str, Any], source: str | None = None) -> Contract:
        """The contract for resolved ``params`` and the job's source document (its constructor's keywords)."""
        constructor: Any = cls  # a subclass's __init__ takes its params and ``source``; the base's takes none
        return constructor(**params, source=source)

    @classmethod
    def invariant_names(cls) -> frozenset[str]:
        """Every invariant name some target kind of this contract keeps (what a policy may name)."""
        return frozenset(name for names in cls.invariants.values() for name in names)

    def slice_invariants(self, output: Any, target: str) -> list[str]:
        """The pointers in ``output`` whose values a repair of ``target`` must keep (its kind's
        invariants)."""
        found: list[str] = []
        for name in names_for(self.invariants, target):
            found += self.resolve_invariant(name, target, output)
        return list(dict.fromkeys(found))

    def resolve_invariant(self, name: str, target: str, output: Any) -> list[str]:
        """The pointers invariant ``name`` pins under ``target``: by default ``name`` is a pattern relative
        to the target; a contract overrides this for an invariant that depends on the output."""
        return [p for p in expand(output, join(target, name)) if is_prefix(target, p)]

    def repair_target(self, failure: Failure) -> str:
        """The smallest path whose regeneration can fix ``failure`` (``target: smallest``): its own pointer,
        unless the contract knows a slice that small cannot fix it (then an enclosing one)."""
        return failure.pointer

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
        try:
            failures += self.rule_failures(model, data)
        except ContractError:
            raise
        except Exception as exc:  # a rule that raises is the contract's bug, never the output's fault
            raise ContractDefinitionError(self.name, f"a rule raised {type(exc).__name__}: {exc}") from exc
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

    def fixers(self) -> Mapping[str, Fixer]:
        """Deterministic repairs by failure code, run before any model step (``contracts.fixer``)."""
        return {}

    def source_excerpts(self, output: Any, pointer: str) -> list[str] | None:
        """What a slice prompt for ``pointer`` carries of the source: its excerpt(s), or None when the
        slice needs the whole document (no excerpt found, or the contract says so by returning None)."""
        excerpt = self.source_excerpt(output, pointer)
        return None if excerpt is None else [excerpt]

    def reply_tokens(self, output: Any = None, pointer: str | None = None) -> int:
        """The visible tokens a reply is expected to take: a whole output, or the slice at ``pointer`` of
        ``output``.

        It sizes each call's ``max_completion_tokens`` (times ``client.reply_margin``, plus a reasoning
        allowance): the provider counts what a call asks for against its TPM, so asking for the
        ceiling on every call fills the limit with tokens no reply uses. The default: the size of the
        canonical example times ``WHOLE_OUTPUT_EXAMPLES`` for a whole output, the size of the value being
        replaced for a slice (the
        whole-output size when it is missing; a list as its items x its largest item, since a repair may
        bring every item up to it: options balanced against a long correct answer). A contract whose
        output grows with a parameter says so (the quiz: questions x tokens per question).
        """
        if pointer is None or output is None or not exists(output, pointer):
            example = estimate_tokens(json.dumps(self.canonical_example(), ensure_ascii=False))
            return WHOLE_OUTPUT_EXAMPLES * example
        value = get(output, pointer)
        if isinstance(value, list) and value:
            largest = max(estimate_tokens(json.dumps(item, ensure_ascii=False)) for item in value)
            return SLICE_FRAME_TOKENS + len(value) * largest
        return SLICE_FRAME_TOKENS + estimate_tokens(json.dumps(value, ensure_ascii=False))

    def schema_template(self) -> dict[str, Any]:
        """A placeholder output generated from the schema (example tier 3)."""
        template = template_from_schema(self.response_schema())
        if not isinstance(template, dict):
            raise ContractDefinitionError(self.name, "the output schema's root is not an object")
        return template


def check_definition(cls: type[Contract], name: str) -> None:
    """Raise ContractDefinitionError naming ``name`` unless ``cls`` is a usable contract class: concrete,
    named ``name``, with a title and an output model whose schema OpenAI's strict mode takes."""
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        raise ContractDefinitionError(name, f"{cls.__qualname__} does not implement {', '.join(missing)}")
    if getattr(cls, "name", None) != name:
        raise ContractDefinitionError(name, f"{cls.__qualname__}.name is {getattr(cls, 'name', None)!r}")
    if not isinstance(getattr(cls, "title", None), str):
        raise ContractDefinitionError(name, f"{cls.__qualname__}.title is not a string")
    model = getattr(cls, "output_model", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ContractDefinitionError(name, f"{cls.__qualname__}.output_model is not a pydantic model")
    try:
        _strict_schema_text(model)
    except ValueError as exc:
        raise ContractDefinitionError(
            name, f"its output schema is not strict-mode compatible: {exc}"
        ) from None


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


__all__ = ["ROOT", "Contract", "check_definition", "decode", "schema_failures"]
