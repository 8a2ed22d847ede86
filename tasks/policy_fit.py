"""Whether the invariants a policy's surgical steps name are kept under every kind of target they produce.

A step's ``preserve`` names contract invariants the step relies on (it pins nothing itself: what a
slice keeps is the contract's, ``Contract.invariants``, target kind -> names). A name the contract
does not keep under some kind of target the step produces would be a silent promise: with ``target:
failures`` an ``imbalanced_options`` failure regenerates ``/questions/i/options``, where
``correct_answer_text`` pins nothing (issue 22: in 34 of 1,017 slices the answer moved). Such a
policy is refused for that contract (``tasks.policy_choice.check_fit``).

The kinds a step produces are read from the kinds the contract declares: ``target: parent`` widens
each failure to its enclosing list item, so it produces the declared kinds ending in ``*``;
``failures`` and ``smallest`` may produce any declared kind (a failure may point at any of them, and
``Contract.repair_target`` may widen to any of them). A callable target is not judged. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from suture.contracts.contract import Contract
from suture.contracts.invariants import names_for
from suture.contracts.pointer import WILDCARD, parse_pointer

if TYPE_CHECKING:
    from suture.tasks.policy import Step


@dataclass(frozen=True)
class Unkept:
    """Step ``step`` (0-based) names ``name``, which its contract does not keep under target ``kind``."""

    step: int
    name: str
    rule: str
    kind: str | None  # None: the step produces no kind of target the contract declares
    kept: tuple[str, ...] = ()

    def problem(self, contract: str, declared: Sequence[str]) -> str:
        """The one-line reason (``PolicyError`` adds the policy and the step)."""
        if self.name not in declared:
            known = ", ".join(declared) or "none"
            from suture.tasks.policy_text import shown_name, value_kind

            named = shown_name(self.name) or f"an invariant ({value_kind(self.name)})"
            return f"names {named}, which contract {contract!r} does not declare (its invariants: {known})"
        if self.kind is None:
            return (
                f"names {self.name!r}, but contract {contract!r} declares no kind of target that "
                f"target: {self.rule} produces"
            )
        kept = ", ".join(self.kept) or "nothing"
        return (
            f"names {self.name!r}, which contract {contract!r} does not keep under target {self.kind} "
            f"(target: {self.rule}; kept there: {kept})"
        )


def kinds_produced(rule: str, contract: type[Contract]) -> list[str]:
    """The declared target kinds a step with target rule ``rule`` may regenerate, in declaration order."""
    kinds = list(contract.invariants)
    if rule == "parent":
        return [kind for kind in kinds if (parse_pointer(kind) or [""])[-1] == WILDCARD]
    return kinds


def first_unkept(steps: Sequence[Step], contract: type[Contract]) -> Unkept | None:
    """The first name a surgical step relies on that ``contract`` does not keep where the step cuts, else
    None."""
    declared = contract.invariant_names()
    for index, step in enumerate(steps):
        if step.mode != "surgical" or callable(step.target) or not step.preserve:
            continue
        rule = str(step.target)
        kinds = kinds_produced(rule, contract)
        for name in step.preserve:
            if name not in declared:
                return Unkept(index, name, rule, None)
            if not kinds:
                return Unkept(index, name, rule, None)
            for kind in kinds:
                kept = tuple(names_for(contract.invariants, kind))
                if name not in kept:
                    return Unkept(index, name, rule, kind, kept)
    return None
