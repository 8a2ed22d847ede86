"""The batch report, built incrementally from a stream of job results so memory stays bounded.

``BatchReport.add_result`` folds one job result (the result schema of docs/architecture.md) into
counters, per-code tallies and two compact float arrays (cost and latency per delivered quiz);
``summary()`` is report.json. Lists a person reads (quizzes to review, problems) are capped.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict
from typing import Any

from suture.tasks.vocabulary import FinalStatus
from suture.workers.reports.provider_tokens import ProviderTokens
from suture.workers.reports.repair_overhead import RepairOverhead

# The final statuses in the order the report lists them.
FINAL_STATUSES: tuple[FinalStatus, ...] = ("delivered", "soft_delivered", "failed", "refused", "cancelled")
# Lists shown to a person are capped so a million-job batch still has a readable, bounded report.
MAX_LISTED = 500
SIMULATION_NOTICE = "SIMULATION: these quizzes were written by the suture simulator, not a real model."


def outcome(result: dict[str, Any]) -> str:
    """How a job ended, as the progress display and report count it.

    ``first_try`` (delivered by attempt 1), ``fixed`` (delivered after deterministic fixes only, no
    second model call), ``repaired_surgically`` (delivered after surgical repair with the first
    model), ``escalated`` (a stronger model was needed), ``retried`` (full retry with the first
    model), or the final status for soft_delivered / failed / refused.
    """
    status = str(result.get("status"))
    if status != "delivered":
        return status
    everything = result.get("attempts") or []
    if len(everything) <= 1:
        return "first_try"
    attempts = [a for a in everything if a.get("mode") != "fix"]  # a fix calls no model
    if len(attempts) <= 1:
        return "fixed"
    first_model = attempts[0].get("model")
    if any(a.get("model") != first_model for a in attempts):
        return "escalated"
    if any(a.get("mode") == "surgical" for a in attempts):
        return "repaired_surgically"
    return "retried"


def step_label(attempt: dict[str, Any]) -> str:
    """A short name for the policy step an attempt ran, e.g. ``2:surgical:gpt-5-nano@low``."""
    step = attempt.get("step")
    effort = attempt.get("reasoning_effort")
    if isinstance(step, str) and ":" in step:
        name = step  # the engine already labels steps as "<n>:<mode>:<model>"
    else:
        name = f"{step}:{attempt.get('mode')}:{attempt.get('model')}"
    return f"{name}@{effort}" if effort else name


def percentiles(values: array[float] | list[float]) -> dict[str, float | None]:
    """Mean, p50 and p95 (nearest rank) of values; None each when there are none."""
    if not values:
        return {"mean": None, "p50": None, "p95": None}
    ordered = sorted(values)

    def rank(p: float) -> float:
        return ordered[max(0, math.ceil(p * len(ordered)) - 1)]

    return {"mean": sum(ordered) / len(ordered), "p50": rank(0.50), "p95": rank(0.95)}


def histogram(values: array[float] | list[float], bins: int = 12) -> list[dict[str, float]]:
    """Equal-width bins ``{lo, hi, count}`` over the values' range, for the report's charts."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    return [{"lo": lo + i * width, "hi": lo + (i + 1) * width, "count": c} for i, c in enumerate(counts)]


