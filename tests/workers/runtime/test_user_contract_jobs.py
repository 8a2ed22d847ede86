"""User contracts in real worker jobs: an entry point, a suture.yaml class, a contract file.

One Celery worker process gets the docs' package on its PYTHONPATH (a ``.dist-info`` with entry
points, nothing installed) and ``SUTURE_CONTRACTS`` naming a class and a file (``user_stack``); the
simulator (a simulation) drops fields and grows texts often, so each job needs a surgical repair, whose
patch must touch only the failing units and keep each unit's preserved paths. A contract whose rule
raises fails its job, naming the contract, and the worker goes on.
"""

from __future__ import annotations

from typing import Any

import pytest

from suture.contracts.failure import Failure
from suture.contracts.registry import build_contract
from suture.workers.producer import enqueue
from tests.contract_packages import DOCUMENT, user_stack
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration
__all__ = ["user_stack"]  # the fixture this module uses


def _units(contract: str, result: dict[str, Any], n: int) -> set[str]:
    """The units the failures of attempt ``n`` (1-based) are repaired at."""
    built = build_contract(contract, result["contract_params"], source=DOCUMENT)
    return {built.repair_target(Failure(**f)) for f in result["attempts"][n - 1]["failures"]}


@pytest.mark.parametrize(
    ("contract", "preserved"), [("glossary", "term"), ("terms", "term"), ("cards", "topic")]
)
def test_a_user_contracts_job_is_repaired_surgically_touching_only_failing_units(
    user_stack: CeleryStack, contract: str, preserved: str
) -> None:
    result = enqueue(contract, DOCUMENT, settings=user_stack.settings).result(timeout_s=90)
    assert result["status"] == "delivered", result["reason"]
    assert result["simulated"] is True and result["contract"] == contract
    attempts = result["attempts"]
    surgical = [a for a in attempts if a["mode"] == "surgical" and a["patch"]]
    assert surgical, f"no surgical repair: {[(a['mode'], a['failures']) for a in attempts]}"
    first = attempts[0]
    for attempt in surgical:
        # Only the units the previous attempt's failures name were regenerated...
        assert set(attempt["targets"]) <= _units(contract, result, attempt["n"] - 1)
        for op in attempt["patch"]:
            assert any(op["path"] == t or op["path"].startswith(t + "/") for t in attempt["targets"]), op
            # ... and a preserved field is never changed by the repair of its unit
            assert not op["path"].endswith("/" + preserved) or op["op"] == "add", op
    assert first["mode"] == "full"


def test_a_contract_whose_rule_raises_fails_its_job_naming_it_and_the_worker_goes_on(
    user_stack: CeleryStack,
) -> None:
    failed = enqueue("raising", DOCUMENT, settings=user_stack.settings).result(timeout_s=60)
    assert failed["status"] == "failed"
    assert "contract 'raising' is broken: a rule raised ZeroDivisionError" in failed["reason"]
    after = enqueue("glossary", DOCUMENT, settings=user_stack.settings).result(timeout_s=90)
    assert after["status"] == "delivered"
    assert all(w.process.poll() is None for w in user_stack.workers)
