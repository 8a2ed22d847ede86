"""Repair overhead: what valid quizzes cost over their first attempts, overall and per quiz."""

from __future__ import annotations

from typing import Any

import pytest

from suture.workers.reports.repair_overhead import quiz_ratios, repair_overhead


def job(status: str, costs: list[float | None], latencies: list[float]) -> dict[str, Any]:
    attempts = [{"cost_usd": c, "latency_ms": ms} for c, ms in zip(costs, latencies, strict=True)]
    known = None if None in costs else sum(c for c in costs if c is not None)
    return {"status": status, "attempts": attempts, "cost_usd": known, "latency_ms": sum(latencies)}


def test_a_quiz_right_first_time_has_an_overhead_of_one() -> None:
    assert quiz_ratios(job("delivered", [0.002], [30_000.0])) == (1.0, 1.0)


def test_overall_is_the_ratio_of_sums_and_the_distribution_is_per_quiz() -> None:
    # Given three valid quizzes (ratios 1.0, 1.5, 3.0), one soft-delivered and one unpriced
    results = [
        job("delivered", [0.001], [10_000.0]),
        job("delivered", [0.002, 0.001], [20_000.0, 2_000.0]),
        job("delivered", [0.001, 0.0015, 0.0005], [10_000.0, 1_000.0, 1_000.0]),
        job("soft_delivered", [0.001, 0.009], [10_000.0, 10_000.0]),
        job("delivered", [0.001, None], [10_000.0, 1_000.0]),
    ]
    # When summarised
    summary = repair_overhead(results)
    # Then only the priced valid quizzes count: (0.001 + 0.003 + 0.003) / (0.001 + 0.002 + 0.001)
    assert summary["quizzes"] == 3
    assert summary["overall"] == pytest.approx(7 / 4)
    assert (summary["median"], summary["p90"], summary["max"]) == (1.5, 3.0, 3.0)
    assert summary["wall_time_ratio_median"] == pytest.approx(1.1)


def test_no_valid_quiz_has_no_overhead() -> None:
    summary = repair_overhead([job("failed", [0.001], [1.0])])
    assert summary == {
        "quizzes": 0,
        "overall": None,
        "median": None,
        "p90": None,
        "max": None,
        "wall_time_ratio_median": None,
    }
