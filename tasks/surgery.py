"""Surgical repair: which paths to regenerate, the slice prompt for each, and reading the slice replies.

A target is a JSON Pointer whose value is regenerated alone. With ``target: smallest`` each failing
path is regenerated where it is, unless the contract says a slice that small cannot fix it
(``Contract.repair_target``); with ``target: parent`` it is widened to its enclosing list item
(``/questions/3/options`` -> ``/questions/3``). Either way the contract's invariants of the target's
kind (``Contract.slice_invariants``) pin what must not change: they are stated in the slice prompt
and checked at merge. A step's ``preserve`` names only invariants it relies on (checked when the
policy loads, ``tasks.policy_choice``); it pins nothing the contract does not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from suture.contracts.contract import Contract
from suture.contracts.failure import Failure
from suture.contracts.pointer import (
    exists,
    expand,
    format_pointer,
    get,
    is_prefix,
    join,
    parent,
    parse_pointer,
    splice,
)
from suture.tasks.policy import Step, StepContext
from suture.tasks.prompts import (
    Messages,
    SliceParts,
    invariant_lines,
    slice_instructions,
    slice_messages,
)
from suture.tasks.trace import AttemptRecord

ELIDED = "(the slice above)"  # where the slice sits inside the context shown around it


def targets_for(step: Step, ctx: StepContext, contract: Contract) -> list[str]:
    """The pointers a surgical step regenerates, de-duplicated, none nested inside another."""
    if callable(step.target):
        raw = list(step.target(ctx))
    elif step.target == "parent":
        raw = [enclosing_item(f.pointer) for f in ctx.failures if f.targetable]
    elif step.target == "smallest":
        raw = [contract.repair_target(f) for f in ctx.failures if f.targetable]
    else:
        raw = [f.pointer for f in ctx.failures if f.targetable]
    unique = sorted(set(raw), key=lambda p: (len(parse_pointer(p)), p))
    kept: list[str] = []
    for pointer in unique:
        if not any(is_prefix(outer, pointer) for outer in kept):
            kept.append(pointer)
    return sorted(kept, key=_pointer_sort_key)


def enclosing_item(pointer: str) -> str:
    """The pointer of the nearest enclosing list item (``/questions/3/options/1`` -> ``/questions/3``)."""
    tokens = parse_pointer(pointer)
    for index in range(len(tokens) - 1, -1, -1):
        if tokens[index].isdigit():
            return format_pointer(tokens[: index + 1])
    return parent(pointer) if len(tokens) > 1 else pointer


def _pointer_sort_key(pointer: str) -> list[tuple[int, int | str]]:
    # Numeric tokens sort as numbers, so /questions/10 comes after /questions/9.
    return [(0, int(t)) if t.isdigit() else (1, t) for t in parse_pointer(pointer)]


def failures_at(target: str, failures: Sequence[Failure]) -> list[Failure]:
    """The failures at or under ``target``."""
    return [f for f in failures if is_prefix(target, f.pointer)]


def preserved_paths(output: Any, target: str, patterns: Sequence[str]) -> list[tuple[str, Any]]:
    """The (pointer, current value) pairs under ``target`` that preserve patterns pin."""
    found: dict[str, Any] = {}
    for pattern in patterns:
        absolute = pattern if pattern.startswith("/") else join(target, pattern)
        for pointer in expand(output, absolute):
            if is_prefix(target, pointer) and exists(output, pointer):
                found[pointer] = get(output, pointer)
    return sorted(found.items(), key=lambda item: _pointer_sort_key(item[0]))


def slice_value(output: Any, target: str) -> Any:
    """The current value at ``target`` (None if the key is missing, e.g. a schema_missing failure)."""
    return get(output, target) if exists(output, target) else None


def slice_prompt(
    contract: Contract,
    step: Step,
    source: str,
    output: Any,
    target: str,
    failures: Sequence[Failure],
    feedback: Sequence[str] = (),
    rejected: Sequence[Any] = (),
) -> Messages:
    """The slice prompt for one target: excerpt(s) (the whole document only if the contract finds none),
    the slice, the item around it without the slice, failures, invariants, human feedback."""
    pinned = contract.slice_invariants(output, target)
    invariants = invariant_lines(target, preserved_paths(output, target, pinned))
    excerpts = contract.source_excerpts(output, target)
    context_pointer, context = context_without_slice(contract, output, target)
    parts = SliceParts(
        pointer=target,
        value=slice_value(output, target),
        excerpts=tuple(excerpts or ()),
        document=source if not excerpts else None,
        context_pointer=context_pointer,
        context=context,
        failures=failures_at(target, failures),
        invariants=invariants,
        feedback=feedback,
        rejected=rejected,
    )
    return slice_messages(step.instructions(slice_instructions(contract.title)), parts)


def context_without_slice(contract: Contract, output: Any, target: str) -> tuple[str, Any]:
    """The item around ``target`` with the slice itself replaced by ``ELIDED`` (None if the slice is the
    item).

    The slice is shown once, in its own block: repeating it inside the context would double its tokens.
    """
    found = contract.slice_context(output, target)
    pointer, value = str(found.get("parent_pointer", "")), found.get("parent")
    if pointer == target:
        return pointer, None
    if not is_prefix(pointer, target):
        return pointer, value
    inner = format_pointer(parse_pointer(target)[len(parse_pointer(pointer)) :])
    return pointer, splice(value, inner, ELIDED) if exists(value, inner) else value


def rejected_repairs(attempts: Sequence[AttemptRecord], target: str, limit: int = 2) -> list[Any]:
    """The latest slice replies for ``target`` that did not end up valid (newest last, at most ``limit``).

    Putting them in the next slice prompt both tells the model what not to repeat and makes the prompt
    new, so a later surgical step may retry an item instead of being skipped as a byte-identical resend.
    """
    found: list[Any] = []
    for attempt in attempts:
        for record in attempt.slices:
            if record.pointer == target and record.received is not None and record.received not in found:
                found.append(record.received)
    return found[-limit:]


def read_slice_reply(text: str | None) -> tuple[Any, str | None]:
    """The ``value`` of a slice reply ``{"value": ...}``, or (_, problem) if it is not one."""
    if not text or not text.strip():
        return None, "empty reply"
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(data, dict) or "value" not in data:
        return None, 'not an object with a "value" key'
    return data["value"], None
