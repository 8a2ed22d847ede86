"""A simulator profile file (what `suture calibrate` writes): its rates replace a model's; a bad
file says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from suture.workers.simulator import PROFILES
from suture.workers.simulator.calibrated import ProfileFileError, apply_profile_file
from suture.workers.simulator.reask_skill import reask_fix_rate, reask_keep_rate
from suture.workers.simulator.repair_skill import slice_fix_rate


def test_a_profile_files_rates_replace_the_models_traits(tmp_path: Path) -> None:
    # Given a file with measured rates for nano
    path = tmp_path / "profile.yaml"
    path.write_text(
        "models:\n  gpt-5-nano: {imbalance_rate: 0.2, slice_fix_rate: 0.7,"
        " reask_fix_rate: 0.4, reask_keep_rate: 0.8}\n"
    )
    # When it is applied to the realistic profile
    profile = apply_profile_file(PROFILES["realistic"], path)
    nano = profile.traits("gpt-5-nano")
    # Then nano's rates are the file's at every effort, and the other models are untouched
    assert nano.imbalance_rate == 0.2
    assert slice_fix_rate(nano, "minimal") == slice_fix_rate(nano, "high") == 0.7
    assert reask_fix_rate(nano, "low", profile.reask) == 0.4
    assert reask_keep_rate(nano, profile.reask) == 0.8
    assert profile.traits("gpt-5-mini") == PROFILES["realistic"].traits("gpt-5-mini")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("models:\n  gpt-5-nano: {fix: 0.5}\n", "unknown rate 'fix'"),
        ("models:\n  gpt-5-nano: {slice_fix_rate: 1.5}\n", "not a number in 0..1"),
        ("models:\n  gpt-9: {slice_fix_rate: 0.5}\n", "'gpt-9' is not served"),
        ("rates: {}\n", "no `models` mapping"),
    ],
)
def test_an_unusable_profile_file_is_refused_with_its_reason(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    with pytest.raises(ProfileFileError, match=reason):
        apply_profile_file(PROFILES["realistic"], path)
