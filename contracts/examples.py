"""Examples attached to prompts: which of three tiers to use for a failure, and cut to a token budget.

Tier 1 is the contract's canonical example, tier 2 an output accepted earlier in the same batch,
tier 3 a template generated from the schema. Structural failures (parse, truncated, empty,
schema) favour structure (1, then 3); rule failures favour a real accepted output (2, then 1).
Truncation is structural: the skeleton stays, long lists and strings are shortened, and each cut
is marked so the model does not copy a cut as if it were the shape. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from suture.contracts.failure import Failure

Tier = Literal[1, 2, 3]
STRUCTURE_KINDS: frozenset[str] = frozenset({"parse", "truncated", "empty", "schema"})
CHARS_PER_TOKEN = 4  # a cheap, deterministic estimate; good enough to bound prompt size
CUT_MARK = "[...cut]"


class ExampleSource(Protocol):
    """The two example-producing methods of a contract."""

    def canonical_example(self) -> dict[str, Any]: ...

    def schema_template(self) -> dict[str, Any]: ...


class AcceptedOutput(BaseModel):
    """An output delivered fully valid earlier in the batch, with the failure kinds its job repaired."""

    output: Any
    repaired_kinds: list[str] = Field(default_factory=list)


class Example(BaseModel):
    """The example chosen for one prompt, as text, with what the trace records about it."""

    tier: Tier
    text: str
    tokens: int
    truncated: bool


def estimate_tokens(text: str) -> int:
    """A deterministic token estimate (characters / 4, rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def tier_order(failures: Iterable[Failure]) -> tuple[Tier, ...]:
    """The tiers to try for these failures: structure first for structural failures, else real outputs."""
    kinds = {f.kind for f in failures}
    if not kinds or kinds & STRUCTURE_KINDS:
        return (1, 3)
    return (2, 1, 3)


def choose_example(
    contract: ExampleSource,
    failures: Sequence[Failure],
    accepted: Sequence[AcceptedOutput] = (),
    *,
    budget_tokens: int,
) -> Example | None:
    """Pick the example for a prompt by failure kind and cut it to ``budget_tokens``; None if budget is 0."""
    if budget_tokens <= 0:
        return None
    for tier in tier_order(failures):
        value = _tier_value(tier, contract, failures, accepted)
        if value is not None:
            text, truncated = truncate_to_tokens(value, budget_tokens)
            return Example(tier=tier, text=text, tokens=estimate_tokens(text), truncated=truncated)
    return None


def _tier_value(
    tier: Tier, contract: ExampleSource, failures: Sequence[Failure], accepted: Sequence[AcceptedOutput]
) -> Any:
    if tier == 1:
        return contract.canonical_example()
    if tier == 3:
        return contract.schema_template()
    return pick_accepted(accepted, {f.kind for f in failures})


def pick_accepted(accepted: Sequence[AcceptedOutput], kinds: set[str]) -> Any:
    """The most recent accepted output that repaired the same failure kind, else the most recent."""
    if not accepted:
        return None
    for item in reversed(accepted):
        if kinds & set(item.repaired_kinds):
            return item.output
    return accepted[-1].output


def render(value: Any) -> str:
    """The example as compact, key-order-preserving JSON (the order the contract's schema uses)."""
    return json.dumps(value, ensure_ascii=False, indent=None, separators=(",", ":"))


# Each level shortens further: (max list items kept, max string characters kept).
_LEVELS: tuple[tuple[int, int], ...] = ((4, 400), (2, 160), (1, 80), (1, 32), (1, 12))


def truncate_to_tokens(value: Any, budget_tokens: int) -> tuple[str, bool]:
    """Render ``value`` within ``budget_tokens``: shorten lists then strings, keep keys, mark cuts."""
    text = render(value)
    if estimate_tokens(text) <= budget_tokens:
        return text, False
    for max_items, max_chars in _LEVELS:
        text = render(shorten(value, max_items, max_chars))
        if estimate_tokens(text) <= budget_tokens:
            return text, True
    # Even the bare skeleton is too big: cut the text itself, marked.
    keep_chars = max(0, budget_tokens * CHARS_PER_TOKEN - len(CUT_MARK))
    return text[:keep_chars] + CUT_MARK, True


def shorten(value: Any, max_items: int, max_chars: int) -> Any:
    """A copy of ``value`` with lists cut to ``max_items`` (+ a marker) and strings to ``max_chars``."""
    if isinstance(value, dict):
        return {key: shorten(item, max_items, max_chars) for key, item in value.items()}
    if isinstance(value, list):
        kept = [shorten(item, max_items, max_chars) for item in value[:max_items]]
        cut = len(value) - len(kept)
        return [*kept, f"{CUT_MARK} {cut} more item(s) like the above"] if cut else kept
    if isinstance(value, str) and len(value) > max_chars:
        return value[:max_chars] + CUT_MARK
    return value
