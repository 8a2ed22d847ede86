"""Deterministic fixers: repairs of a failure code that need no model, as a linter's autofixes.

A contract may declare, per failure code, a function that rewrites an output so that failure goes
away without changing what must not change (``Contract.fixers()``). The engine runs a contract's
fixers on a new best output before any further model step, validates the result again and keeps it
only if it scores better (``suture.tasks.fixing``); the trace records it as an attempt of its own,
mode ``fix``, cost 0, with its RFC 6902 patch.

A fixer is pure and deterministic: ``fix(output, failures) -> new output | None``, where
``failures`` are the output's failures of that code; it never mutates ``output`` and returns None
when it cannot help (an output whose shape it does not know, say). It must never raise on odd
model output: return None instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from suture.contracts.failure import Failure

Fixer = Callable[[Any, Sequence[Failure]], Any | None]

__all__ = ["Fixer"]
