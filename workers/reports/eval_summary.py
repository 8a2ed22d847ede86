"""Policy comparison statistics: what each retry policy delivered, at what cost and latency, and why.

``summarise(outcomes)`` turns the job results of one policy (result schema, docs/architecture.md)
into a ``PolicySummary``; ``suggest(summaries, margin)`` picks the cheapest policy whose valid rate
stays within ``margin`` of the best. Both are pure (no I/O); percentiles are the batch report's
(nearest rank), so ``suture batch`` and ``suture eval`` report latency the same way.

Definitions (documented for users in docs/benchmarks.md):

- *first try*: delivered valid by attempt 1; *repaired*: delivered valid by a later attempt;
  *valid* = first try + repaired; *soft-delivered*, *failed* and *refused* are the job statuses.
  The five shares sum to 1.
- *cost per valid quiz*: the cost of every job of the policy (failed ones too) divided by the
  number of valid quizzes; ``None`` if no job was valid or a price was unknown.
- *repair overhead*: the cost of the valid quizzes divided by the cost of their first attempts
  (1.0 = right first time), overall and per quiz (``suture.workers.reports.repair_overhead``).
- A surgical step costs what its slice calls cost (the engine sums them per attempt) and takes
  as long as its slowest slice (they run in parallel); ``calls`` counts the slices. A deterministic
  fix (mode ``fix``, step ``fix:<codes>``) makes no call and costs 0.
- A step *fixed* a failure code when the output it produced was kept and that code occurs fewer
  times than in the output it replaced (counted per occurrence). Preserve failures (a slice rolled
  back) describe a rejected repair, not an output: they are neither fixed nor left.

Errors: ``EvaluationError(ValueError)`` for inputs that cannot be summarised (no jobs, bad margin).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from suture.workers.reports.batch_report import percentiles
from suture.workers.reports.repair_overhead import repair_overhead

KEPT_OUTCOMES = frozenset({"valid", "improved"})


class EvaluationError(ValueError):
    """The statistics cannot be computed from these inputs (what and why in the message)."""


@dataclass(frozen=True)
class JobOutcome:
    """One job of an evaluation: which policy, document and run, and its result (result schema)."""

    policy: str
    case: str
    run: int
    result: Mapping[str, Any]
    expected_statuses: tuple[str, ...] = ()


@dataclass
class StepSummary:
    """What one step of a policy did over all jobs: runs, calls, cost, latency, and what it fixed."""

    mode: str
    model: str
    runs: int = 0
    calls: int = 0
    cost_usd: float = 0.0
    latency_ms_total: float = 0.0
    delivered_valid: int = 0
    fixed: Counter[str] = field(default_factory=Counter)
    failures_left: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form: totals and per-run means (failures left = mean count per run, by code)."""
        runs = max(self.runs, 1)
        return {
            "mode": self.mode,
            "model": self.model,
            "runs": self.runs,
            "calls": self.calls,
            "cost_usd": round(self.cost_usd, 8),
            "mean_cost_usd": round(self.cost_usd / runs, 8),
            "mean_latency_ms": round(self.latency_ms_total / runs, 1),
            "delivered_valid": self.delivered_valid,
            "fixed": dict(sorted(self.fixed.items())),
            "mean_failures_left": {c: round(n / runs, 3) for c, n in sorted(self.failures_left.items())},
        }


@dataclass(frozen=True)
class PolicySummary:
    """The comparison figures of one policy (the keys of eval.json's ``policies`` entries)."""

    name: str
    jobs: int
    valid_rate: float
    first_try_rate: float
    repaired_rate: float
    soft_delivered_rate: float
    failed_rate: float
    refused_rate: float
    cost_usd: float | None
    cost_per_valid_usd: float | None
    latency_p50_ms: float
    latency_p95_ms: float
    mean_attempts: float
    tokens: dict[str, int]
    steps: dict[str, dict[str, Any]]
    expectations_met_rate: float | None
    repair_overhead: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form for eval.json."""
        return {k: v for k, v in self.__dict__.items() if k != "name"}


def summarise(name: str, outcomes: Sequence[JobOutcome]) -> PolicySummary:
    """The summary of one policy's jobs (all runs, all documents)."""
    if not outcomes:
        raise EvaluationError(f"policy {name!r} has no jobs to summarise")
    results = [o.result for o in outcomes]
    statuses = Counter(_status(r) for r in results)
    first_try = sum(1 for r in results if _status(r) == "delivered" and len(r.get("attempts", [])) == 1)
    valid = statuses["delivered"]
    jobs = len(results)
    cost = _total_cost(results)
    spread = percentiles([float(r.get("latency_ms") or 0.0) for r in results])
    return PolicySummary(
        name=name,
        jobs=jobs,
        valid_rate=_share(valid, jobs),
        first_try_rate=_share(first_try, jobs),
        repaired_rate=_share(valid - first_try, jobs),
        soft_delivered_rate=_share(statuses["soft_delivered"], jobs),
        failed_rate=_share(statuses["failed"], jobs),
        refused_rate=_share(statuses["refused"], jobs),
        cost_usd=None if cost is None else round(cost, 8),
        cost_per_valid_usd=None if cost is None or valid == 0 else round(cost / valid, 8),
        latency_p50_ms=round(spread["p50"] or 0.0, 1),
        latency_p95_ms=round(spread["p95"] or 0.0, 1),
        mean_attempts=round(statistics.fmean(len(r.get("attempts", [])) for r in results), 3),
        tokens=_tokens(results),
        steps={label: s.as_dict() for label, s in _steps(results).items()},
        expectations_met_rate=_expectations(outcomes),
        repair_overhead=repair_overhead(results),
    )


