"""Failures that point at the exact place an output is wrong, and the verdict that carries them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

FailureKind = Literal["parse", "truncated", "empty", "refusal", "schema", "rule", "preserve"]
Severity = Literal["error", "warning"]

# Failures of these kinds concern the whole text; no slice of it can be regenerated alone.
WHOLE_OUTPUT_KINDS: frozenset[str] = frozenset({"parse", "truncated", "empty", "refusal"})


class Failure(BaseModel):
    """One way an output breaks its contract, located by an RFC 6901 JSON Pointer.

    A failure at pointer ``""`` or ``"/"`` cannot be targeted: it makes surgical repair impossible.
    """

    model_config = ConfigDict(frozen=True)

    kind: FailureKind
    pointer: str
    code: str
    message: str
    severity: Severity = "error"

    @property
    def targetable(self) -> bool:
        """True if a surgical attempt can regenerate just the value at ``pointer``."""
        return self.kind not in WHOLE_OUTPUT_KINDS and self.pointer not in ("", "/")

    def public(self) -> dict[str, str]:
        """The stable four-key form used in results, reports and ``suture validate``."""
        return {"kind": self.kind, "pointer": self.pointer, "code": self.code, "message": self.message}

    def __str__(self) -> str:
        return f"{self.kind}:{self.code} at {self.pointer or '/'}: {self.message}"


class Verdict(BaseModel):
    """The result of validating one output: ok, its failures, and the parsed output if any."""

    ok: bool
    failures: list[Failure]
    output: Any = None

    def codes(self) -> list[str]:
        """The distinct failure codes, sorted, for tags and reports."""
        return sorted({f.code for f in self.failures})
