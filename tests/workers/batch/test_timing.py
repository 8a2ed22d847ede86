"""The dry run's time: the model-time estimate times the wall-time ratio batches measured on this machine."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from suture.config.settings import Settings, load_settings
from suture.workers.batch import timing
from suture.workers.batch.plan import make_plan
from suture.workers.batch.records import BatchOptions
from suture.workers.cli.batch_dry_run import estimated_wall_s, print_dry_run

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def settings_with(path: Path) -> Settings:
    base = load_settings()
    return base.model_copy(update={"estimate": base.estimate.model_copy(update={"timings_file": str(path)})})


def test_with_no_batch_measured_the_configured_ratio_is_used(tmp_path: Path) -> None:
    settings = settings_with(tmp_path / "timings.jsonl")
    ratio = timing.wall_ratio(settings)
    assert ratio == timing.WallRatio(settings.estimate.wall_time_ratio, 0)
    assert "estimate.wall_time_ratio" in ratio.describe()


def test_finished_batches_replace_it_with_the_median_of_their_own_ratios(tmp_path: Path) -> None:
    # Given three batches that took 1.4, 2.0 and 1.6 times their model-time estimate
    settings = settings_with(tmp_path / "state" / "timings.jsonl")
    for wall_s in (28.0, 40.0, 32.0):
        timing.record(settings, estimated_s=20.0, wall_s=wall_s, jobs=9)

    # Then the next estimate uses their median, and says it was measured
    ratio = timing.wall_ratio(settings)
    assert ratio.ratio == pytest.approx(1.6) and ratio.measured_runs == 3
    assert "measured on 3 earlier batch(es)" in ratio.describe()


def test_only_the_latest_records_are_kept(tmp_path: Path) -> None:
    settings = settings_with(tmp_path / "timings.jsonl")
    for _ in range(timing.KEEP + 5):
        timing.record(settings, estimated_s=10.0, wall_s=30.0, jobs=1)
    timing.record(settings, estimated_s=10.0, wall_s=10.0, jobs=1)
    lines = (tmp_path / "timings.jsonl").read_text().splitlines()
    assert len(lines) == timing.KEEP
    assert timing.wall_ratio(settings).ratio == pytest.approx(3.0)


def test_the_dry_run_prints_the_model_time_times_the_measured_ratio(tmp_path: Path) -> None:
    # Given a machine whose batches took twice their model-time estimate
    settings = settings_with(tmp_path / "timings.jsonl")
    timing.record(settings, estimated_s=10.0, wall_s=20.0, jobs=4)
    plan = make_plan([str(EXAMPLES)], settings.batch)
    options = BatchOptions(inputs=(str(EXAMPLES),), out_dir=tmp_path / "out", jobs_in_flight=16)
    try:
        model_s = estimated_wall_s(plan, settings, options)
        out = io.StringIO()

        # When the dry run prints its estimate
        print_dry_run(plan, settings, options, out)
    finally:
        plan.discard()

    # Then the time is the model time x 2, saying where the ratio came from
    assert model_s is not None
    line = out.getvalue().splitlines()[-2]
    assert f"about {2 * model_s:.0f} s with 16 jobs in flight" in line, line
    assert (
        f"({model_s:.0f} s of model time x2.00 wall-time ratio measured on 1 earlier batch(es) here)" in line
    )
