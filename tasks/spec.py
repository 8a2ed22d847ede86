"""A job's spec: what to generate and under which rules, stored at enqueue and read by every worker.

The spec is stored as this model (``JobSpec.stored()``) and read back through it
(``JobSpec.read(job_id, raw)``), so producer and workers share one set of keys. It carries
``spec_version``; a worker reads every version up to its own and refuses a newer one with
``UnreadableSpec`` (a job is never misread):

- version 1 (no ``spec_version``): a plain dict whose document was ``input``; its ``params`` held
  only what the caller gave (``questions``), the rest being the contract's packaged defaults, as
  the workers of that version judged it.
- version 2: ``params`` are complete (``suture.contracts.registry.resolve_params`` at enqueue: the
  quiz's ``questions`` and every ``rules`` threshold and teaching knob, its ``language`` the
  document's when it was ``auto``; a batch's advisory ``avoid_questions``), ``policy`` is the policy
  chosen at enqueue. A version-2 spec stored before the teaching knobs existed reads with their
  defaults (single-answer questions, the language detected from the document).
- version 3: ``policy`` is a name only, never a path; a policy from a user's file travels as data in
  ``policy_rules`` (its declarative form, read and checked on the producer's machine), so no worker
  opens a path that came from a job. A version 1 or 2 spec whose ``policy`` is not a configured name
  fails as an unknown policy: the worker does not open it.
- version 4: ``priority``, the job's class (``interactive`` or ``bulk``: which new jobs the dispatcher
  sends to the workers first, ``suture.tasks.dispatch_order``). An older spec reads as ``interactive``.
  ``batch_api`` (``all`` or ``first``: which calls go through OpenAI's Batch API) is stored only when
  not ``off``, so a spec without it, of any version, reads as ``off``.

``simulated`` and ``options`` are the running worker's (its model endpoint, its price table and
prompt budgets): they are not stored, and a worker fills them in when it starts the job.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from suture.config.batch_api_settings import BatchApiMode
from suture.config.settings import ModelPrice, Settings
from suture.tasks.dispatch_order import PriorityClass
from suture.tasks.errors import UnreadableSpec

SPEC_VERSION = 4
WORKER_FIELDS = frozenset({"simulated", "options"})


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
    """What to generate: the contract and its parameters, the source document, the policy, where to report."""

    model_config = ConfigDict(extra="forbid")

    spec_version: int = SPEC_VERSION
    job_id: str
    contract: str = "quiz"
    params: dict[str, Any] = Field(default_factory=dict)
    source: str
    policy: str | None = None  # the retry policy's name, chosen at enqueue (None: the worker's default)
    # A user's policy file as data (``tasks.policy_yaml``), stored at enqueue; ``policy`` names it.
    policy_rules: dict[str, Any] | None = None
    callback: str | None = None  # a Celery task name or an http(s) URL told once per round
    batch: str | None = None  # groups jobs whose valid outputs become examples for each other's retries
    # A person's feedback, one entry per resume (``engine.resume``); every later prompt carries it.
    feedback: list[str] = Field(default_factory=list)
    # Which model calls go through OpenAI's Batch API (``suture.tasks.batch_mode``); stored only when not off.
    batch_api: BatchApiMode = "off"
    priority: PriorityClass = "interactive"  # its class: which new jobs reach the workers first (version 4)
    simulated: bool = False
    options: EngineOptions = Field(default_factory=EngineOptions)

    @model_validator(mode="before")
    @classmethod
    def _versioned(cls, data: Any) -> Any:
        """Read a stored version-1 spec (its document under ``input``) as one; refuse an unknown version."""
        if not isinstance(data, dict):
            return data
        if "spec_version" not in data and "input" in data:
            data = {("source" if key == "input" else key): value for key, value in data.items()}
            data["spec_version"] = 1
        version = data.get("spec_version", SPEC_VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= SPEC_VERSION:
            raise ValueError(f"spec_version {version!r} is not one this worker reads (1 to {SPEC_VERSION})")
        return data

    @classmethod
    def read(cls, job_id: str, raw: Any) -> JobSpec:
        """The spec of job ``job_id`` as stored; raises ``UnreadableSpec`` (one line) if it cannot be read."""
        if not isinstance(raw, dict):
            raise UnreadableSpec(job_id, f"a stored spec must be an object, got {type(raw).__name__}")
        try:
            return cls.model_validate({**raw, "job_id": job_id})
        except ValidationError as exc:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'spec'}: {e['msg']}" for e in exc.errors())
            raise UnreadableSpec(job_id, problem[:500]) from None

    def stored(self) -> dict[str, Any]:
        """The spec as the job store keeps it (JSON; without the worker's ``simulated`` and ``options``)."""
        # ``batch_api`` off is left out: a spec without it reads as off, and a job's request (its
        # idempotency digest) stays what it was before the Batch API existed.
        off = {"batch_api"} if self.batch_api == "off" else set()
        return self.model_dump(mode="json", exclude=set(WORKER_FIELDS) | off)

    def public(self) -> dict[str, Any]:
        """What a result or trace shows of the spec: ``contract`` (its name), ``contract_params`` (the
        complete rules the job is judged by) and ``policy``."""
        return {"contract": self.contract, "contract_params": self.params, "policy": self.policy}

    def described(self) -> dict[str, Any]:
        """``public()``, its ``priority`` class, and for a policy from a user's file its rules
        (``policy_rules``): what ``suture trace --spec`` and ``JobHandle.spec()`` show."""
        rules = {"policy_rules": self.policy_rules} if self.policy_rules is not None else {}
        return self.public() | {"priority": self.priority} | rules
