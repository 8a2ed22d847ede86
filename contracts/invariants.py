"""What a surgical repair must keep, declared by the contract per kind of target.

A contract maps *target kinds* (pointer patterns whose ``*`` matches any one token, e.g.
``/questions/*`` or ``/questions/*/options``) to the names of the invariants a slice of that kind
keeps. A name is a pointer pattern relative to the target (``correct_answer_text``: the value at
``<target>/correct_answer_text`` must not change) unless the contract resolves it itself
(``Contract.resolve_invariant``), as the quiz does for an options slice, whose invariant is the
option at the question's ``correct_answer_index`` (a pointer that depends on the output).

The engine states a target's invariants in its slice prompt and checks them at merge: a slice
that changes one is rolled back alone (``contracts.preserve``). Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from suture.contracts.pointer import WILDCARD, parse_pointer

InvariantMap = Mapping[str, tuple[str, ...]]


def matches_kind(kind: str, target: str) -> bool:
    """True if ``target`` is of the kind ``kind`` (same depth, every token equal or ``*``)."""
    wanted, tokens = parse_pointer(kind), parse_pointer(target)
    return len(wanted) == len(tokens) and all(w in (WILDCARD, t) for w, t in zip(wanted, tokens, strict=True))


def names_for(invariants: InvariantMap, target: str) -> list[str]:
    """The invariant names every kind ``target`` matches declares, in declaration order, each once."""
    found: list[str] = []
    for kind, names in invariants.items():
        if matches_kind(kind, target):
            found += names
    return list(dict.fromkeys(found))
