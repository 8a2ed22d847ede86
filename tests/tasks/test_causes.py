"""How a job ended, in the one word Flower shows and searches."""

from __future__ import annotations

import pytest

from suture.tasks.causes import ending


@pytest.mark.parametrize(
    ("result", "shown"),
    [
        ({"status": "delivered", "cause": None}, "delivered"),
        ({"status": "soft_delivered", "cause": "exhausted"}, "soft_delivered"),
        ({"status": "failed", "cause": "auth"}, "failed:auth"),
        ({"status": "failed"}, "failed:unknown"),  # a result stored before causes existed
        ({"status": "refused", "cause": None}, "refused"),
        ({"status": "cancelled", "cause": None}, "cancelled"),
    ],
)
def test_the_ending_is_the_status_or_failed_with_its_cause(result: dict[str, object], shown: str) -> None:
    assert ending(result) == shown
