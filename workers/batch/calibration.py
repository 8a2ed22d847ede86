"""`suture calibrate`'s measurements: what a model does first, and how it acts on each kind of repair.

On a small sample of sections it sends the model, per section: suture's first-attempt prompt; a
surgical slice prompt for each imbalanced question (up to ``max_slices`` per quiz, the options only,
as the default policy targets them); and one whole re-ask (the first output with its failures, as
suture's ``full`` steps with feedback send it). From the replies, judged by the contract:

- the first attempt's failure rate per code, per question (``trials``: questions seen);
- the slice fix rate: slices whose question is balanced once spliced back;
- the re-ask fix rate: imbalanced questions the re-ask named that came back balanced; its keep
  rate: questions it did not name that came back unchanged;
- the tokens per step (prompt, completion).

Each rate carries a Wilson 95 % interval, each mean a normal 95 % interval. Spending stops before a
call whose estimate would pass the budget. ``profile_data`` is the simulator profile file
(``simulator.profile_file``) these rates make.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from suture.config.settings import Settings
from suture.contracts.contract import Contract
from suture.contracts.failure import Failure
from suture.contracts.pointer import splice
from suture.contracts.registry import build_contract
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.policy import Step
from suture.tasks.prompts import retry_messages, task_messages
from suture.tasks.surgery import slice_prompt
from suture.workers.batch.intervals import Mean, Rate

IMBALANCED = "imbalanced_options"
_ITEM = re.compile(r"^/questions/(\d+)(?:/|$)")
# Rough output sizes for the plan's estimate (visible tokens; reasoning on top at the effort's factor):
# a quiz question is ~180 tokens of JSON, a slice's options ~60. An estimate, not a promise.
QUESTION_TOKENS = 180
SLICE_TOKENS = 60
REASONING = {"minimal": 0.0, "low": 0.5, "medium": 1.5, "high": 4.0, None: 1.5}


@dataclass
class Calibration:
    """Everything one calibration measured."""

    model: str
    effort: str | None
    contract: str
    questions: int = 0  # first-attempt questions judged (the trials of each per-question rate)
    failure_counts: Counter[str] = field(default_factory=Counter)
    slice_fix: Rate = field(default_factory=Rate)
    reask_fix: Rate = field(default_factory=Rate)
    reask_keep: Rate = field(default_factory=Rate)
    tokens: dict[str, dict[str, Mean]] = field(default_factory=dict)
    spent_usd: float = 0.0
    calls: int = 0
    sections: int = 0
    stopped_by_budget: bool = False

    def first_rate(self, code: str) -> Rate:
        """The first attempt's failures of ``code`` per question seen."""
        return Rate(min(self.failure_counts[code], self.questions), self.questions)

    def add_tokens(self, step: str, reply: ModelReply) -> None:
        """Record one reply's prompt and completion tokens under ``step``."""
        means = self.tokens.setdefault(step, {"prompt": Mean(), "completion": Mean()})
        means["prompt"].samples.append(float(reply.usage.input_tokens))
        means["completion"].samples.append(float(reply.usage.output_tokens))

    def profile_data(self) -> dict[str, Any]:
        """The simulator profile file's content: the rates by model, then the measurements for people."""
        rates = {
            "imbalance_rate": self.first_rate(IMBALANCED).value,
            "duplicate_rate": self.first_rate("duplicate_question").value,
            "slice_fix_rate": self.slice_fix.value,
            "reask_fix_rate": self.reask_fix.value,
            "reask_keep_rate": self.reask_keep.value,
        }
        return {
            "models": {self.model: {k: round(v, 4) for k, v in rates.items() if v is not None}},
            "measured": self.as_dict(),
        }

    def as_dict(self) -> dict[str, Any]:
        """Every figure with its interval, and what the measurement spent."""
        return {
            "model": self.model,
            "reasoning_effort": self.effort,
            "contract": self.contract,
            "sections": self.sections,
            "calls": self.calls,
            "spent_usd": round(self.spent_usd, 6),
            "stopped_by_budget": self.stopped_by_budget,
            "first_attempt_failure_rate_per_question": {
                code: self.first_rate(code).as_dict() for code in sorted(self.failure_counts)
            },
            "slice_fix_rate": self.slice_fix.as_dict(),
            "reask_fix_rate": self.reask_fix.as_dict(),
            "reask_keep_rate": self.reask_keep.as_dict(),
            "tokens": {
                step: {k: m.as_dict() for k, m in means.items()} for step, means in self.tokens.items()
            },
        }


class BudgetReached(Exception):
    """The next call's estimate would take the spending past ``--budget-usd``."""

    def __init__(self, spent_usd: float, budget_usd: float) -> None:
        super().__init__(f"budget reached: ${spent_usd:.4f} spent of ${budget_usd:.4f}")
        self.spent_usd = spent_usd
        self.budget_usd = budget_usd


@dataclass
class Plan:
    """The calls a calibration will make at most, and what they should cost."""

    sections: int
    first_calls: int
    slice_calls: int
    reask_calls: int
    estimate_usd: float

    @property
    def calls(self) -> int:
        """Every call, at most."""
        return self.first_calls + self.slice_calls + self.reask_calls


def _estimate(
    settings: Settings, model: str, effort: str | None, prompt_chars: int, output_tokens: int
) -> float:
    price = settings.prices.get(model)
    if price is None:
        return 0.0
    completion = output_tokens * (1 + REASONING.get(effort, 1.5))
    return (prompt_chars / 4 * price.input_per_1m_usd + completion * price.output_per_1m_usd) / 1_000_000


