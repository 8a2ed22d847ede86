"""A finished batch's files read into one reply per line: priced at the batch rate, untrusted lines
checked."""

from __future__ import annotations

import json
from typing import Any

from suture.config.settings import load_settings
from suture.tasks.calls import Usage
from suture.workers.model.batch_results import batch_cost_usd, read_results
from suture.workers.model.pricing import cost_usd
from tests.fixtures.simulator import completion_body

PRICES = load_settings().prices


def line(custom_id: str, status: int | None, body: Any = None, error: Any = None) -> str:
    response = None if status is None else {"status_code": status, "request_id": "r", "body": body}
    return json.dumps({"id": "batch_req_1", "custom_id": custom_id, "response": response, "error": error})


def test_each_line_of_the_round_gets_one_reply() -> None:
    # Given an output file (one answer, a stranger's line, garbage) and an error file (a 500, a 400, an
    # expired line)
    models = {c: "gpt-5-mini" for c in ("ok", "failed", "refused", "expired", "missing")}
    output = "\n".join(
        [
            line("ok", 200, completion_body('{"a": 1}')),
            line("stranger", 200, completion_body()),
            "not json",
            "[]",
        ]
    )
    errors = "\n".join(
        [
            line("failed", 500, {"error": {"message": "server had an error", "code": None}}),
            line("refused", 400, {"error": {"message": "bad schema", "code": "invalid_request"}}),
            line("expired", None, error={"code": "batch_expired", "message": "not run"}),
        ]
    )

    # When they are read
    replies = read_results(
        "batch_1", models, [output.encode(), errors.encode()], PRICES, status="expired", simulated=True
    )

    # Then every line of the round has one reply, and nothing else
    assert set(replies) == set(models)
    ok = replies["ok"]
    assert ok.text == '{"a": 1}' and ok.batch_id == "batch_1" and ok.simulated and ok.error is None
    assert ok.cost_usd == batch_cost_usd("gpt-5-mini", ok.usage, PRICES)
    assert replies["failed"].error_kind == "unavailable"
    assert replies["refused"].error_kind == "bad_request" and "bad schema" in str(replies["refused"].error)
    assert replies["expired"].error_kind == "unavailable" and "batch_expired" in str(replies["expired"].error)
    assert replies["missing"].error_kind == "unavailable" and "no result" in str(replies["missing"].error)


def test_the_batch_price_is_the_ratio_of_the_online_price() -> None:
    # Given a call's usage, Then through a batch it costs batch_price_ratio of its online cost
    usage = Usage(input_tokens=10_000, cached_input_tokens=2_000, output_tokens=3_000)
    online = cost_usd("gpt-5", usage, PRICES)
    assert online is not None
    assert (
        batch_cost_usd("gpt-5", usage, PRICES) == online * PRICES["gpt-5"].batch_price_ratio == online * 0.5
    )
    assert batch_cost_usd("unknown-model", usage, PRICES) is None
