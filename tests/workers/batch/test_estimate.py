"""Dry-run estimates: a section's real prompt at the first model's price, scaled by the policy's overhead."""

from __future__ import annotations

import pytest

from suture.config.settings import load_settings
from suture.tasks.policy import PolicyError, RepairOverhead, load_policy, policy_from_mapping
from suture.workers.batch.estimate import BatchEstimate, Estimator

SETTINGS = load_settings()


def test_a_longer_section_costs_more_and_the_overhead_scales_the_first_attempt() -> None:
    # Given the default policy (nano first, measured overhead) and 15 questions
    estimator = Estimator(SETTINGS, load_policy("default", SETTINGS), 15)
    short, long = estimator.job(1000), estimator.job(5000)
    # Then a longer section costs more (4 characters a token, at nano's input price)
    assert long.first_attempt_usd is not None and short.first_attempt_usd is not None
    assert long.first_attempt_usd - short.first_attempt_usd == pytest.approx(1000 * 0.05 / 1e6)
    # ...and a whole job is the first attempt times the policy's measured overhead
    overhead = load_policy("default", SETTINGS).repair_overhead
    assert overhead is not None and short.cost_usd == pytest.approx(short.first_attempt_usd * overhead.cost)
    speed = SETTINGS.estimate.model_speeds["gpt-5-nano"]
    first_s = (
        speed.first_token_s + 15 * SETTINGS.estimate.output_tokens_per_question / speed.output_tokens_per_s
    )
    assert short.latency_s == pytest.approx(first_s * overhead.time)


def test_a_policy_without_overhead_or_an_unpriced_model_is_never_estimated_as_free() -> None:
    bare = policy_from_mapping("bare", {"steps": [{"mode": "full", "model": "gpt-5-nano"}]}, SETTINGS)
    assert not Estimator(SETTINGS, bare, 5).measured_overhead
    unknown = policy_from_mapping("new", {"steps": [{"mode": "full", "model": "gpt-9"}]}, SETTINGS)
    job = Estimator(SETTINGS, unknown, 5).job(2000)
    assert job.cost_usd is None and job.latency_s is None
    total = BatchEstimate()
    total.add(job)
    assert total.cost_usd is None and total.wall_s(16) is None


def test_wall_time_spreads_jobs_over_the_lanes_but_never_below_the_longest() -> None:
    estimator = Estimator(SETTINGS, load_policy("default", SETTINGS), 15)
    total = BatchEstimate()
    for _ in range(32):
        total.add(estimator.job(3000))
    one = estimator.job(3000).latency_s or 0.0
    assert total.wall_s(16) == pytest.approx(2 * one) and total.wall_s(64) == pytest.approx(one)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"cost": 1.5}, "must be \\{cost: <factor > 0>, time: <factor > 0>\\}"),
        ({"cost": 0, "time": 1}, "got cost: 0$"),
        ({"cost": 2, "time": "fast"}, "got time: text of 4 characters$"),  # the text is not echoed
        ([2, 1], "repair_overhead"),
    ],
)
def test_a_bad_repair_overhead_is_a_policy_error(value: object, problem: str) -> None:
    data = {"steps": [{"mode": "full"}], "repair_overhead": value}
    with pytest.raises(PolicyError, match=problem):
        policy_from_mapping("p", data, SETTINGS)


def test_the_packaged_policies_carry_their_measured_overhead() -> None:
    for name in ("default", "full-only"):
        assert isinstance(load_policy(name, SETTINGS).repair_overhead, RepairOverhead)
