"""The simulator's files and batches kept in a file across a restart (the embedded stack of
`suture batch --batch-api`), through the openai SDK over real HTTP."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

from openai import OpenAI

from suture.config.settings import Settings, load_settings
from suture.workers.simulator.configure import start_from_settings

from .course import quiz_format, quiz_messages


def _settings(delay_s: float) -> Settings:
    base = load_settings()
    sim = base.simulator.model_copy(
        update={
            "latency_scale": 0.0,
            "batch_api": base.simulator.batch_api.model_copy(update={"delay_s": delay_s}),
        }
    )
    return base.model_copy(update={"simulator": sim})


def _line(custom_id: str) -> str:
    body = {
        "model": "gpt-5-nano",
        "messages": quiz_messages(questions=2),
        "response_format": quiz_format(),
    }
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body})


def test_a_batch_running_when_the_simulator_stops_runs_again_and_ends_after_a_restart(tmp_path: Path) -> None:
    # Given a simulator keeping its batches in a file, holding a finished batch and one still running
    state = tmp_path / "simulator-batches.json"
    first = start_from_settings(_settings(0.2), batch_state_file=state)
    client = OpenAI(base_url=first.base_url, api_key="unused", max_retries=0, timeout=30)
    upload = client.files.create(file=("a.jsonl", io.BytesIO(_line("a").encode())), purpose="batch")
    done = client.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    while client.batches.retrieve(done.id).status != "completed":
        time.sleep(0.05)
    first.stop()
    second = start_from_settings(_settings(60.0), batch_state_file=state)
    client = OpenAI(base_url=second.base_url, api_key="unused", max_retries=0, timeout=30)
    upload = client.files.create(file=("b.jsonl", io.BytesIO(_line("b").encode())), purpose="batch")
    running = client.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
    )

    # When it stops, and starts again on the same file
    second.stop()
    third = start_from_settings(_settings(0.2), batch_state_file=state)
    try:
        client = OpenAI(base_url=third.base_url, api_key="unused", max_retries=0, timeout=30)

        # Then the finished batch is there as it was, its output readable
        kept = client.batches.retrieve(done.id)
        assert kept.status == "completed" and kept.output_file_id
        assert json.loads(client.files.content(kept.output_file_id).text)["custom_id"] == "a"
        # ...and the running one, under its own id, ran again to its end
        deadline = time.monotonic() + 30
        while client.batches.retrieve(running.id).status != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        again = client.batches.retrieve(running.id)
        assert again.request_counts is not None and again.request_counts.completed == 1
        assert json.loads(client.files.content(again.output_file_id or "").text)["custom_id"] == "b"
    finally:
        third.stop()
