"""The 95 % intervals `suture calibrate` reports: Wilson for shares, normal for means."""

from __future__ import annotations

import pytest

from suture.workers.batch.intervals import Mean, Rate


@pytest.mark.parametrize(
    "successes, trials, low, high",
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (40, 135, 0.2258, 0.3781)],
)
def test_a_share_has_the_wilson_interval(successes: int, trials: int, low: float, high: float) -> None:
    interval = Rate(successes, trials).interval()
    assert interval == pytest.approx((low, high), abs=1e-4)


def test_nothing_measured_has_no_value_and_no_interval() -> None:
    assert Rate().value is None and Rate().interval() is None
    assert Mean().as_dict() == {"value": None, "ci95": None, "n": 0}


def test_a_mean_has_the_normal_interval() -> None:
    figures = Mean([10.0, 12.0, 14.0, 16.0]).as_dict()
    # mean 13, sd 2.582, half-width 1.96 x 2.582 / 2 = 2.53
    assert figures == {"value": 13.0, "ci95": [10.5, 15.5], "n": 4}
