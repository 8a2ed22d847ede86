"""The engine's data: a job's spec, its JSON-serialisable state, and the actions the engine asks for.

Everything here is a pydantic model so the Celery layer can store a ``JobState`` in Redis between
tasks and send actions as task arguments. Prompts in traces keep the source document out (it is
in the spec once) so the state stays small.

Errors of the engine::

    EngineError(Exception)     a programmer error driving the engine (stale action, unfinished job)
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from config.settings import ModelPrice, Settings
from contracts.contract import Contract
from contracts.failure import Failure
from tasks.calls import ModelCall
from tasks.trace import AttemptRecord, SkipRecord, Status


class EngineError(Exception):
    """The engine was driven wrongly (an action out of order, a result of an unfinished job)."""

    def __init__(self, job_id: str, problem: str) -> None:
        self.job_id = job_id
        self.problem = problem
        super().__init__(f"job {job_id}: {problem}")


class EngineOptions(BaseModel):
    """The non-secret settings the engine needs, copied into the spec so the engine stays pure."""

    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    first_prompt_example_tokens: int = 1000
    retry_example_tokens: int = 2000
    store_prompts: bool = True
    max_completion_tokens: int | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> EngineOptions:
        """Copy the engine's settings (never secrets) out of ``settings``."""
        return cls(
            prices=dict(settings.prices),
            first_prompt_example_tokens=settings.first_prompt_example_tokens,
            retry_example_tokens=settings.retry_example_tokens,
            store_prompts=settings.store_prompts,
            max_completion_tokens=settings.client.max_completion_tokens,
        )


class JobSpec(BaseModel):
    """What to generate: the contract (name + params), the source document, and engine options."""

    job_id: str
    contract: str = "quiz"
    params: dict[str, Any] = Field(default_factory=dict)
    source: str
    simulated: bool = False
    options: EngineOptions = Field(default_factory=EngineOptions)
    # A person's feedback, one entry per resume (``engine.resume``); every later prompt carries it.
    feedback: list[str] = Field(default_factory=list)


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
    round: int = 0  # 0 for the first run; +1 per resume with feedback (fresh attempt and cost budget)

    @property
    def spent_usd(self) -> float:
        """The known cost so far (attempts of unknown price count 0 here; the result says unknown)."""
        return sum(a.cost_usd or 0.0 for a in self.attempts)

    @property
    def round_attempts(self) -> list[AttemptRecord]:
        """The attempts of the current round (the budget a resume resets counts only these)."""
        return [a for a in self.attempts if a.round == self.round]

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
    """Run one surgical step: send each slice call (independently) and hand all replies to ``apply_surgical``."""

    kind: Literal["surgical"] = "surgical"
    n: int
    step_index: int
    step: str
    model: str
    reasoning_effort: str | None
    calls: dict[str, ModelCall]  # target pointer -> slice call
    sent_values: dict[str, Any]  # target pointer -> the slice as sent
    fingerprints: list[str]
    preserve: list[str]
    skipped: list[SkipRecord] = Field(default_factory=list)


class Finish(BaseModel):
    """Stop: the job ends with ``status`` for ``reason`` (pass it to ``finish``/``result``)."""

    kind: Literal["finish"] = "finish"
    status: Status
    reason: str
    skipped: list[SkipRecord] = Field(default_factory=list)


Action = RunFull | RunSurgical | Finish


def score(failures: list[Failure]) -> tuple[int, int, int]:
    """Rank of an output, lower is better: schema-invalid last, then errors, then warnings."""
    schema = sum(1 for f in failures if f.kind == "schema")
    errors = sum(1 for f in failures if f.severity == "error")
    return (1 if schema else 0, errors, len(failures) - errors)


def contract_for(spec: JobSpec) -> Contract:
    """The job's contract, rebuilt from its name, params and source (cached per process)."""
    return _contract(spec.contract, json.dumps(spec.params, sort_keys=True), spec.source)


@functools.lru_cache(maxsize=64)
def _contract(name: str, params_json: str, source: str) -> Contract:
    from contracts.registry import get_contract

    return get_contract(name, **json.loads(params_json), source=source)
