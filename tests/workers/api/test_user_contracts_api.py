"""The HTTP API takes a user's contract by name: documented in openapi.json, enqueued, delivered."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.contract_packages import DOCUMENT, user_stack
from tests.fixtures.api_server import ApiServer
from tests.fixtures.workers import CeleryStack
from tests.workers.api.test_jobs_api import finished

pytestmark = pytest.mark.integration
__all__ = ["user_stack"]  # the fixture this module uses


def test_a_user_contract_is_listed_enqueued_and_delivered_through_the_api(
    user_stack: CeleryStack, api_server: Callable[..., ApiServer]
) -> None:
    server = api_server(user_stack)
    schema = server.call("GET", "/openapi.json").json()
    listed = schema["components"]["schemas"]["JobRequest"]["properties"]["contract"]["enum"]
    assert {"quiz", "outline", "glossary", "terms", "cards"} <= set(listed)
    created = server.call("POST", "/v1/jobs", json={"contract": "cards", "input": DOCUMENT})
    assert created.status_code == 202, created.text
    view = finished(server, created.json()["job_id"], timeout_s=90)
    assert view["result"]["status"] == "delivered" and view["result"]["contract"] == "cards"
    refused = server.call("POST", "/v1/jobs", json={"contract": "cards", "input": DOCUMENT, "questions": 3})
    assert refused.status_code == 422 and "'questions'" in refused.text
