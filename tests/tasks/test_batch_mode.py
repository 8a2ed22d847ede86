"""Which calls of a job go through the Batch API, and the line ids they get."""

from __future__ import annotations

import pytest

from suture.tasks.batch_mode import custom_id, through_batch
from suture.tasks.spec import JobSpec


@pytest.mark.parametrize(
    ("mode", "kind", "n", "expected"),
    [
        ("off", "full", 1, False),
        (None, "full", 1, False),
        ("all", "full", 1, True),
        ("all", "full", 3, True),
        ("all", "slice", 2, True),
        ("first", "full", 1, True),
        ("first", "full", 2, False),
        ("first", "slice", 2, False),
        ("bogus", "full", 1, False),
    ],
)
def test_the_mode_decides_per_call(mode: str | None, kind: str, n: int, expected: bool) -> None:
    # Given a job's mode, When a call of this kind and number is made, Then it goes through a batch or not
    assert through_batch(mode, kind, n) is expected  # type: ignore[arg-type]


def test_line_ids_are_stable_and_distinct() -> None:
    # Given the calls of one job, Then the same call always has the same id and different calls differ
    assert custom_id("j", 1) == custom_id("j", 1) == "j.a1"
    ids = {
        custom_id("j", 1),
        custom_id("j", 2),
        custom_id("j", 2, "/questions/0"),
        custom_id("j", 2, "/questions/1"),
    }
    assert len(ids) == 4
    assert custom_id("j", 2, "/questions/0").startswith("j.s2.")


def test_a_spec_stores_its_mode_only_when_it_is_not_off() -> None:
    # Given two specs, one off (the default) and one through the Batch API
    off = JobSpec(job_id="j", source="text")
    batched = JobSpec(job_id="j", source="text", batch_api="first")

    # Then the off one stores as before the Batch API existed, and each reads back as it was
    assert "batch_api" not in off.stored()
    assert batched.stored()["batch_api"] == "first"
    assert JobSpec.read("j", off.stored()).batch_api == "off"
    assert JobSpec.read("j", batched.stored()).batch_api == "first"
