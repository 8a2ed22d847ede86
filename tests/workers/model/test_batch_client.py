"""The Files/Batch client's own checks: a file id from a batch object goes in a URL only if it is one."""

from __future__ import annotations

import pytest

from suture.config.settings import load_settings
from suture.workers.model.batch_client import BatchApiError, BatchClient


@pytest.mark.parametrize("file_id", ["../../v1/batches", "file-1/../x", "", "file 1", "a" * 201])
def test_a_file_id_that_is_not_one_is_refused_before_any_request(file_id: str) -> None:
    # Given a client whose endpoint does not exist (a request would fail differently)
    client = BatchClient(load_settings(overrides={"openai_base_url": "http://127.0.0.1:9/v1"}))

    # When a batch names an output file id that would change the URL's path
    with pytest.raises(BatchApiError) as raised:
        client.content(file_id)

    # Then it is refused as no file id, naming the operation
    assert raised.value.operation == "download"
    assert "not a file id" in str(raised.value)
