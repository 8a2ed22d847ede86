"""Merge surgical slices into the previous output under preserve invariants, rolling back violators.

A surgical repair may only change what it was asked to change. ``preserve`` lists patterns of
values that must survive a merge unchanged: absolute pointers with ``*`` wildcards
(``/questions/*/correct_answer_index``) or paths relative to each slice pointer
(``correct_answer_index``, i.e. not starting with ``/``). Each slice is checked on its own against
``previous``; a slice that changes a preserved value is rolled back alone (the others stay) and
yields one ``preserve`` failure per changed value. A preserved value that did not exist before
has nothing to preserve; one that existed and disappears is a violation.

Values compare as JSON (``1``, ``1.0`` and ``true`` differ), not by Python ``==``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from suture.contracts.failure import Failure
from suture.contracts.pointer import exists, expand, get, is_prefix, join, merge, splice

_MISSING = object()


class MergeOutcome(BaseModel):
    """The merged output, which slices were applied or rolled back, and the preserve failures."""

    model_config = ConfigDict(frozen=True)

    output: Any
    applied: list[str]
    rolled_back: list[str]
    failures: list[Failure]


def merge_with_preserve(
    previous: Any, slices: Mapping[str, Any], preserve: Sequence[str] = ()
) -> MergeOutcome:
    """Splice every slice into ``previous`` except those that break a preserve pattern."""
    absolute = [p for p in preserve if p.startswith("/")]
    relative = [p for p in preserve if not p.startswith("/")]
    guarded = [pointer for pattern in absolute for pointer in expand(previous, pattern)]
    applied: list[str] = []
    rolled_back: list[str] = []
    failures: list[Failure] = []
    for pointer, value in slices.items():
        candidate = splice(previous, pointer, value)
        protected = [q for q in guarded if _affects(pointer, q)]
        protected += [q for pattern in relative for q in expand(previous, join(pointer, pattern))]
        violations = [_violation(pointer, q, previous, candidate) for q in dict.fromkeys(protected)]
        found = [failure for failure in violations if failure is not None]
        (rolled_back if found else applied).append(pointer)
        failures += found
    output = merge(previous, {pointer: slices[pointer] for pointer in applied})
    return MergeOutcome(output=output, applied=applied, rolled_back=rolled_back, failures=failures)


def _affects(slice_pointer: str, preserved: str) -> bool:
    # Replacing a slice changes everything below it and every container above it.
    return is_prefix(slice_pointer, preserved) or is_prefix(preserved, slice_pointer)


def _violation(slice_pointer: str, preserved: str, previous: Any, candidate: Any) -> Failure | None:
    before = get(previous, preserved)
    after = get(candidate, preserved) if exists(candidate, preserved) else _MISSING
    if after is not _MISSING and _as_json(before) == _as_json(after):
        return None
    now = "removed it" if after is _MISSING else f"changed it to {_clip(after)}"
    message = (
        f"The value at {preserved} must stay {_clip(before)}, but the repair of {slice_pointer} {now}; "
        "that repair was rolled back."
    )
    return Failure(kind="preserve", pointer=preserved, code="preserve_violated", message=message)


def _as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, default=repr)


def _clip(value: Any, limit: int = 80) -> str:
    text = _as_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["MergeOutcome", "merge_with_preserve"]
