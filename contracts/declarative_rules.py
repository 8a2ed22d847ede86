"""The rule vocabulary of declarative contracts: each rule checks the values at a pointer pattern.

Every rule is ``{rule: NAME, at: PATTERN, ...}`` (``*`` matches any key or index at its level), with an
optional ``code`` (default: the rule's name) and ``message``. Each failure points at the offending item:

=================  ======================  ===============================================================
rule               parameters              fails at each match ...
=================  ======================  ===============================================================
unique             (none)                  whose text repeats an earlier one's among its siblings (the
                                           matches that differ only in the pattern's last ``*``); case
                                           and whitespace folded
max_words          max                     with more than ``max`` words
min_words          min                     with fewer than ``min`` words
regex              pattern                 whose text the regular expression does not match (re.search)
in_source          (none)                  whose text is not quoted from the source document (whitespace
                                           and typographic quotes folded; skipped without a source)
length_balance     ratio                   at is a pattern of lists: an item longer (characters) than
                                           ``ratio`` x the longest of its siblings fails, at the item
not_contains       other                   whose text contains the text at ``other`` (a pattern: absolute,
                                           its ``*`` bound like ``at``'s, or relative to the match's parent)
min_items          min                     at is a pattern of lists: one with fewer than ``min`` items
max_items          max                     ... with more than ``max`` items
=================  ======================  ===============================================================

Non-text values are judged by their JSON text (``regex``, words) or skipped (``in_source``). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from suture.contracts.failure import Failure
from suture.contracts.pointer import expand, format_pointer, get, join, parent, parse_pointer
from suture.contracts.source import SourceText, fold

WILDCARD = "*"


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    at: str = Field(pattern=r"^/")
    code: str | None = Field(None, pattern=r"^[a-z][a-z0-9_]{0,63}$")
    message: str | None = None

    @field_validator("at")
    @classmethod
    def _pointer(cls, value: str) -> str:
        parse_pointer(value)
        return value


class Unique(_Rule):
    rule: Literal["unique"]


class MaxWords(_Rule):
    rule: Literal["max_words"]
    max: int = Field(ge=1)


class MinWords(_Rule):
    rule: Literal["min_words"]
    min: int = Field(ge=1)


class Regex(_Rule):
    rule: Literal["regex"]
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class InSource(_Rule):
    rule: Literal["in_source"]


class LengthBalance(_Rule):
    rule: Literal["length_balance"]
    ratio: float = Field(gt=1.0)


class NotContains(_Rule):
    rule: Literal["not_contains"]
    other: str = Field(min_length=1)


class MinItems(_Rule):
    rule: Literal["min_items"]
    min: int = Field(ge=0)


class MaxItems(_Rule):
    rule: Literal["max_items"]
    max: int = Field(ge=0)


Rule = Annotated[
    Unique | MaxWords | MinWords | Regex | InSource | LengthBalance | NotContains | MinItems | MaxItems,
    Field(discriminator="rule"),
]
# The names a file may give in `rule:`, read from each class's tag so the list cannot drift from them.
RULE_NAMES: frozenset[str] = frozenset(
    get_args(rule_class.model_fields["rule"].annotation)[0] for rule_class in get_args(get_args(Rule)[0])
)


def rule_failures(rule: Any, data: Any, source: SourceText | None) -> list[Failure]:
    """The failures of one rule over ``data`` (schema-valid output)."""
    check: Callable[[Any, Any, SourceText | None], list[tuple[str, str]]] = _CHECKS[rule.rule]
    return [
        Failure(kind="rule", pointer=pointer, code=rule.code or rule.rule, message=rule.message or message)
        for pointer, message in check(rule, data, source)
    ]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _unique(rule: Unique, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    last = max((i for i, t in enumerate(parse_pointer(rule.at)) if t == WILDCARD), default=-1)
    seen: dict[tuple[tuple[str, ...], str], str] = {}
    found = []
    for pointer in expand(data, rule.at):
        tokens = parse_pointer(pointer)
        group = tuple(t for i, t in enumerate(tokens) if i != last)
        key = (group, " ".join(fold(_text(get(data, pointer))).lower().split()))
        if key in seen:
            found.append(
                (pointer, f"The value at {pointer} repeats the one at {seen[key]}; make it distinct.")
            )
        else:
            seen[key] = pointer
    return found


def _max_words(rule: MaxWords, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    found = []
    for pointer in expand(data, rule.at):
        words = len(_text(get(data, pointer)).split())
        if words > rule.max:
            found.append((pointer, f"The text at {pointer} has {words} words; use at most {rule.max}."))
    return found


def _min_words(rule: MinWords, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    found = []
    for pointer in expand(data, rule.at):
        words = len(_text(get(data, pointer)).split())
        if words < rule.min:
            found.append((pointer, f"The text at {pointer} has {words} words; use at least {rule.min}."))
    return found


def _regex(rule: Regex, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    compiled = re.compile(rule.pattern)
    return [
        (pointer, f"The text at {pointer} does not match the pattern {rule.pattern}; rewrite it to match.")
        for pointer in expand(data, rule.at)
        if not compiled.search(_text(get(data, pointer)))
    ]


def _in_source(rule: InSource, data: Any, source: SourceText | None) -> list[tuple[str, str]]:
    if source is None:
        return []
    return [
        (pointer, f"The text at {pointer} is not found in the source document; quote it verbatim.")
        for pointer in expand(data, rule.at)
        if isinstance(get(data, pointer), str) and source.find(get(data, pointer)) is None
    ]


def _length_balance(rule: LengthBalance, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    found = []
    for pointer in expand(data, rule.at):
        items = get(data, pointer)
        if not isinstance(items, list) or len(items) < 2:
            continue
        lengths = [len(_text(item)) for item in items]
        for index, length in enumerate(lengths):
            longest = max(lengths[:index] + lengths[index + 1 :])
            if length > rule.ratio * longest:
                at = f"{pointer}/{index}"
                message = (
                    f"The item at {at} is over {rule.ratio:g} x as long as its longest sibling; balance them."
                )
                found.append((at, message))
    return found


def _not_contains(rule: NotContains, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    found = []
    for pointer in expand(data, rule.at):
        for other in expand(data, _bound(rule.other, rule.at, pointer)):
            needle = fold(_text(get(data, other))).lower()
            if needle and needle in fold(_text(get(data, pointer))).lower():
                found.append((pointer, f"The text at {pointer} gives away the text at {other}; remove it."))
                break
    return found


def _bound(other: str, at: str, pointer: str) -> str:
    """``other`` for one match of ``at``: relative to its parent, or with ``at``'s wildcards bound in
    order."""
    if not other.startswith("/"):
        return join(parent(pointer), other)
    bound = iter(t for t, p in zip(parse_pointer(pointer), parse_pointer(at), strict=True) if p == WILDCARD)
    return format_pointer([next(bound, WILDCARD) if t == WILDCARD else t for t in parse_pointer(other)])


def _min_items(rule: MinItems, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    return [
        (p, f"The list at {p} has {len(get(data, p))} items; it needs at least {rule.min}.")
        for p in expand(data, rule.at)
        if isinstance(get(data, p), list) and len(get(data, p)) < rule.min
    ]


def _max_items(rule: MaxItems, data: Any, _: SourceText | None) -> list[tuple[str, str]]:
    return [
        (p, f"The list at {p} has {len(get(data, p))} items; keep at most {rule.max}.")
        for p in expand(data, rule.at)
        if isinstance(get(data, p), list) and len(get(data, p)) > rule.max
    ]


_CHECKS: dict[str, Any] = {
    "unique": _unique,
    "max_words": _max_words,
    "min_words": _min_words,
    "regex": _regex,
    "in_source": _in_source,
    "length_balance": _length_balance,
    "not_contains": _not_contains,
    "min_items": _min_items,
    "max_items": _max_items,
}
