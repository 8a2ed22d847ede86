"""The figures of ``bench.bench_repair`` read from job results (their traces), and its markdown section.

Costs are split the way the provider bills them (docs/architecture.md, prompt caching): fresh input,
cached input, visible output and reasoning tokens (output tokens include reasoning, as OpenAI counts
them), each at the model's price from the settings.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from suture.config.settings import Settings
from suture.workers.reports.repair_overhead import repair_overhead

PARTS = ("fresh input", "cached input", "output", "reasoning")
GOAL_OVERHEAD = 1.3
GOAL_VALID = 0.99
GOAL_WALL = 1.15


@dataclass
class StepFigures:
    """One policy step over all jobs: how many jobs reached it, its slices, its cost split, its prompts."""

    mode: str
    reached: int = 0
    slices: int = 0
    cost: Counter[str] = field(default_factory=Counter)
    input_tokens: int = 0
    cached_tokens: int = 0


@dataclass
class PolicyFigures:
    """What one policy did over the corpus."""

    name: str
    jobs: int
    statuses: Counter[str]
    overhead: dict[str, Any]
    cost_usd: float
    first_cost_usd: float
    steps: dict[str, StepFigures]
    time_factor: float | None = None  # median job latency / mean first-attempt latency (batch estimates)

    @property
    def valid_rate(self) -> float:
        return self.statuses["delivered"] / self.jobs if self.jobs else 0.0

    @property
    def cost_per_valid_usd(self) -> float | None:
        valid = self.statuses["delivered"]
        return self.cost_usd / valid if valid else None

    def estimate_factors(self) -> dict[str, float | None]:
        """A policy's ``repair_overhead`` for batch estimates (config/defaults.yaml): a job's mean cost over
        its first attempt's mean cost, and its median latency over the first attempt's mean latency."""
        cost = self.cost_usd / self.first_cost_usd if self.first_cost_usd else None
        return {"cost": _round2(cost), "time": _round2(self.time_factor)}

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON (what ``--record`` writes, to compare a later run with)."""
        return {
            "jobs": self.jobs,
            "statuses": dict(self.statuses),
            "valid_rate": round(self.valid_rate, 4),
            "overhead": self.overhead,
            "cost_per_valid_usd": self.cost_per_valid_usd,
            "estimate_factors": self.estimate_factors(),
            "steps": {
                label: {
                    "mode": s.mode,
                    "reached": s.reached,
                    "slices": s.slices,
                    "cost_per_first_attempt": {p: s.cost[p] / (self.first_cost_usd or 1.0) for p in PARTS},
                    "prompt_tokens_per_slice": s.input_tokens / s.slices if s.slices else None,
                    "cached_tokens_per_slice": s.cached_tokens / s.slices if s.slices else None,
                }
                for label, s in self.steps.items()
            },
        }

    def line(self) -> str:
        """One progress line for the terminal."""
        o = self.overhead
        return (
            f"valid {self.valid_rate:.1%}, overhead {o['overall']} (median {o['median']}, p90 {o['p90']}, "
            f"max {o['max']}), wall ratio median {o['wall_time_ratio_median']}, "
            f"${self.cost_per_valid_usd or 0:.6f} per valid quiz"
        )


def figures(name: str, results: Sequence[Mapping[str, Any]], settings: Settings) -> PolicyFigures:
    """The figures of one policy's job results."""
    steps: dict[str, StepFigures] = {}
    first_cost = 0.0
    first_ms = [float(r["attempts"][0].get("latency_ms") or 0.0) for r in results if r.get("attempts")]
    job_ms = [float(r.get("latency_ms") or 0.0) for r in results]
    time_factor = (
        statistics.median(job_ms) / statistics.fmean(first_ms) if first_ms and any(first_ms) else None
    )
    for result in results:
        attempts = result.get("attempts") or []
        first_cost += float(attempts[0].get("cost_usd") or 0.0) if attempts else 0.0
        for attempt in attempts:
            step = steps.setdefault(str(attempt["step"]), StepFigures(str(attempt["mode"])))
            _add_attempt(step, attempt, settings)
    return PolicyFigures(
        name=name,
        jobs=len(results),
        statuses=Counter(str(r.get("status")) for r in results),
        overhead=repair_overhead(results),
        cost_usd=sum(float(r.get("cost_usd") or 0.0) for r in results),
        first_cost_usd=first_cost,
        steps=steps,
        time_factor=time_factor,
    )


def _add_attempt(step: StepFigures, attempt: Mapping[str, Any], settings: Settings) -> None:
    step.reached += 1
    usage = attempt.get("usage") or {}
    if attempt.get("mode") == "surgical":
        step.slices += len(attempt.get("targets") or [])
        step.input_tokens += int(usage.get("input_tokens") or 0)
        step.cached_tokens += int(usage.get("cached_input_tokens") or 0)
    price = settings.prices.get(str(attempt.get("model")))
    if price is None:
        return
    fresh = int(usage.get("input_tokens") or 0) - int(usage.get("cached_input_tokens") or 0)
    reasoning = int(usage.get("reasoning_tokens") or 0)
    visible = int(usage.get("output_tokens") or 0) - reasoning
    step.cost["fresh input"] += fresh * price.input_per_1m_usd / 1e6
    step.cost["cached input"] += (
        int(usage.get("cached_input_tokens") or 0) * price.cached_input_per_1m_usd / 1e6
    )
    step.cost["output"] += visible * price.output_per_1m_usd / 1e6
    step.cost["reasoning"] += reasoning * price.output_per_1m_usd / 1e6


