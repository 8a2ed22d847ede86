"""Repair overhead: what a valid quiz cost relative to its first attempt, the price of a right first answer.

A model that is right first time has an overhead of exactly 1.0; every repair (a surgical slice, a
full regeneration, an escalation) adds its cost on top. For one valid job the *cost ratio* is the
sum of its attempts' costs divided by its first attempt's cost, and its *wall-time ratio* is its
model time (the result's ``latency_ms``: attempts one after the other, the slices of a surgical step
in parallel, so a step takes as long as its slowest slice) divided by its first attempt's latency.
The *overall* overhead is the cost of all valid quizzes divided by the cost of their first
attempts (a cost-weighted mean of the ratios); the distribution is over quizzes (nearest rank).

Only delivered (fully valid) jobs count, and only those whose attempts all have a known price and
whose first attempt cost more than nothing. ``RepairOverhead`` accumulates results one by one with
bounded state (two float arrays), so ``suture batch`` can fold in a million jobs. Pure: no I/O.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from typing import Any


def quiz_ratios(result: Mapping[str, Any]) -> tuple[float, float] | None:
    """(cost ratio, wall-time ratio) of one valid job, or None if it is not valid or not priced."""
    if result.get("status") != "delivered":
        return None
    attempts = result.get("attempts") or []
    if not attempts:
        return None
    first = attempts[0]
    first_cost, total = first.get("cost_usd"), result.get("cost_usd")
    if first_cost is None or total is None or float(first_cost) <= 0:
        return None
    first_latency = float(first.get("latency_ms") or 0.0)
    latency = float(result.get("latency_ms") or 0.0)
    wall = latency / first_latency if first_latency > 0 else math.nan
    return float(total) / float(first_cost), wall


class RepairOverhead:
    """Accumulates the repair overhead of valid quizzes; ``summary()`` is its JSON form."""

    def __init__(self) -> None:
        self.cost_usd = 0.0
        self.first_cost_usd = 0.0
        self.ratios: array[float] = array("d")
        self.wall_ratios: array[float] = array("d")

    def add(self, result: Mapping[str, Any]) -> None:
        """Fold in one job result (result schema); jobs that are not valid or not priced are ignored."""
        ratios = quiz_ratios(result)
        if ratios is None:
            return
        cost, wall = ratios
        self.cost_usd += float(result["cost_usd"])
        self.first_cost_usd += float(result["attempts"][0]["cost_usd"])
        self.ratios.append(cost)
        if not math.isnan(wall):
            self.wall_ratios.append(wall)

    def summary(self) -> dict[str, Any]:
        """``{"quizzes", "overall", "median", "p90", "max", "wall_time_ratio_median"}`` (None when empty)."""
        ordered = sorted(self.ratios)
        overall = self.cost_usd / self.first_cost_usd if self.first_cost_usd > 0 else None
        return {
            "quizzes": len(ordered),
            "overall": _round(overall),
            "median": _round(rank(ordered, 0.5)),
            "p90": _round(rank(ordered, 0.9)),
            "max": _round(ordered[-1] if ordered else None),
            "wall_time_ratio_median": _round(rank(sorted(self.wall_ratios), 0.5)),
        }


def repair_overhead(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The repair overhead summary of a collection of job results."""
    overhead = RepairOverhead()
    for result in results:
        overhead.add(result)
    return overhead.summary()


def rank(ordered: list[float], share: float) -> float | None:
    """The nearest-rank percentile ``share`` (0..1) of sorted values, None if there are none."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
