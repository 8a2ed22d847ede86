"""The asyncio producer API through a real worker: enqueue, follow the job's events, await its result."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import suture.aio
from suture.workers.runtime.app import configure
from tests.fixtures.workers import CeleryStack

ROOT = Path(__file__).parents[2]
DOCUMENT = (ROOT / "examples" / "photosynthesis.md").read_text()[:2500]


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_events_follow_a_job_to_its_delivery_and_the_result_matches(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given a stack on the simulated model (biased: quizzes need repairs)
    stack = celery_stack(simulator("realistic", latency_scale=0.0, seed=5))
    configure(stack.settings)

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        # When an asyncio program enqueues a quiz and follows its events (the worker starts once it
        # follows, so it sees them all), then awaits its result
        handle = await suture.aio.enqueue("quiz", DOCUMENT, questions=6, settings=stack.settings)

        async def follow() -> list[dict[str, Any]]:
            return [event async for event in handle.events()]

        following = asyncio.create_task(follow())
        await asyncio.sleep(0.2)
        await asyncio.to_thread(stack.start_worker, concurrency=4)
        events = await asyncio.wait_for(following, 60)
        result = await handle.result(timeout_s=10)
        await suture.aio.close()
        return events, result

    events, result = asyncio.run(scenario())

    # Then the events name the job's model calls and attempts and end with its delivery, text-free
    kinds = [e["type"] for e in events]
    assert kinds[-1] == "delivered" and kinds.count("delivered") == 1
    assert events[-1]["status"] == result["status"]
    assert {"running", "attempt"} <= set(kinds)
    applied = [e for e in events if e["type"] in ("attempt", "repair")]
    assert [e["n"] for e in applied] == [a["n"] for a in result["attempts"]][: len(applied)]
    assert all(e["job_id"] == result["job_id"] for e in events)
    assert "photosynth" not in json.dumps(events).lower()