class BatchReport:
    """Accumulates job results and input issues into the numbers of report.json."""

    def __init__(self, *, simulated: bool = False, settings_note: dict[str, Any] | None = None) -> None:
        self.simulated = simulated
        self.settings_note = settings_note or {}
        self.status_counts: Counter[str] = Counter()
        self.outcome_counts: Counter[str] = Counter()
        self.cost_usd = 0.0
        self.unknown_cost_jobs = 0
        self.batch_api_attempts = 0  # attempts whose model call(s) went through OpenAI's Batch API
        self.tokens: Counter[str] = Counter()
        self.quiz_cost_usd: array[float] = array("d")
        self.quiz_latency_ms: array[float] = array("d")
        self.overhead = RepairOverhead()
        self.provider = ProviderTokens()
        # The cluster's per-model deferral counters over this run (``BatchRun``), None when not read.
        self.deferred: dict[str, dict[str, float]] | None = None
        self.funnel: Counter[int] = Counter()
        self.code_seen: Counter[str] = Counter()
        self.code_fixed_by: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.code_remaining: Counter[str] = Counter()
        self.tiers: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.review: list[dict[str, Any]] = []
        self.quizzes: list[dict[str, Any]] = []
        self.problems: list[dict[str, Any]] = []
        self.issues: list[dict[str, Any]] = []
        self.skipped = 0
        self.unlisted = Counter[str]()
        self.not_started: list[dict[str, Any]] = []
        self.not_started_count = 0
        self.budget: dict[str, Any] | None = None  # {"limit_usd": X} when a batch-wide budget was set
        self.short: list[dict[str, Any]] = []  # sections too short for a quiz (--questions auto)
        self.short_count = 0
        self.repeats: list[dict[str, Any]] = []  # questions repeating another section's
        self.repeat_count = 0

    def add_issue(self, issue: dict[str, Any]) -> None:
        """Record an input file skipped (counted in ``skipped``) or noted."""
        if issue.get("skipped", True):
            self.skipped += 1
        self._listed(self.issues, issue, "issues")

    def add_not_started(self, source: dict[str, Any]) -> None:
        """Record a section that was never started (the batch's budget was reached first)."""
        self.not_started_count += 1
        self._listed(self.not_started, source, "not_started")

    def add_short(self, source: dict[str, Any], reason: str) -> None:
        """Record a section not quizzed because it is too short for a quiz."""
        self.short_count += 1
        self._listed(self.short, source | {"reason": reason}, "short_sections")

    def add_repeats(self, repeats: list[dict[str, Any]]) -> None:
        """Record questions of a quiz that repeat (or nearly) a question of an earlier section."""
        self.repeat_count += len(repeats)
        for repeat in repeats:
            self._listed(self.repeats, repeat, "repeats_across_sections")

    def add_result(
        self,
        source: dict[str, Any],
        result: dict[str, Any],
        trace: str,
        page: dict[str, Any] | None = None,
        *,
        paid: bool = True,
    ) -> None:
        """Fold one finished job into the report; ``trace`` is the relative path of its trace file,
        ``page`` its quiz page's line (``href``, ``title``, ``failures``, ``repaired``) if it has one;
        ``paid=False`` for a quiz an earlier run paid for (kept by a rerun: not in this run's cost)."""
        status = str(result.get("status"))
        self.status_counts[status] += 1
        self.outcome_counts[outcome(result)] += 1
        self.simulated = self.simulated or bool(result.get("simulated"))
        self._add_cost(result, paid=paid)
        self.overhead.add(result)
        attempts = result.get("attempts") or []
        self.funnel.update(range(1, len(attempts) + 1))
        if paid:
            self.provider.add(attempts)
        self.batch_api_attempts += sum(1 for a in attempts if a.get("batch_id"))
        self._add_codes(attempts, result.get("failures") or [])
        self._add_tiers(attempts)
        entry = {"source": source, "job_id": result.get("job_id"), "status": status, "trace": trace}
        if status == "soft_delivered":
            codes = sorted({f.get("code", "?") for f in result.get("failures") or []})
            self._listed(self.review, entry | {"codes": codes}, "review")
        elif status in ("failed", "refused"):
            self._listed(self.problems, entry | {"reason": result.get("reason")}, "problems")
        if page is not None:
            self._listed(self.quizzes, entry | page, "quizzes")

    def _listed(self, target: list[dict[str, Any]], entry: dict[str, Any], name: str) -> None:
        if len(target) < MAX_LISTED:
            target.append(entry)
        else:
            self.unlisted[name] += 1

    def _add_cost(self, result: dict[str, Any], *, paid: bool = True) -> None:
        cost = result.get("cost_usd")
        if cost is None:
            self.unknown_cost_jobs += 1
        elif paid:
            self.cost_usd += float(cost)
        for key, value in (result.get("usage") or {}).items():
            if isinstance(value, int) and paid:
                self.tokens[key] += value
        if result.get("status") in ("delivered", "soft_delivered"):
            if cost is not None:
                self.quiz_cost_usd.append(float(cost))
            self.quiz_latency_ms.append(float(result.get("latency_ms") or 0.0))

    def _add_codes(self, attempts: list[dict[str, Any]], remaining: list[dict[str, Any]]) -> None:
        """Count each code once per attempt it occurred in, and credit the step after which it vanished."""
        previous: Counter[str] = Counter()
        for attempt in attempts:
            failures = attempt.get("failures") or []
            self.code_seen.update(f.get("code", "?") for f in failures)
            # A rolled-back slice's preserve failure describes a rejected repair, not the output: no later
            # step "fixes" it.
            now = Counter(f.get("code", "?") for f in failures if f.get("kind") != "preserve")
            for code, n in previous.items():
                if n > now[code]:
                    self.code_fixed_by[code][step_label(attempt)] += n - now[code]
            previous = now
        self.code_remaining.update(f.get("code", "?") for f in remaining)

    def _add_tiers(self, attempts: list[dict[str, Any]]) -> None:
        before: int | None = None
        for attempt in attempts:
            failures = len(attempt.get("failures") or [])
            tier = attempt.get("example_tier")
            if tier is not None:
                stats = self.tiers[str(tier)]
                stats["used"] += 1
                stats["passed"] += failures == 0
                stats["improved"] += before is not None and failures < before
            before = failures

    def summary(self) -> dict[str, Any]:
        """report.json: totals, rates, per-quiz cost/latency, failure codes, tiers, lists to review."""
        jobs = sum(self.status_counts.values())
        quizzes = self.status_counts["delivered"] + self.status_counts["soft_delivered"]
        return {
            "notice": SIMULATION_NOTICE if self.simulated else None,
            "simulated": self.simulated,
            "total": jobs + self.skipped,
            "jobs": jobs,
            **{status: self.status_counts[status] for status in FINAL_STATUSES},
            "skipped": self.skipped,
            "cost_usd": round(self.cost_usd, 6),
            "jobs_with_unknown_cost": self.unknown_cost_jobs,
            "batch_api_attempts": self.batch_api_attempts,
            "tokens": dict(self.tokens),
            "outcomes": dict(self.outcome_counts),
            "rates": self._rates(jobs),
            "per_quiz": {
                "quizzes": quizzes,
                "cost_usd": percentiles(self.quiz_cost_usd),
                "latency_ms": percentiles(self.quiz_latency_ms),
            },
            "repair_overhead": self.overhead.summary(),
            "provider_tokens": self.provider.summary(self.deferred),
            "distributions": {
                "cost_usd": histogram(self.quiz_cost_usd),
                "latency_ms": histogram(self.quiz_latency_ms),
            },
            "funnel": [{"attempt": n, "jobs": self.funnel[n]} for n in sorted(self.funnel)],
            "failure_codes": self._codes(),
            "example_tiers": self._tier_rates(),
            "review": self.review,
            # Every quiz's page, the soft-delivered ones (to review) first.
            "quizzes": sorted(self.quizzes, key=lambda q: q["status"] != "soft_delivered"),
            "problems": self.problems,
            "input_issues": self.issues,
            "not_started": {"count": self.not_started_count, "sections": self.not_started},
            "short_sections": {"count": self.short_count, "sections": self.short},
            "repeats_across_sections": {"count": self.repeat_count, "questions": self.repeats},
            "budget": None if self.budget is None else self.budget | {"spent_usd": round(self.cost_usd, 6)},
            "unlisted": dict(self.unlisted),
            "settings": self.settings_note,
        }

    def _rates(self, jobs: int) -> dict[str, float | None]:
        def share(n: int) -> float | None:
            return round(n / jobs, 4) if jobs else None

        o = self.outcome_counts
        return {
            "first_pass": share(o["first_try"]),
            "fixed_without_model": share(o["fixed"]),
            "surgical_repair": share(o["repaired_surgically"]),
            "escalation": share(o["escalated"]),
            "retried": share(o["retried"]),
            "soft_delivery": share(o["soft_delivered"]),
            "failure": share(o["failed"] + o["refused"]),
        }

    def _codes(self) -> dict[str, Any]:
        return {
            code: {
                "occurrences": n,
                "fixed_by": dict(self.code_fixed_by[code].most_common()),
                "remaining": self.code_remaining[code],
            }
            for code, n in self.code_seen.most_common()
        }

    def _tier_rates(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for tier, stats in sorted(self.tiers.items()):
            used = stats["used"]
            out[tier] = {
                "used": used,
                "passed": stats["passed"],
                "improved": stats["improved"],
                "success_rate": round(stats["passed"] / used, 4) if used else None,
            }
        return out
