"""``suture resume JOB --target /questions/N --feedback``: a targeted round through real Celery workers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from suture.workers.cli.policy_arg import policy_arg
from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration

# One full attempt; its surgical step runs on its own only for a single failure, so a quiz with two
# imbalanced questions is soft-delivered, and only a person's target sends the step.
POLICY = """
description: "full, and a surgical step only a person's target sends"
feedback: false
examples: false
fixers: false
steps:
  - {mode: full, model: gpt-5-nano, reasoning_effort: low}
  - {mode: surgical, model: gpt-5-nano, reasoning_effort: minimal, max_failures: 1, target: parent}
"""


def test_a_targeted_resume_regenerates_only_its_target_through_the_workers(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any], tmp_path: Path
) -> None:
    # Given a job soft-delivered with questions 1 and 2 imbalanced
    policy = tmp_path / "targeted.yaml"
    policy.write_text(POLICY)
    model = scripted_model(questions=4, imbalanced=2)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    stack.start_worker(concurrency=4)
    chosen = policy_arg(str(policy), stack.settings)  # a user's file travels with the job as data
    handle = enqueue(
        "quiz",
        document(4),
        questions=4,
        policy=chosen.name,
        policy_rules=chosen.rules,
        settings=stack.settings,
    )
    first = handle.result(timeout_s=60)
    assert first["status"] == "soft_delivered", first["reason"]
    # When a person names question 1 from the CLI
    resumed = stack.cli("resume", handle.id, "--target", "/questions/0", "--feedback", "Balance question 1.")
    assert (resumed.returncode, resumed.stdout) == (0, f"{handle.id}\n"), resumed.stderr
    result = handle.result(timeout_s=60)
    # Then one surgical slice ran for it alone (question 2 still fails), the others are byte-identical
    assert (result["status"], result["round"]) == ("soft_delivered", 1), result["reason"]
    assert {f["pointer"].split("/")[2] for f in result["failures"]} == {"1"}
    last = result["attempts"][-1]
    assert (last["mode"], [s["pointer"] for s in last["slices"]]) == ("surgical", ["/questions/0"])
    assert model.requests == {"full": 1, "slice": 1}
    before, after = first["output"]["questions"], result["output"]["questions"]
    assert after[0] != before[0]
    assert [json.dumps(q) for q in after[1:]] == [json.dumps(q) for q in before[1:]]


def test_a_target_that_names_nothing_is_refused_in_one_line(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any], tmp_path: Path
) -> None:
    policy = tmp_path / "targeted.yaml"
    policy.write_text(POLICY)
    stack = celery_stack(scripted_model(questions=4, imbalanced=2).base_url)
    configure(stack.settings)
    stack.start_worker(concurrency=4)
    chosen = policy_arg(str(policy), stack.settings)  # a user's file travels with the job as data
    handle = enqueue(
        "quiz",
        document(4),
        questions=4,
        policy=chosen.name,
        policy_rules=chosen.rules,
        settings=stack.settings,
    )
    assert handle.result(timeout_s=60)["status"] == "soft_delivered"
    refused = stack.cli("resume", handle.id, "--target", "/questions/9", "--feedback", "x")
    assert refused.returncode == 2 and "not a part of the output" in refused.stderr, refused.stderr
    assert handle.status() == "soft_delivered"
