"""Declarative contracts: a contract stated as data (a YAML or JSON file's content), no Python.

``ContractDefinition`` is the file's shape: ``name``, ``title``, ``instructions``, ``schema`` (JSON
Schema of the output, checked against OpenAI's strict mode: ``schema_model.strict_problem``), ``unit``
(the surgical unit, a pointer pattern with ``*``, e.g. ``/cards/*``), ``preserve`` (patterns relative
to a unit that a repair of it keeps), ``rules`` (``declarative_rules``' vocabulary) and an optional
``example`` (a valid output; else the schema's template). ``contract_from_definition(data)`` checks it
and returns a ``Contract`` subclass; a problem raises ``DefinitionProblem(pointer, problem)`` with a
JSON pointer into the definition (``suture.workers.contract_files`` adds the file's name). Pure.

A failure inside a unit is repaired at that unit (``repair_target``: the enclosing match of ``unit``),
so a surgical patch touches the failing units only, and keeps each unit's ``preserve`` paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from suture.config.settings import Settings
from suture.contracts.contract import Contract
from suture.contracts.declarative_rules import RULE_NAMES, Rule, rule_failures
from suture.contracts.decoding import schema_failures
from suture.contracts.errors import ContractError, ContractParamsError
from suture.contracts.failure import Failure
from suture.contracts.pointer import expand, format_pointer, get, is_prefix, parse_pointer
from suture.contracts.schema_model import model_from_schema, strict_problem
from suture.contracts.source import SourceText
from suture.contracts.strict_schema import template_from_schema

EXCERPT_MARGIN_CHARS = 200


class DefinitionProblem(ContractError):
    """A contract definition that cannot be used: where (a JSON pointer into it) and why."""

    def __init__(self, pointer: str, problem: str) -> None:
        self.pointer = pointer or "/"
        self.problem = problem
        super().__init__(f"{self.pointer}: {problem}")


class ContractDefinition(BaseModel):
    """What a contract file holds (unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")
    title: str = Field(min_length=1)
    instructions: str = Field(min_length=1)
    schema_: dict[str, Any] = Field(alias="schema")
    unit: str = Field(pattern=r"^/")
    preserve: list[str] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    example: dict[str, Any] | None = None

    @field_validator("unit")
    @classmethod
    def _unit(cls, value: str) -> str:
        if "*" not in parse_pointer(value):
            raise ValueError("the unit is a pattern with a '*' (e.g. /cards/*)")
        return value

    @field_validator("preserve")
    @classmethod
    def _relative(cls, value: list[str]) -> list[str]:
        for pattern in value:
            if not pattern or pattern.startswith("/"):
                raise ValueError(f"{pattern!r}: preserve patterns are relative to the unit (no leading /)")
        return value


class DeclarativeContract(Contract):
    """A contract built from a ``ContractDefinition`` (one subclass per definition)."""

    definition: ClassVar[ContractDefinition]
    default_policy: ClassVar[str | None] = "default"

    def __init__(self, source: str | None = None) -> None:
        self.source = source
        self._source_text = SourceText(source) if source else None

    @classmethod
    def resolve_params(cls, params: Mapping[str, Any], settings: Settings | None) -> dict[str, Any]:
        """A declarative contract takes no parameters; any given one is refused, naming it."""
        for key, value in params.items():
            raise ContractParamsError(cls.name, key, value, "unknown parameter (this contract takes none)")
        return {}

    def params(self) -> dict[str, Any]:
        return {}

    def task_instructions(self) -> str:
        return self.definition.instructions

    def canonical_example(self) -> dict[str, Any]:
        example = self.definition.example
        return dict(example) if example is not None else dict(template_from_schema(self.definition.schema_))

    def rule_failures(self, model: Any, data: Any) -> list[Failure]:
        failures: list[Failure] = []
        for rule in self.definition.rules:
            failures += rule_failures(rule, data, self._source_text)
        return failures

    def repair_target(self, failure: Failure) -> str:
        """The unit enclosing the failure (a patch touches failing units only), else the failure's own
        path."""
        tokens = parse_pointer(failure.pointer) if failure.pointer.startswith("/") else []
        unit = parse_pointer(self.definition.unit)
        if len(tokens) >= len(unit) and all(u in ("*", t) for u, t in zip(unit, tokens, strict=False)):
            return format_pointer(tokens[: len(unit)])
        return failure.pointer

    def source_excerpts(self, output: Any, pointer: str) -> list[str] | None:
        """The passages the ``in_source`` texts under ``pointer`` quote (+-200 characters); None if none."""
        if self._source_text is None:
            return None
        excerpts = []
        for rule in self.definition.rules:
            if rule.rule != "in_source":
                continue
            for at in expand(output, rule.at):
                quote = get(output, at)
                if is_prefix(pointer, at) and isinstance(quote, str):
                    excerpt = self._source_text.excerpt(quote, EXCERPT_MARGIN_CHARS)
                    if excerpt is not None:
                        excerpts.append(excerpt)
        return excerpts or None


def contract_from_definition(data: Any) -> type[Contract]:
    """The contract class ``data`` defines; raises ``DefinitionProblem`` (pointer into ``data``, problem)."""
    if not isinstance(data, Mapping):
        raise DefinitionProblem("/", "a contract definition is a mapping (name, title, instructions, ...)")
    try:
        definition = ContractDefinition.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = [part for part in error["loc"] if not _is_union_tag(part)]
        raise DefinitionProblem(format_pointer(loc), str(error["msg"])) from None
    problem = strict_problem(definition.schema_)
    if problem is not None:
        where, _, reason = problem.partition(": ")
        raise DefinitionProblem(
            "/schema" + ("" if where == "/" else where), f"OpenAI strict mode would refuse it: {reason}"
        )
    model = model_from_schema(definition.schema_, definition.name)
    if definition.example is not None:
        wrong = schema_failures(model, definition.example)
        if wrong:
            raise DefinitionProblem("/example" + wrong[0].pointer.rstrip("/"), wrong[0].message)
    attributes = {
        "name": definition.name,
        "title": definition.title,
        "output_model": model,
        "definition": definition,
        "invariants": {definition.unit: tuple(definition.preserve)} if definition.preserve else {},
        "__doc__": f"The declarative contract {definition.name!r}: {definition.title}.",
    }
    return type(f"Declarative_{definition.name}", (DeclarativeContract,), attributes)


def _is_union_tag(part: Any) -> bool:
    """A discriminated union's tag in a pydantic error location (the rule's name), not a key of the file."""
    return isinstance(part, str) and part in RULE_NAMES
