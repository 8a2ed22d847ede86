"""enqueue's ``batch_api``: a mode it does not know is refused before anything is stored."""

from __future__ import annotations

import pytest

from suture.config.settings import load_settings
from suture.workers.admission import admit
from suture.workers.errors import InvalidJob

DOCUMENT = "Glaciers shape valleys over centuries. " * 20


def test_an_unknown_mode_is_a_clear_error() -> None:
    # When a job asks for a Batch API mode that does not exist
    with pytest.raises(InvalidJob) as raised:
        admit("j", "quiz", DOCUMENT, load_settings(), params={"questions": 3}, batch_api="sometimes")

    # Then the error names the field and the modes there are
    assert raised.value.field == "batch_api"
    assert raised.value.known == ["off", "all", "first"]
    assert "batch_api must be one of off, all, first" in str(raised.value)


def test_a_known_mode_is_stored_in_the_spec() -> None:
    admitted = admit("j", "quiz", DOCUMENT, load_settings(), params={"questions": 3}, batch_api="all")
    assert admitted.spec.batch_api == "all"