def render(
    setup: str, results: Mapping[str, PolicyFigures], before: Mapping[str, Any] | None = None
) -> tuple[str, bool]:
    """The markdown section, and whether the default policy met every goal (``before``: a recorded run)."""
    lines = [setup, "", *_summary(results), "", *_goals(results, before)]
    if before is not None:
        lines += ["", *_before(results, before)]
    lines += [
        "",
        "Where the cost goes, in multiples of the first attempts' cost (all jobs of the policy):",
        "",
    ]
    lines += _steps(results)
    default = results.get("default")
    return "\n".join(lines), default is not None and all(_goal_checks(default, before).values())


def _summary(results: Mapping[str, PolicyFigures]) -> list[str]:
    lines = [
        "| policy | jobs | valid | soft-delivered | failed/refused | repair overhead | median | p90 | max "
        "| wall-time ratio median | $ per valid quiz |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in results.values():
        o = p.overhead
        cost = p.cost_per_valid_usd
        lines.append(
            f"| {p.name} | {p.jobs} | {p.valid_rate:.1%} | {p.statuses['soft_delivered']} "
            f"| {p.statuses['failed'] + p.statuses['refused']} | {_num(o['overall'])} | {_num(o['median'])} "
            f"| {_num(o['p90'])} | {_num(o['max'])} | {_num(o['wall_time_ratio_median'])} "
            f"| {'-' if cost is None else f'{cost:.6f}'} |"
        )
    lines += [
        "",
        "Repair overhead: the cost of the valid quizzes ÷ the cost of their first attempts (1.0 = right "
        "first time); median, p90 and max are per quiz. Wall-time ratio: a valid job's model time "
        "(attempts in sequence, a surgical step's slices in parallel) ÷ its first attempt's, from the "
        "traces.",
        "",
        "Batch estimate factors (`repair_overhead` of each policy in config/defaults.yaml, all jobs): "
        + "; ".join(
            f"{p.name}: cost {p.estimate_factors()['cost']}, time {p.estimate_factors()['time']}"
            for p in results.values()
        )
        + ".",
    ]
    return lines


def _goal_checks(p: PolicyFigures, before: Mapping[str, Any] | None) -> dict[str, bool]:
    o = p.overhead
    checks = {
        f"repair overhead <= {GOAL_OVERHEAD}": o["overall"] is not None and o["overall"] <= GOAL_OVERHEAD,
        f"valid >= {GOAL_VALID:.0%}": p.valid_rate >= GOAL_VALID,
        f"wall-time ratio median <= {GOAL_WALL}": (
            o["wall_time_ratio_median"] is not None and o["wall_time_ratio_median"] <= GOAL_WALL
        ),
    }
    earlier = _before_default(before)
    if earlier is not None and earlier.get("cost_per_valid_usd") is not None:
        cost = p.cost_per_valid_usd
        checks["lower $ per valid quiz than before"] = (
            cost is not None and cost < earlier["cost_per_valid_usd"]
        )
    return checks


def _goals(results: Mapping[str, PolicyFigures], before: Mapping[str, Any] | None) -> list[str]:
    default = results.get("default")
    if default is None:
        return ["Goals: the default policy did not run."]
    checks = _goal_checks(default, before)
    said = "; ".join(f"{goal}: {'met' if ok else 'NOT met'}" for goal, ok in checks.items())
    return [f"Goals of the default policy: {said}."]


def _before_default(before: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if before is None else before.get("policies", {}).get("default")


def _before(results: Mapping[str, PolicyFigures], before: Mapping[str, Any]) -> list[str]:
    recorded = before.get("recorded", {})
    lines = [
        f"Before: the same script on the same corpus and seeds at commit {recorded.get('commit', '?')} "
        f"({recorded.get('note', '')}), recorded in `{recorded.get('file', '?')}`:",
        "",
        "| policy | run | valid | repair overhead | median | p90 | max | wall-time ratio median | $ per "
        "valid quiz "
        "| prompt tokens per slice, first surgical pass (cached) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, then in before.get("policies", {}).items():
        now = results.get(name)
        rows = [("before", then)] + ([("now", now.as_dict())] if now is not None else [])
        for label, p in rows:
            o = p["overhead"]
            cost = p["cost_per_valid_usd"]
            lines.append(
                f"| {name} | {label} | {p['valid_rate']:.1%} | {_num(o['overall'])} | {_num(o['median'])} "
                f"| {_num(o['p90'])} | {_num(o['max'])} | {_num(o['wall_time_ratio_median'])} "
                f"| {'-' if cost is None else f'{cost:.6f}'} | {_first_slices(p)} |"
            )
    return lines


def _first_slices(p: Mapping[str, Any]) -> str:
    for step in p["steps"].values():
        if step["mode"] == "surgical" and step["prompt_tokens_per_slice"] is not None:
            return f"{step['prompt_tokens_per_slice']:.0f} ({step['cached_tokens_per_slice']:.0f})"
    return "-"


def _steps(results: Mapping[str, PolicyFigures]) -> list[str]:
    lines = [
        "| policy | step | jobs reaching it | slices per run | total | "
        + " | ".join(PARTS)
        + " | prompt tokens per slice (cached) |",
        "|---|---|---:|---:|---:|" + "---:|" * len(PARTS) + "---:|",
    ]
    for p in results.values():
        base = p.first_cost_usd or 1.0
        for label, s in p.steps.items():
            per_slice = "-"
            if s.slices:
                per_slice = f"{s.input_tokens / s.slices:.0f} ({s.cached_tokens / s.slices:.0f})"
            slices = f"{s.slices / s.reached:.1f}" if s.mode == "surgical" and s.reached else "-"
            parts = " | ".join(f"{s.cost[part] / base:.3f}" for part in PARTS)
            lines.append(
                f"| {p.name} | {label} | {s.reached / p.jobs:.1%} | {slices} "
                f"| {sum(s.cost.values()) / base:.3f} | {parts} | {per_slice} |"
            )
    return lines


def _round2(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