def _status(result: Mapping[str, Any]) -> str:
    return str(result.get("status", "failed"))


def _share(count: int, total: int) -> float:
    return round(count / total, 4) if total else 0.0


def _total_cost(results: Sequence[Mapping[str, Any]]) -> float | None:
    costs = [r.get("cost_usd") for r in results]
    if any(c is None for c in costs):
        return None
    return float(sum(c for c in costs if c is not None))


def _tokens(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for r in results:
        for key, value in (r.get("usage") or {}).items():
            totals[key] += int(value or 0)
    return {
        "input_tokens": totals["input_tokens"],
        "output_tokens": totals["output_tokens"],
        "reasoning_tokens": totals["reasoning_tokens"],
        "per_job": round((totals["input_tokens"] + totals["output_tokens"]) / max(len(results), 1)),
    }


def _steps(results: Sequence[Mapping[str, Any]]) -> dict[str, StepSummary]:
    steps: dict[str, StepSummary] = {}
    for r in results:
        standing: Counter[str] | None = None
        for attempt in r.get("attempts", []):
            label = str(attempt.get("step"))
            step = steps.setdefault(label, StepSummary(str(attempt.get("mode")), str(attempt.get("model"))))
            # A rolled-back slice's preserve failure describes a rejected repair, not the output.
            failures = [f for f in attempt.get("failures", []) if f.get("kind") != "preserve"]
            codes = Counter(str(f.get("code")) for f in failures)
            _count_attempt(step, attempt, codes)
            if attempt.get("outcome") in KEPT_OUTCOMES:
                if standing is not None:
                    step.fixed.update(standing - codes)
                standing = codes
                if attempt.get("outcome") == "valid":
                    step.delivered_valid += 1
    return dict(sorted(steps.items(), key=lambda item: _step_order(item[0])))


def _count_attempt(step: StepSummary, attempt: Mapping[str, Any], codes: Counter[str]) -> None:
    step.runs += 1
    mode = attempt.get("mode")
    step.calls += len(attempt.get("targets") or []) if mode == "surgical" else (0 if mode == "fix" else 1)
    step.cost_usd += float(attempt.get("cost_usd") or 0.0)
    step.latency_ms_total += float(attempt.get("latency_ms") or 0.0)
    step.failures_left.update(codes)


def _step_order(label: str) -> tuple[int, str]:
    head = label.split(":", 1)[0]
    return (int(head), label) if head.isdigit() else (10**6, label)


def _expectations(outcomes: Sequence[JobOutcome]) -> float | None:
    judged = [o for o in outcomes if o.expected_statuses]
    if not judged:
        return None
    met = sum(1 for o in judged if _status(o.result) in o.expected_statuses)
    return _share(met, len(judged))


@dataclass(frozen=True)
class Suggestion:
    """The cheapest policy within ``margin`` of the best valid rate, and the figures behind the choice."""

    chosen: str | None
    best: str
    best_valid_rate: float
    margin: float
    eligible: tuple[str, ...]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form for eval.json."""
        return {**self.__dict__, "eligible": list(self.eligible)}


def suggest(summaries: Mapping[str, PolicySummary], margin: float) -> Suggestion:
    """Pick the cheapest policy (cost per valid quiz) whose valid rate is within ``margin`` of the best."""
    if not summaries:
        raise EvaluationError("no policies to choose from")
    if not 0 <= margin <= 1:
        raise EvaluationError(f"margin must be a share between 0 and 1, got {margin}")
    best = max(summaries.values(), key=lambda s: (s.valid_rate, -(s.cost_per_valid_usd or float("inf"))))
    floor = best.valid_rate - margin - 1e-9
    eligible = [s for s in summaries.values() if s.valid_rate >= floor]
    priced = [s for s in eligible if s.cost_per_valid_usd is not None]
    names = tuple(s.name for s in eligible)
    if not priced:
        reason = "no eligible policy has a known cost per valid quiz (unknown prices or no valid quiz)"
        return Suggestion(None, best.name, best.valid_rate, margin, names, reason)
    chosen = min(priced, key=lambda s: (s.cost_per_valid_usd, -s.valid_rate, s.name))
    reason = (
        f"{chosen.name}: valid {chosen.valid_rate:.1%} (best {best.name} {best.valid_rate:.1%}, "
        f"margin {100 * margin:g} points) at ${chosen.cost_per_valid_usd:.6f} per valid quiz"
    )
    if chosen.name != best.name and best.cost_per_valid_usd is not None:
        reason += f" vs ${best.cost_per_valid_usd:.6f} for {best.name}"
    return Suggestion(chosen.name, best.name, best.valid_rate, margin, names, reason)
