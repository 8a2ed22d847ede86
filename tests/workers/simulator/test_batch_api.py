"""OpenAI's Files and Batch APIs on the simulator, through the unmodified openai SDK over real HTTP."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest
from openai import OpenAI

from suture.workers.simulator import PROFILES
from suture.workers.simulator.batches import BatchOptions
from suture.workers.simulator.files import FileLimits

from .course import quiz_format, quiz_messages

TERMINAL = ("completed", "failed", "expired", "cancelled")
_FAULTS = (
    "malformed_json",
    "truncated",
    "refusal",
    "empty",
    "rate_limited",
    "server_error",
    "slow",
    "dropped_connection",
)


def _client(base_url: str, api_key: str = "unused") -> OpenAI:
    return OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=30)


def _request(custom_id: str, topic: int, **body: Any) -> dict[str, Any]:
    """One batch line asking for a 2-question quiz about a distinct document."""
    arguments = {
        "model": "gpt-5-mini",
        "messages": quiz_messages(questions=2, extra=f" Part {topic}."),
        "response_format": quiz_format(),
        "reasoning_effort": "low",
        **body,
    }
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": arguments}


def _upload(client: OpenAI, lines: list[Any], name: str = "requests.jsonl") -> Any:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    return client.files.create(file=(name, io.BytesIO(text.encode())), purpose="batch")


def _create(client: OpenAI, lines: list[Any], **kwargs: Any) -> Any:
    uploaded = _upload(client, lines)
    return client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h", **kwargs
    )


def _wait(client: OpenAI, batch_id: str, statuses: tuple[str, ...] = TERMINAL) -> tuple[Any, list[str]]:
    """Poll until the batch reaches one of ``statuses``; returns it and every status seen."""
    seen: list[str] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        batch = client.batches.retrieve(batch_id)
        if not seen or seen[-1] != batch.status:
            seen.append(batch.status)
        if batch.status in statuses:
            return batch, seen
        time.sleep(0.05)
    raise AssertionError(f"batch {batch_id} stuck in {seen}")


def _lines(client: OpenAI, file_id: str | None) -> list[dict[str, Any]]:
    if file_id is None:
        return []
    return [json.loads(line) for line in client.files.content(file_id).text.splitlines()]


def test_a_batch_goes_through_its_statuses_and_answers_in_openais_shapes(
    simulator: Callable[..., str],
) -> None:
    # Given a simulator whose batches take 1 s, and a file of three quiz requests and one invalid body
    client = _client(simulator(batch_options=BatchOptions(delay_s=1.0)))
    lines = [_request(f"job-{i}", i) for i in range(3)] + [_request("broken", 9, messages=[])]
    uploaded = _upload(client, lines)
    # When a batch is created and polled
    created = client.batches.create(
        input_file_id=uploaded.id,
        endpoint="/v1/chat/completions",
        completion_window="24h",
        metadata={"run": "t"},
    )
    batch, seen = _wait(client, created.id)
    # Then it moved validating -> in_progress -> completed, with OpenAI's counts and timestamps
    assert (uploaded.purpose, uploaded.filename, uploaded.bytes) == (
        "batch",
        "requests.jsonl",
        len(_text(lines)),
    )
    assert (
        created.status == "validating"
        and seen[0] in ("validating", "in_progress")
        and seen[-1] == "completed"
    )
    assert "in_progress" in seen
    assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (
        4,
        3,
        1,
    )
    assert batch.model == "gpt-5-mini" and batch.metadata == {"run": "t"} and batch.errors is None
    assert batch.in_progress_at and batch.finalizing_at and batch.completed_at and batch.expires_at
    # ...the output file holds one 200 line per answered request, a chat.completion as the SDK reads it
    output = _lines(client, batch.output_file_id)
    assert [line["custom_id"] for line in output] == ["job-0", "job-1", "job-2"]
    for line in output:
        assert line["id"].startswith("batch_req_") and line["error"] is None
        assert line["response"]["status_code"] == 200 and line["response"]["request_id"]
        completion = openai.types.chat.ChatCompletion.model_validate(line["response"]["body"])
        assert len(json.loads(completion.choices[0].message.content or "")["questions"]) == 2
    # ...the invalid body is a 400 in the error file, with OpenAI's error body
    (error,) = _lines(client, batch.error_file_id)
    assert error["custom_id"] == "broken" and error["error"] is None
    assert (
        error["response"]["status_code"] == 400
        and "messages" in error["response"]["body"]["error"]["message"]
    )
    # ...and the result files are batch_output files, the usage adds up the answered lines
    assert client.files.retrieve(batch.output_file_id).purpose == "batch_output"
    usage = [line["response"]["body"]["usage"] for line in output]
    assert batch.usage.input_tokens == sum(u["prompt_tokens"] for u in usage)
    assert batch.usage.output_tokens == sum(u["completion_tokens"] for u in usage)


def _text(lines: list[Any]) -> str:
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def test_batch_lines_get_the_answers_online_calls_get(simulator: Callable[..., str]) -> None:
    # Given two simulators with the same seed, one asked online and one through a batch
    online = _client(simulator(seed=7))
    batched = _client(simulator(seed=7, batch_options=BatchOptions(delay_s=0)))
    requests = [_request(f"q{i}", i, model="gpt-5-nano") for i in range(4)]
    # When the same requests are sent both ways
    direct = [online.chat.completions.create(**r["body"]).choices[0].message.content for r in requests]
    batch, _ = _wait(batched, _create(batched, requests).id)
    # Then the answers are the same (the same biased quizzes), and labelled simulated
    via_batch = [
        line["response"]["body"]["choices"][0]["message"]["content"]
        for line in _lines(batched, batch.output_file_id)
    ]
    assert via_batch == direct
    assert all(
        line["response"]["body"]["system_fingerprint"] == "suture-simulator"
        for line in _lines(batched, batch.output_file_id)
    )


@pytest.mark.parametrize(
    ("lines", "codes"),
    [
        (["{not json", _request("a", 1)], [("invalid_json_line", 1)]),
        ([_request("a", 1), _request("a", 2)], [("duplicate_custom_id", 2)]),
        ([_request("a", 1), {**_request("b", 2), "url": "/v1/embeddings"}], [("url_mismatch", 2)]),
        ([_request("a", 1), _request("b", 2, model="gpt-5")], [("model_mismatch", 2)]),
        (
            [{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions"}],
            [("missing_required_parameter", 1)],
        ),
        ([], [("empty_file", None)]),
    ],
    ids=["invalid-json", "duplicate-id", "url", "model", "no-body", "empty"],
)
def test_an_invalid_input_file_fails_the_batch_with_its_errors(
    simulator: Callable[..., str], lines: list[Any], codes: list[tuple[str, int | None]]
) -> None:
    client = _client(simulator(batch_options=BatchOptions(delay_s=0)))
    batch, _ = _wait(client, _create(client, lines).id)
    assert batch.status == "failed" and batch.failed_at
    assert batch.errors is not None
    assert [(e.code, e.line) for e in batch.errors.data] == codes
    assert batch.output_file_id is None and batch.error_file_id is None


def test_a_batch_marked_to_expire_keeps_what_it_did_and_lists_the_rest_as_expired(
    simulator: Callable[..., str],
) -> None:
    # Given a batch of four requests that the metadata trigger makes expire
    client = _client(simulator(batch_options=BatchOptions(delay_s=0.5)))
    created = _create(
        client, [_request(f"r{i}", i) for i in range(4)], metadata={"suture_simulate": "expire"}
    )
    # When its window runs out
    batch, seen = _wait(client, created.id)
    # Then it expired with the first half answered and the rest in the error file, as OpenAI writes them
    assert seen[-1] == "expired" and batch.expired_at and batch.completed_at is None
    assert [line["custom_id"] for line in _lines(client, batch.output_file_id)] == ["r0", "r1"]
    errors = _lines(client, batch.error_file_id)
    assert [line["custom_id"] for line in errors] == ["r2", "r3"]
    assert errors[0]["response"] is None
    assert errors[0]["error"] == {
        "code": "batch_expired",
        "message": "This request could not be executed before the completion window expired.",
    }
    assert (batch.request_counts.completed, batch.request_counts.failed) == (2, 2)


def test_the_expire_rate_expires_batches(simulator: Callable[..., str]) -> None:
    client = _client(simulator(batch_options=BatchOptions(delay_s=0, expire_rate=1.0)))
    batch, _ = _wait(client, _create(client, [_request("only", 1)]).id)
    assert batch.status == "expired" and batch.output_file_id is None
    assert _lines(client, batch.error_file_id)[0]["error"]["code"] == "batch_expired"


def test_the_line_error_rate_and_chaos_server_errors_fail_lines_into_the_error_file(
    simulator: Callable[..., str],
) -> None:
    # Given one simulator failing every batch line by its line error rate, one by chaos server errors
    chaos = PROFILES["chaos"].with_faults(**dict.fromkeys(_FAULTS, 0.0)).with_faults(server_error=1.0)
    by_rate = _client(simulator(batch_options=BatchOptions(delay_s=0, line_error_rate=1.0)))
    by_chaos = _client(simulator(chaos, batch_options=BatchOptions(delay_s=0)))
    for client in (by_rate, by_chaos):
        # When a batch of two runs
        batch, _ = _wait(client, _create(client, [_request("a", 1), _request("b", 2)]).id)
        # Then it completes with both lines failed with a 500 in the error file, and no output file
        assert batch.status == "completed" and batch.output_file_id is None
        assert (batch.request_counts.completed, batch.request_counts.failed) == (0, 2)
        errors = _lines(client, batch.error_file_id)
        assert [e["response"]["status_code"] for e in errors] == [500, 500]
        assert errors[0]["response"]["body"]["error"]["type"] == "server_error"


def test_a_line_error_rate_below_1_fails_some_lines_reproducibly(simulator: Callable[..., str]) -> None:
    def failed(base_url: str) -> list[str]:
        client = _client(base_url)
        batch, _ = _wait(client, _create(client, [_request(f"r{i}", i) for i in range(20)]).id)
        return [e["custom_id"] for e in _lines(client, batch.error_file_id)]

    options = BatchOptions(delay_s=0, line_error_rate=0.3)
    first, second = (failed(simulator(seed=3, batch_options=options)) for _ in range(2))
    assert first == second and 0 < len(first) < 20


def test_a_cancelled_batch_stops_and_lists_what_it_did_not_run(simulator: Callable[..., str]) -> None:
    # Given a slow batch (10 s) of 20 requests that has started
    client = _client(simulator(batch_options=BatchOptions(delay_s=10.0)))
    created = _create(client, [_request(f"r{i}", i) for i in range(20)])
    _wait(client, created.id, ("in_progress",))
    # When it is cancelled
    cancelling = client.batches.cancel(created.id)
    batch, _ = _wait(client, created.id)
    # Then it was cancelling, then cancelled well before its time, the rest listed as cancelled
    assert cancelling.status in ("cancelling", "cancelled") and cancelling.cancelling_at
    assert batch.status == "cancelled" and batch.cancelled_at
    done = batch.request_counts.completed
    assert done < 20 and batch.request_counts.failed == 20 - done
    errors = _lines(client, batch.error_file_id)
    assert len(errors) == 20 - done and {e["error"]["code"] for e in errors} == {"batch_cancelled"}
    # ...and cancelling again is harmless
    assert client.batches.cancel(created.id).status == "cancelled"


def test_a_completed_batch_cannot_be_cancelled(simulator: Callable[..., str]) -> None:
    client = _client(simulator(batch_options=BatchOptions(delay_s=0)))
    batch, _ = _wait(client, _create(client, [_request("x", 1)]).id)
    with pytest.raises(openai.ConflictError):
        client.batches.cancel(batch.id)


def test_batches_list_newest_first_in_cursor_pages(simulator: Callable[..., str]) -> None:
    client = _client(simulator(batch_options=BatchOptions(delay_s=0)))
    created = [_create(client, [_request("x", i)]).id for i in range(3)]
    page = client.batches.list(limit=2)
    assert [b.id for b in page.data] == created[::-1][:2] and page.has_more
    assert [b.id for b in client.batches.list(limit=2)] == created[::-1]  # the SDK follows the cursor


def test_files_are_stored_within_their_caps_and_can_be_deleted(simulator: Callable[..., str]) -> None:
    # Given a store of at most 2 files of at most 2,000 bytes each, and a small file
    client = _client(
        simulator(file_limits=FileLimits(max_file_bytes=2_000, max_total_bytes=10_000, max_files=2))
    )
    body = {"model": "gpt-5-mini", "messages": [{"role": "user", "content": "hi"}]}
    small = [{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": body}]
    # When files are uploaded past the caps, Then a too-large file is a 413 and a third file a 400
    with pytest.raises(openai.APIStatusError) as too_big:
        _upload(client, [_request(f"r{i}", i) for i in range(10)])
    assert too_big.value.status_code == 413
    first, _second = _upload(client, small), _upload(client, small)
    with pytest.raises(openai.BadRequestError, match="maximum of 2 files"):
        _upload(client, small)
    # ...and deleting one makes room again
    assert client.files.delete(first.id).deleted
    assert _upload(client, small).purpose == "batch"
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(first.id)


@pytest.mark.parametrize(
    ("name", "purpose", "message"),
    [("requests.txt", "batch", "Must be .jsonl"), ("requests.jsonl", "fine-tune", "purpose 'batch' only")],
)
def test_uploads_the_batch_api_cannot_use_are_refused(
    simulator: Callable[..., str], name: str, purpose: str, message: str
) -> None:
    client = _client(simulator())
    with pytest.raises(openai.BadRequestError, match=message):
        client.files.create(file=(name, io.BytesIO(b"{}\n")), purpose=purpose)  # type: ignore[arg-type]


def test_unknown_ids_and_unsupported_parameters_are_refused(simulator: Callable[..., str]) -> None:
    client = _client(simulator())
    uploaded = _upload(client, [_request("a", 1)])
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_missing")
    with pytest.raises(openai.NotFoundError):
        client.batches.create(
            input_file_id="file-missing", endpoint="/v1/chat/completions", completion_window="24h"
        )
    with pytest.raises(openai.BadRequestError, match="/v1/chat/completions only"):
        client.batches.create(input_file_id=uploaded.id, endpoint="/v1/embeddings", completion_window="24h")
    with pytest.raises(openai.BadRequestError, match="completion_window"):
        client.batches.create(
            input_file_id=uploaded.id,
            endpoint="/v1/chat/completions",
            completion_window="48h",  # type: ignore[arg-type]
        )


def test_a_required_key_guards_files_and_batches(simulator: Callable[..., str]) -> None:
    base_url = simulator(api_key="sk-right")
    with pytest.raises(openai.AuthenticationError):
        _upload(_client(base_url, "sk-wrong"), [_request("a", 1)])
    with pytest.raises(openai.AuthenticationError):
        _client(base_url, "sk-wrong").batches.list()
    assert _upload(_client(base_url, "sk-right"), [_request("a", 1)]).purpose == "batch"


def test_stats_count_batches_and_their_lines_apart_from_online_requests(
    simulator: Callable[..., str],
) -> None:
    base_url = simulator(batch_options=BatchOptions(delay_s=0))
    client = _client(base_url)
    _wait(client, _create(client, [_request("a", 1), _request("b", 2, messages=[])]).id)
    stats = httpx2.get(f"{base_url}/_stats", timeout=10).json()
    assert stats["requests"] == 0  # batch lines are not online requests
    assert stats["batches"]["statuses"] == {"completed": 1}
    assert stats["batches"]["requests"] == {"total": 2, "completed": 1, "failed": 1}
    assert stats["batches"]["tokens"] > 0 and stats["files"]["files"] == 3
