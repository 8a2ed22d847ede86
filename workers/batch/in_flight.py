"""What the model calls a job had in flight at Ctrl-C will cost: an estimate, recorded as one.

A call in flight when a batch stops is billed by the provider, but its reply (and so its usage) never
comes back, so the ledger would record it at $0. ``InFlight.cost`` prices each call the store lists as
running for the job (``JobReads.running_tasks``: ``attempt:N``, ``slice:N:/pointer``) from its request:
a surgical slice from the call stored with its step (``RunSurgical.calls``: the prompt at ~4 characters a
token with its response schema, and the reply tokens the contract expects, else its
``max_completion_tokens``: what a budget reservation counts), a whole attempt as ``--dry-run`` prices a
first attempt of its section (``Estimator.call_usd``), at the model of the step it runs. Online prices:
a call through the Batch API is a line in a round, not a running task, and its real cost arrives with
the round. A model with no price adds nothing (the estimate says how many calls it covers).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from suture.config.settings import Settings
from suture.tasks.calls import ModelCall, Usage
from suture.tasks.job import JobState, RunSurgical
from suture.tasks.policy import Policy
from suture.workers.batch.estimate import Estimator
from suture.workers.model.budget_math import CHARS_PER_TOKEN, prompt_estimate
from suture.workers.model.pricing import cost_usd, price_of
from suture.workers.store.reads import JobReads
from suture.workers.store.records import JobRecord


@dataclass(frozen=True)
class InFlightCost:
    """The estimated cost of one job's calls in flight, and how many calls that is."""

    usd: float = 0.0
    calls: int = 0


class InFlight:
    """Prices the calls in flight of one batch's jobs (its policy, the settings' price table)."""

    def __init__(self, settings: Settings, policy: Policy, questions: int) -> None:
        self.settings, self.policy, self.questions = settings, policy, questions
        self._estimator: Estimator | None = None

    def cost(self, store: JobReads, record: JobRecord, state: JobState | None) -> InFlightCost:
        """The job's calls running in ``store`` when the batch stopped, at their estimated cost."""
        usd, calls = 0.0, 0
        for task in store.running_tasks(record.job_id, record.version):
            kind, _, rest = task.partition(":")
            if kind == "slice":
                n, _, pointer = rest.partition(":")
                price = self._slice(record, int(n), pointer) if n.isdigit() else None
            elif kind == "attempt":
                price = self._attempt(record, state)
            else:  # a merge: no model call
                continue
            calls += 1
            usd += price or 0.0
        return InFlightCost(round(usd, 8), calls)

    def _slice(self, record: JobRecord, n: int, pointer: str) -> float | None:
        stored = record.action(n)
        call = RunSurgical.model_validate(stored).calls.get(pointer) if stored else None
        return self.call_usd(call) if call is not None else None

    def call_usd(self, call: ModelCall) -> float | None:
        """One request priced as sent: its prompt and schema, and the reply it expects."""
        schema_tokens = math.ceil(len(json.dumps(call.json_schema)) / CHARS_PER_TOKEN)
        reply = call.expected_reply_tokens or call.max_completion_tokens or 0
        usage = Usage(input_tokens=prompt_estimate(call.messages) + schema_tokens, output_tokens=reply)
        return cost_usd(call.model, usage, self.settings.prices)

    def _attempt(self, record: JobRecord, state: JobState | None) -> float | None:
        spec = record.job_spec
        if spec.contract != "quiz":  # the estimator knows the quiz's prompt only
            return None
        step = self.policy.steps[min(state.next_step if state else 0, len(self.policy.steps) - 1)]
        questions = int(spec.params.get("questions") or self.questions)
        if self._estimator is None:
            self._estimator = Estimator(self.settings, self.policy, self.questions)
        output_tokens = questions * self._estimator.tokens_per_question
        return self._estimator.call_usd(
            len(spec.source), output_tokens, price_of(step.model, self.settings.prices)
        )
