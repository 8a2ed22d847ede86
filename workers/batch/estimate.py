"""What a batch will cost and take, before any model is called: for ``--dry-run`` and ``--budget-usd``.

A section's first attempt is priced from its real prompt (the policy's first step's instructions,
the example, the response schema and the section text; 4 characters per token) and an expected
output (``estimate.output_tokens_per_question``), at the first step's model's price; it takes that
model's ``first_token_s`` plus output tokens at ``output_tokens_per_s``. The policy's measured
``repair_overhead`` (config/defaults.yaml) scales both to a whole job. Wall time spreads the
sections over the jobs in flight. A model with no price or speed gives an unknown (None), never 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from suture.config.settings import ModelPrice, Settings
from suture.contracts.examples import CHARS_PER_TOKEN, choose_example
from suture.contracts.registry import get_contract
from suture.tasks.policy import Policy
from suture.tasks.prompts import task_messages


@dataclass(frozen=True)
class JobEstimate:
    """One section's expected job: cost and latency, first attempt and whole job."""

    first_attempt_usd: float | None
    cost_usd: float | None
    latency_s: float | None


class Estimator:
    """Estimates jobs of one batch: fixed prompt size, price and speed of the policy's first model."""

    def __init__(self, settings: Settings, policy: Policy, questions: int, batch_api: str = "off") -> None:
        self.policy, self.questions, self.batch_api = policy, questions, batch_api
        step = policy.steps[0]
        self.model = step.model
        contract = get_contract("quiz", questions=questions, rules=settings.quiz)
        example = (
            choose_example(contract, [], budget_tokens=settings.first_prompt_example_tokens)
            if policy.examples
            else None
        )
        messages = task_messages(step.instructions(contract.task_instructions()), "", example)
        self.fixed_chars = sum(len(m["content"]) for m in messages) + len(
            json.dumps(contract.response_schema())
        )
        self.tokens_per_question = settings.estimate.output_tokens_per_question
        self.output_tokens = questions * self.tokens_per_question
        self.price = settings.prices.get(self.model)
        self.speed = settings.estimate.model_speeds.get(self.model)

    @property
    def measured_overhead(self) -> bool:
        """False when the policy has no measured repair overhead (first attempts only are estimated)."""
        return self.policy.repair_overhead is not None

    def job(self, section_chars: int, questions: int | None = None) -> JobEstimate:
        """The expected job for a section of ``section_chars`` characters (``questions``: its own count)."""
        output_tokens = self.output_tokens if questions is None else questions * self.tokens_per_question
        overhead = self.policy.repair_overhead
        cost_factor = overhead.cost if overhead else 1.0
        time_factor = overhead.time if overhead else 1.0
        first = self.call_usd(section_chars, output_tokens, self.price)
        latency = None
        if self.speed is not None:
            latency = (
                self.speed.first_token_s + output_tokens / self.speed.output_tokens_per_s
            ) * time_factor
        if first is None or self.price is None:
            return JobEstimate(first_attempt_usd=None, cost_usd=None, latency_s=latency)
        # Through the Batch API a call pays batch_price_ratio of its price: every call (all), or the
        # first attempt only (first: its repairs go online).
        ratio = self.price.batch_price_ratio if self.batch_api != "off" else 1.0
        repairs = first * (cost_factor - 1) * (ratio if self.batch_api == "all" else 1.0)
        return JobEstimate(
            first_attempt_usd=first * ratio, cost_usd=first * ratio + repairs, latency_s=latency
        )

    def call_usd(self, section_chars: int, output_tokens: int, price: ModelPrice | None) -> float | None:
        """One whole attempt's call on a section at ``price`` (online), or None for a model with no price."""
        if price is None:
            return None
        input_tokens = math.ceil((self.fixed_chars + section_chars) / CHARS_PER_TOKEN)
        return (input_tokens * price.input_per_1m_usd + output_tokens * price.output_per_1m_usd) / 1_000_000


@dataclass
class BatchEstimate:
    """The sum over a batch's sections: cost, first attempts' cost, and wall time with jobs in flight."""

    sections: int = 0
    cost_usd: float | None = 0.0
    first_attempts_usd: float | None = 0.0
    busy_s: float | None = 0.0
    longest_s: float = 0.0

    def add(self, job: JobEstimate) -> None:
        """Count one section's job."""
        self.sections += 1
        self.cost_usd = _plus(self.cost_usd, job.cost_usd)
        self.first_attempts_usd = _plus(self.first_attempts_usd, job.first_attempt_usd)
        self.busy_s = _plus(self.busy_s, job.latency_s)
        self.longest_s = max(self.longest_s, job.latency_s or 0.0)

    def wall_s(self, in_flight: int) -> float | None:
        """Wall time with ``in_flight`` jobs at a time (never less than the longest job)."""
        if self.busy_s is None:
            return None
        lanes = max(1, min(in_flight, self.sections))
        return max(self.busy_s / lanes, self.longest_s)


def _plus(total: float | None, value: float | None) -> float | None:
    return None if total is None or value is None else total + value
