"""--dry-run and --budget-usd with --batch-api: calls through the Batch API estimated at the batch price."""

from __future__ import annotations

import pytest

from suture.config.settings import load_settings
from suture.tasks.policy import load_policy
from suture.workers.batch.estimate import Estimator

SETTINGS = load_settings()


def test_the_batch_price_applies_to_the_calls_that_go_through_batches() -> None:
    # Given the default policy (a measured repair overhead) and one section
    policy = load_policy("default", SETTINGS)
    online, first, every = (
        Estimator(SETTINGS, policy, 10, mode).job(3000) for mode in ("off", "first", "all")
    )
    assert online.cost_usd is not None and online.first_attempt_usd is not None
    ratio = SETTINGS.prices[Estimator(SETTINGS, policy, 10).model].batch_price_ratio
    repairs = online.cost_usd - online.first_attempt_usd

    # Then with `all` every call costs the ratio; with `first` only the first attempt does
    assert every.cost_usd == pytest.approx(online.cost_usd * ratio)
    assert first.first_attempt_usd == pytest.approx(online.first_attempt_usd * ratio)
    assert first.cost_usd == pytest.approx(online.first_attempt_usd * ratio + repairs)
    assert every.cost_usd < first.cost_usd < online.cost_usd
