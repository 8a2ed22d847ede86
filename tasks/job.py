"""The engine's data: a job's spec, its JSON-serialisable state, and the actions the engine asks for.

Everything here is a pydantic model so the Celery layer can store a ``JobState`` in Redis between
tasks and send actions as task arguments. Prompts in traces keep the source document out (it is
in the spec once) so the state stays small.

The spec (``JobSpec``, ``EngineOptions``) is ``suture.tasks.spec``'s; the errors (``EngineError``,
``UnreadableSpec``) are ``suture.tasks.errors``'s; both are re-exported here.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from suture.config.settings import ReasoningEffort
from suture.contracts.contract import Contract
from suture.contracts.failure import Failure
from suture.tasks.calls import ModelCall
from suture.tasks.causes import Cause
from suture.tasks.errors import EngineError, UnreadableSpec
from suture.tasks.spec import EngineOptions, JobSpec
from suture.tasks.trace import AttemptRecord, SkipRecord, Status

__all__ = [
    "Action",
    "EngineError",
    "EngineOptions",
    "ExampleInfo",
    "Finish",
    "JobSpec",
    "JobState",
    "RunFull",
    "RunSurgical",
    "Standing",
    "UnreadableSpec",
    "contract_for",
    "score",
]


class Standing(BaseModel):
    """A parsed output the chain holds (the best so far), with its failures and the attempt that made it."""

    n: int
    output: Any
    failures: list[Failure]


class JobState(BaseModel):
    """Everything the engine knows about a job between steps (JSON-serialisable, redelivery-safe)."""

    spec: JobSpec
    attempts: list[AttemptRecord] = Field(default_factory=list)
    skipped: list[SkipRecord] = Field(default_factory=list)
    best: Standing | None = None
    last_failures: list[Failure] = Field(default_factory=list)
    last_raw: str | None = None
    next_step: int = 0
    sent: list[str] = Field(default_factory=list)  # fingerprints of (model, prompt) already sent
    status: Status | None = None
    reason: str = ""
    cause: Cause | None = None
    round: int = 0  # 0 for the first run; +1 per resume with feedback (fresh attempt and cost budget)
    targets: list[str] = Field(default_factory=list)  # this round's named targets (suture.tasks.targeted)

    @field_validator("spec", mode="before")
    @classmethod
    def _spec_version(cls, spec: Any) -> Any:
        """A state stored before spec versions holds a version-1 spec (same fields, params as given)."""
        if isinstance(spec, dict) and "spec_version" not in spec:
            return {**spec, "spec_version": 1}
        return spec

    @property
    def spent_usd(self) -> float:
        """The known cost so far (attempts of unknown price count 0 here; the result says unknown)."""
        return sum(a.cost_usd or 0.0 for a in self.attempts)

    @property
    def round_attempts(self) -> list[AttemptRecord]:
        """The attempts of the current round (the budget a resume resets counts only these)."""
        return [a for a in self.attempts if a.round == self.round]

    @property
    def round_model_attempts(self) -> list[AttemptRecord]:
        """The current round's attempts that called a model (a deterministic fix is free and uncapped)."""
        return [a for a in self.round_attempts if a.mode != "fix"]

    @property
    def round_spent_usd(self) -> float:
        """The known cost of the current round's attempts."""
        return sum(a.cost_usd or 0.0 for a in self.round_attempts)


class ExampleInfo(BaseModel):
    """What the trace records about the example attached to a prompt."""

    tier: int
    tokens: int
    truncated: bool


class RunFull(BaseModel):
    """Run one full attempt: send ``call`` and hand the reply to ``apply_full``."""

    kind: Literal["full"] = "full"
    n: int
    step_index: int
    step: str
    call: ModelCall
    fingerprint: str
    example: ExampleInfo | None = None
    skipped: list[SkipRecord] = Field(default_factory=list)


class RunSurgical(BaseModel):
    """Run one surgical step: send each slice call (independently) and hand all replies to
    ``apply_surgical``."""

    kind: Literal["surgical"] = "surgical"
    n: int
    step_index: int
    step: str
    model: str
    reasoning_effort: ReasoningEffort | None
    calls: dict[str, ModelCall]  # target pointer -> slice call
    sent_values: dict[str, Any]  # target pointer -> the slice as sent
    fingerprints: list[str]
    # What the merge must keep: absolute pointer patterns, the contract's invariants of each target.
    preserve: list[str]
    skipped: list[SkipRecord] = Field(default_factory=list)


class RunFix(BaseModel):
    """Run the contract's deterministic fixers of ``codes`` on the best output (no model call):
    ``apply_fix``."""

    kind: Literal["fix"] = "fix"
    n: int
    step_index: int  # the step whose output is fixed (the chain goes on after it)
    step: str
    codes: list[str]
    skipped: list[SkipRecord] = Field(default_factory=list)


class Finish(BaseModel):
    """Stop: the job ends with ``status`` for ``reason`` (pass it to ``finish``/``result``)."""

    kind: Literal["finish"] = "finish"
    status: Status
    reason: str
    skipped: list[SkipRecord] = Field(default_factory=list)
    cause: Cause | None = None  # why it did not end valid (suture.tasks.causes); None when it did


Action = RunFull | RunSurgical | RunFix | Finish


def score(failures: list[Failure]) -> tuple[int, int, int]:
    """Rank of an output, lower is better: schema-invalid last, then errors, then warnings."""
    schema = sum(1 for f in failures if f.kind == "schema")
    errors = sum(1 for f in failures if f.severity == "error")
    return (1 if schema else 0, errors, len(failures) - errors)


def contract_for(spec: JobSpec) -> Contract:
    """The job's contract, rebuilt from its name, its stored params and source (cached per process).

    No settings: the params a job stores are complete, so every worker judges it by the same rules.
    """
    return _contract(spec.contract, json.dumps(spec.params, sort_keys=True), spec.source)


@functools.lru_cache(maxsize=64)
def _contract(name: str, params_json: str, source: str) -> Contract:
    from suture.contracts.registry import build_contract

    return build_contract(name, json.loads(params_json), None, source=source)
