"""Calls in flight at Ctrl-C: priced from their request, and kept in the batch's cost as an estimate until a
real cost replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest

from suture.config.settings import load_settings
from suture.tasks.calls import ModelCall
from suture.tasks.policy import load_policy
from suture.workers.batch.in_flight import InFlight
from suture.workers.batch.ledger import LedgerWriter, read_ledger

SETTINGS = load_settings()


def test_a_call_in_flight_is_priced_from_its_prompt_schema_and_expected_reply() -> None:
    # Given a slice call of 4,000 characters of prompt that expects a 300-token reply, on gpt-5-nano
    call = ModelCall(
        model="gpt-5-nano",
        messages=[{"role": "system", "content": "s" * 1000}, {"role": "user", "content": "u" * 3000}],
        schema_name="quiz_slice",
        json_schema={"type": "object"},
        expected_reply_tokens=300,
        max_completion_tokens=2000,
    )

    # When it is priced
    usd = InFlight(SETTINGS, load_policy("default", SETTINGS), 5).call_usd(call)

    # Then it is its prompt (about 4 characters a token, framing and schema included) at the input price
    # and the reply it expects (not its ceiling) at the output price
    price = SETTINGS.prices["gpt-5-nano"]
    prompt_tokens = (1002 + 3002) // 4 + 2 * 4 + 4  # JSON-quoted contents, framing, '{"type": "object"}'
    expected = (prompt_tokens * price.input_per_1m_usd + 300 * price.output_per_1m_usd) / 1e6
    assert usd == pytest.approx(expected, rel=0.02)


def test_an_estimate_stays_in_the_batch_until_the_same_job_settles_it(tmp_path: Path) -> None:
    # Given a ledger: two jobs interrupted with calls in flight, at an estimated cost
    writer = LedgerWriter(tmp_path)
    base = {"section_sha256": "s", "status": "interrupted", "source": {}}
    writer.write("interrupted", base | {"key": "a", "job_id": "j1", "cost_usd": 0.3, "estimated_usd": 0.1})
    writer.write("interrupted", base | {"key": "b", "job_id": "j2", "cost_usd": 0.5, "estimated_usd": 0.2})
    assert read_ledger(tmp_path).estimated_usd == pytest.approx(0.3)

    # When one job went on in its store and finished (its real cost settles its estimate), and the
    # other was finished from partial/ (its calls in flight were lost: the estimate stays)
    done = base | {"status": "delivered"}
    writer.write("finished", done | {"key": "a", "job_id": "j1", "cost_usd": 0.05, "estimate_settled": True})
    writer.write("finished", done | {"key": "b", "job_id": "j2", "cost_usd": 0.4})
    writer.close()

    # Then the batch's cost is every event's, and only the lost calls remain estimated
    ledger = read_ledger(tmp_path)
    assert ledger.total_usd == pytest.approx(1.25)
    assert ledger.estimated_usd == pytest.approx(0.2)
    assert ledger.by_key["a"].estimated_usd == 0.0