def plan(
    sections: Sequence[str],
    model: str,
    effort: str | None,
    questions: int,
    max_slices: int,
    settings: Settings,
) -> Plan:
    """The most calls the calibration makes and their estimated cost (the re-ask resends the quiz)."""
    quiz_chars = questions * QUESTION_TOKENS * 4
    estimate = 0.0
    for text in sections:
        estimate += _estimate(settings, model, effort, len(text) + 2_000, questions * QUESTION_TOKENS)
        estimate += max_slices * _estimate(settings, model, effort, 2_500, SLICE_TOKENS)
        estimate += _estimate(
            settings, model, effort, len(text) + 2_000 + quiz_chars, questions * QUESTION_TOKENS
        )
    n = len(sections)
    return Plan(n, n, n * max_slices, n, estimate)


class Calibrator:
    """Runs the measurement calls through ``caller`` within a budget; fills a ``Calibration``."""

    def __init__(
        self,
        caller: Callable[[ModelCall], ModelReply],
        settings: Settings,
        found: Calibration,
        *,
        params: dict[str, Any],
        budget_usd: float | None,
        max_slices: int,
        seed: int,
    ) -> None:
        self.caller, self.settings, self.found = caller, settings, found
        self.params, self.budget_usd, self.max_slices, self.seed = params, budget_usd, max_slices, seed

    def run(self, sections: Sequence[str]) -> Calibration:
        """Measure on every section, in order, until done or the budget stops it."""
        try:
            for index, text in enumerate(sections):
                self._section(index, text)
                self.found.sections += 1
        except BudgetReached:
            self.found.stopped_by_budget = True
        return self.found

    def _call(
        self, step: str, messages: list[dict[str, str]], name: str, schema: dict[str, Any], key: str
    ) -> ModelReply:
        chars = sum(len(m["content"]) for m in messages)
        output = SLICE_TOKENS if step == "slice" else QUESTION_TOKENS * int(self.params.get("questions", 15))
        estimate = _estimate(self.settings, self.found.model, self.found.effort, chars, output)
        if self.budget_usd is not None and self.found.spent_usd + estimate > self.budget_usd:
            raise BudgetReached(self.found.spent_usd, self.budget_usd)
        call = ModelCall(
            model=self.found.model,
            messages=messages,
            schema_name=name,
            json_schema=schema,
            reasoning_effort=self.found.effort,
            seed=self.seed,
            cache_key=key,
        )
        reply = self.caller(call)
        self.found.calls += 1
        self.found.spent_usd += reply.cost_usd or 0.0
        self.found.add_tokens(step, reply)
        return reply

    def _section(self, index: int, text: str) -> None:
        contract = build_contract(self.found.contract, self.params, self.settings, source=text)
        instructions = contract.task_instructions()
        key = f"calibrate-{index}"
        first = self._call(
            "first", task_messages(instructions, text), contract.name, contract.response_schema(), key
        )
        verdict = contract.validate(first.text or "", finish_reason=first.finish_reason)
        questions = _questions(verdict.output)
        if questions is None:
            return  # nothing item-level to learn from an output that did not parse
        self.found.questions += len(questions)
        self.found.failure_counts.update(f.code for f in verdict.failures)
        broken = _items(verdict.failures, IMBALANCED)
        for item in sorted(broken)[: self.max_slices]:
            self._slice(contract, text, verdict, item, key)
        if verdict.failures:
            self._reask(contract, instructions, text, verdict, broken, key)

    def _slice(self, contract: Contract, text: str, verdict: Any, item: int, key: str) -> None:
        target = f"/questions/{item}/options"
        step = Step(mode="surgical", model=self.found.model, reasoning_effort=self.found.effort)  # type: ignore[arg-type]
        messages = slice_prompt(contract, step, text, verdict.output, target, verdict.failures)
        schema = contract.slice_schema(verdict.output, target)
        reply = self._call("slice", messages, f"{contract.name}_slice", schema, key)
        try:
            value = json.loads(reply.text or "")["value"]
            repaired = contract.validate(splice(verdict.output, target, value))
        except (ValueError, KeyError, TypeError, LookupError):
            self.found.slice_fix.add(False)
            return
        self.found.slice_fix.add(item not in _items(repaired.failures, IMBALANCED))

    def _reask(
        self, contract: Contract, instructions: str, text: str, verdict: Any, broken: set[int], key: str
    ) -> None:
        messages = retry_messages(instructions, text, verdict.output, verdict.failures)
        reply = self._call("reask", messages, contract.name, contract.response_schema(), key)
        again = contract.validate(reply.text or "", finish_reason=reply.finish_reason)
        before, after = _questions(verdict.output) or [], _questions(again.output)
        if after is None or len(after) != len(before):
            return  # a different number of questions: nothing to compare item by item
        still = _items(again.failures, IMBALANCED)
        for item in broken:
            self.found.reask_fix.add(item not in still)
        named = _items(verdict.failures, None)
        for item, question in enumerate(before):
            if item not in named:
                self.found.reask_keep.add(after[item] == question)


def _questions(output: Any) -> list[Any] | None:
    if isinstance(output, dict) and isinstance(output.get("questions"), list):
        return list(output["questions"])
    return None


def _items(failures: Sequence[Failure], code: str | None) -> set[int]:
    """The question indices the failures (of ``code``, or any) point into."""
    found = set()
    for failure in failures:
        match = _ITEM.match(failure.pointer or "")
        if match and (code is None or failure.code == code):
            found.add(int(match.group(1)))
    return found
