"""The per-attempt trace records and the stable job result schema built from them.

The result schema (docs/architecture.md, "Job result schema") is read by tools outside the
project: keys are only ever added, never renamed or removed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from suture.contracts.failure import Failure
from suture.tasks.calls import Usage
from suture.tasks.vocabulary import DELIVERED_STATUSES, AttemptOutcome, FinalStatus, SliceStatus

# What a result says of the job's spec (suture.tasks.spec.JobSpec.public), added in spec version 2.
SPEC_KEYS = ("contract", "contract_params", "policy")
# The names the engine has always used for these (suture.tasks.vocabulary defines them).
Status = FinalStatus
Outcome = AttemptOutcome


class SliceRecord(BaseModel):
    """One surgical slice: what was sent for a pointer, what came back, and whether it was applied."""

    pointer: str
    sent: Any = None
    received: Any = None
    status: SliceStatus
    detail: str | None = None
    prompt: list[dict[str, str]] | None = None


class AttemptRecord(BaseModel):
    """One attempt of a job: a full call, one surgical step with all its slices, or a deterministic fix
    (mode ``fix``: the contract's fixers, no model, cost 0)."""

    n: int
    step: str
    step_index: int
    mode: Literal["full", "surgical", "fix"]
    model: str
    reasoning_effort: str | None
    targets: list[str] = Field(default_factory=list)
    slices: list[SliceRecord] = Field(default_factory=list)
    patch: list[dict[str, Any]] = Field(default_factory=list)
    rolled_back: list[str] = Field(default_factory=list)
    failures: list[Failure] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    latency_ms: float = 0.0
    transport_retries: int = 0
    # The max_completion_tokens its request(s) asked for, summed (OpenAI counts them against its TPM), and
    # how many replies cut off by their cap were sent again with the cap doubled.
    asked_completion_tokens: int = 0
    cap_retries: int = 0
    batch_id: str | None = None  # the OpenAI batch its call(s) went through (None: online)
    example_tier: int | None = None
    example_tokens: int | None = None
    example_truncated: bool | None = None
    outcome: Outcome
    error: str | None = None
    prompt: list[dict[str, str]] | None = None
    round: int = 0  # which run of the job made it: 0 first, then one more per resume with feedback

    def public(self) -> dict[str, Any]:
        """The record in the result schema (failures in their four-key public form)."""
        data = self.model_dump(mode="json", exclude={"failures", "usage"})
        data["failures"] = [f.public() for f in self.failures]
        data["usage"] = usage_dict(self.usage)
        return data


class SkipRecord(BaseModel):
    """A step the chain did not run, and why (``when`` false, identical prompt, ...)."""

    step: str
    step_index: int
    reason: str


def usage_dict(usage: Usage) -> dict[str, int]:
    """Usage in the result schema's key names."""
    return {
        "input_tokens": usage.input_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }


def build_result(
    *,
    job_id: str,
    status: Status,
    reason: str,
    output: Any,
    failures: list[Failure],
    attempts: list[AttemptRecord],
    skipped: list[SkipRecord],
    simulated: bool,
    job_round: int = 0,
    cause: str | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The job result: status, output (None unless delivered or soft-delivered), failures, attempts, totals,
    and what it was judged by (``spec``: ``JobSpec.public()``, keys ``contract``, ``contract_params``,
    ``policy``; None each when unknown)."""
    total = Usage()
    for attempt in attempts:
        total = total + attempt.usage
    costs = [a.cost_usd for a in attempts]
    known_cost = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 8)
    return {
        "job_id": job_id,
        "status": status,
        "reason": reason,
        "output": output if status in DELIVERED_STATUSES else None,
        "failures": [f.public() for f in failures],
        "attempts": [a.public() for a in attempts],
        "skipped": [s.model_dump(mode="json") for s in skipped],
        "usage": usage_dict(total),
        "cost_usd": known_cost,
        "latency_ms": round(sum(a.latency_ms for a in attempts), 3),
        "simulated": simulated,
        "round": job_round,
        "cause": cause,
        **(spec or dict.fromkeys(SPEC_KEYS)),
    }
