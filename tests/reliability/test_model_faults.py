"""A model that misbehaves on 20% of requests (the simulator's ``chaos`` faults): every job still ends
well-defined.

Faults: 429 with Retry-After, 500, replies slower than the client timeout, dropped connections,
malformed JSON, truncation, empty replies and refusals, drawn per request by the seeded simulator.
The checks: each job ends delivered/soft_delivered/refused/failed with a reason; transport retries
are counted on the attempts apart from the attempt numbers, which stay within the policy; a refusal
ends its job at once (the refused attempt is the last one); no worker logs a traceback.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from suture.tasks.policy import load_policy
from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from suture.workers.simulator import get_profile
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import FINAL, varied_document
from tests.reliability.soak_report import write_section

pytestmark = pytest.mark.integration

FAULT_SHARE = 0.20
SEED = 11
LATENCY_SCALE = 0.01
CLIENT_TIMEOUT_S = 1.0
TRANSPORT_MAX_RETRIES = 3
ENV = {
    "SUTURE_CLIENT__TIMEOUT_S": str(CLIENT_TIMEOUT_S),
    "SUTURE_CLIENT__TRANSPORT_MAX_RETRIES": str(TRANSPORT_MAX_RETRIES),
    "SUTURE_CLIENT__BACKOFF_BASE_S": "0.05",
    "SUTURE_CLIENT__BACKOFF_MAX_S": "0.5",
}


def chaos_at(share: float) -> Any:
    """The chaos profile with its fault mix scaled to ``share`` of requests, and "slow" beyond the client
    timeout."""
    chaos = get_profile("chaos")
    scale = share / chaos.faults.total()
    rates = {f.name: getattr(chaos.faults, f.name) * scale for f in dataclasses.fields(chaos.faults)}
    # A slow reply takes slow_extra_s x latency_scale: make that 5x the client timeout, so it times out.
    slow_extra_s = 5 * CLIENT_TIMEOUT_S / LATENCY_SCALE
    return dataclasses.replace(chaos.with_faults(**rates), slow_extra_s=slow_extra_s)


def refusal_problems(result: dict[str, Any]) -> list[str]:
    """Ways a job broke "refusals are never retried" (empty when it kept the rule)."""
    outcomes = [a["outcome"] for a in result["attempts"]]
    refused = [i for i, outcome in enumerate(outcomes) if outcome == "refused"]
    problems = []
    if refused and refused != [len(outcomes) - 1]:
        problems.append(f"attempts after a refusal: outcomes {outcomes}")
    if refused and result["status"] != "refused":
        problems.append(f"a refused full attempt ended {result['status']}")
    if result["status"] == "refused" and not refused:
        problems.append(f"status refused without a refused attempt: outcomes {outcomes}")
    return problems


@pytest.mark.parametrize(
    "jobs",
    [
        pytest.param(160, id="ci", marks=pytest.mark.timeout(240)),
        pytest.param(3000, id="soak", marks=[pytest.mark.soak, pytest.mark.timeout(3600)]),
    ],
)
def test_chaos_faults_end_every_job_in_a_defined_status(
    jobs: int, celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given a worker on a simulated model that faults on 20% of requests
    # The deadline grows with the batch, so queueing time alone never hands a job to the watchdog.
    env = ENV | {"SUTURE_WORKER__JOB_DEADLINE_S": str(max(120, jobs // 5))}
    stack = celery_stack(simulator(chaos_at(FAULT_SHARE), latency_scale=LATENCY_SCALE, seed=SEED), **env)
    configure(stack.settings)
    worker = stack.start_worker(concurrency=40)
    policy = load_policy(None, stack.settings)
    # When a batch of jobs runs through it
    handles = [enqueue("quiz", varied_document(i), questions=4, settings=stack.settings) for i in range(jobs)]
    results = [h.result(timeout_s=180) for h in handles]
    # Then every job ended in a defined status, with a reason
    statuses = Counter(r["status"] for r in results)
    assert set(statuses) <= FINAL, statuses
    assert all(r["reason"] for r in results)
    # ...transport retries are counted apart from the attempts, which stay within the policy
    attempts = [a for r in results for a in r["attempts"]]
    assert sum(a["transport_retries"] for a in attempts) > 0
    # (the cap counts model attempts: a deterministic fix calls no model and is free and uncapped)
    model_attempts = [[a for a in r["attempts"] if a["mode"] != "fix"] for r in results]
    assert max(len(m) for m in model_attempts) <= policy.attempt_cap
    assert all([a["n"] for a in r["attempts"]] == list(range(1, len(r["attempts"]) + 1)) for r in results)
    full_retries = [a["transport_retries"] for a in attempts if a["mode"] == "full"]
    assert max(full_retries) <= TRANSPORT_MAX_RETRIES
    outcomes = Counter(a["outcome"] for a in attempts)
    assert outcomes["unparseable"] > 0, outcomes
    retried = worker.log()
    for transport_fault in ("HTTP 429", "HTTP 500", "APITimeoutError", "APIConnectionError"):
        assert transport_fault in retried, f"no transport retry after {transport_fault}"
    # ...a refusal ends its job at once, never retried
    assert statuses["refused"] > 0, "no refusal in the run: the rule was not exercised"
    broken = {r["job_id"]: refusal_problems(r) for r in results if refusal_problems(r)}
    assert not broken, broken
    # ...and nothing reached a log as a traceback
    assert "Traceback" not in worker.log()
    assert not [r["reason"] for r in results if r["reason"].startswith("internal error")]
    if jobs >= 1000:
        write_section(
            "Model faults (chaos profile)",
            {"jobs": jobs, "fault share": FAULT_SHARE, "seed": SEED, "latency_scale": LATENCY_SCALE, **env},
            {
                "statuses": dict(statuses),
                "attempts": len(attempts),
                "attempt outcomes": dict(outcomes),
                "transport retries": sum(a["transport_retries"] for a in attempts),
                "refused jobs with an attempt after the refusal": 0,
                "internal errors / tracebacks": 0,
            },
        )
