"""Deterministic fixes through the real engine: a fix is an attempt of its own, free, kept only if better."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from suture.contracts.failure import Failure
from suture.contracts.fixer import Fixer
from suture.contracts.quiz import QuizContract
from suture.contracts.registry import REGISTRY, ContractEntry
from suture.tasks.engine import (
    Finish,
    JobState,
    RunFix,
    RunFull,
    RunSurgical,
    apply_fix,
    apply_full,
    next_action,
    result,
    start,
)
from suture.tasks.policy import Policy, Step
from tests.tasks import quizzes as q

CHAIN = Policy(name="chain", steps=(Step(mode="full"), Step(mode="surgical", target="parent")))


def skewed_quiz(n: int = 8, position: int = 1) -> dict[str, Any]:
    """A valid quiz but for its answers: every one at ``position`` (answer_position_skew)."""
    return {"title": "Storage report", "questions": [q.question(i, position) for i in range(n)]}


def first_attempt(state: JobState, policy: Policy, value: Any) -> JobState:
    action = next_action(state, policy)
    assert isinstance(action, RunFull), action
    return apply_full(state, action, q.reply(value, model=action.call.model))


def test_a_fix_is_an_attempt_of_its_own_with_its_patch_and_no_cost() -> None:
    # Given a first output whose only problem is that 8 of 8 answers sit at option 2
    skewed = skewed_quiz()
    state = first_attempt(start(q.spec(8)), CHAIN, skewed)
    assert {f.code for f in state.best.failures} == {"answer_position_skew"}  # type: ignore[union-attr]
    # When the chain goes on
    action = next_action(state, CHAIN)
    # Then it fixes the output without a model before any model step, and the quiz is delivered
    assert isinstance(action, RunFix) and action.codes == ["answer_position_skew"]
    state = apply_fix(state, action)
    final = next_action(state, CHAIN)
    assert isinstance(final, Finish) and final.status == "delivered"
    res = result(state, final)
    fix = res["attempts"][1]
    assert (fix["mode"], fix["model"], fix["cost_usd"], fix["outcome"]) == ("fix", "fixer", 0.0, "valid")
    assert fix["step"] == "fix:answer_position_skew"
    assert fix["targets"] == [f"/questions/{i}" for i in range(4, 8)]
    # ...its RFC 6902 patch reorders options only, and every text survives
    assert fix["patch"] and all(op["op"] == "replace" for op in fix["patch"])
    assert {op["path"].split("/")[3] for op in fix["patch"]} == {"options", "correct_answer_index"}
    for before, after in zip(skewed["questions"], res["output"]["questions"], strict=True):
        assert sorted(after["options"]) == sorted(before["options"])
        assert after["correct_answer_text"] == before["correct_answer_text"]
        assert after["options"][after["correct_answer_index"]] == after["correct_answer_text"]
    assert res["cost_usd"] == pytest.approx(res["attempts"][0]["cost_usd"])


class _BadFixQuiz(QuizContract):
    """A quiz whose skew "fixer" moves the index but not the option: it breaks every answer it touches."""

    name = "quiz_bad_fix"

    def fixers(self) -> Mapping[str, Fixer]:
        def bad(output: Any, failures: Sequence[Failure]) -> Any:
            broken = copy.deepcopy(output)
            for question in broken["questions"]:
                question["correct_answer_index"] = (question["correct_answer_index"] + 1) % 4
            return broken

        return {"answer_position_skew": bad}


@pytest.fixture
def bad_fix_contract(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # The registry refuses a taken name, so the entry is added for this test and removed after it
    monkeypatch.setitem(
        REGISTRY._entries, _BadFixQuiz.name, ContractEntry(_BadFixQuiz.name, _BadFixQuiz, "test")
    )
    yield _BadFixQuiz.name


def test_a_fix_that_scores_worse_is_dropped_and_the_chain_goes_on(bad_fix_contract: str) -> None:
    # Given a contract whose fixer makes things worse, and a skewed first output
    spec = q.spec(8).model_copy(update={"contract": bad_fix_contract, "job_id": "bad-fix"})
    skewed = skewed_quiz()
    state = first_attempt(start(spec), CHAIN, skewed)
    # When the fix is applied
    action = next_action(state, CHAIN)
    assert isinstance(action, RunFix)
    state = apply_fix(state, action)
    # Then it is recorded but dropped: no patch, the failures it would have had, the output unchanged
    record = state.attempts[-1]
    assert (record.mode, record.outcome, record.patch, record.cost_usd) == ("fix", "no_better", [], 0.0)
    assert "answer_text_mismatch" in {f.code for f in record.failures}
    assert state.best is not None and state.best.output == skewed and state.best.n == 1
    # ...and the chain goes on to the model step, never fixing the same output twice
    assert isinstance(next_action(state, CHAIN), RunSurgical)


def test_a_policy_can_turn_fixers_off() -> None:
    # Given a policy without fixers and a skewed first output
    policy = Policy(name="no-fixers", steps=CHAIN.steps, fixers=False)
    state = first_attempt(start(q.spec(8)), policy, skewed_quiz())
    # When the chain goes on, Then the model repairs it (surgery), no fix runs
    action = next_action(state, policy)
    assert isinstance(action, RunSurgical)
    assert list(action.calls) == [f"/questions/{i}" for i in range(4, 8)]


def test_a_fix_counts_toward_neither_the_attempt_cap_nor_the_budget() -> None:
    # Given one model attempt allowed and a tiny budget, and a skewed first output
    policy = Policy(name="once", steps=CHAIN.steps, max_attempts=1, budget_usd=1e-9)
    state = first_attempt(start(q.spec(8)), policy, skewed_quiz())
    # When the chain goes on, Then the free fix still runs and delivers the quiz
    action = next_action(state, policy)
    assert isinstance(action, RunFix)
    state = apply_fix(state, action)
    final = next_action(state, policy)
    assert isinstance(final, Finish) and final.status == "delivered"


def test_a_redelivered_fix_changes_nothing() -> None:
    state = first_attempt(start(q.spec(8)), CHAIN, skewed_quiz())
    action = next_action(state, CHAIN)
    assert isinstance(action, RunFix)
    once = apply_fix(state, action)
    stored = JobState.model_validate_json(once.model_dump_json())
    assert apply_fix(stored, RunFix.model_validate_json(action.model_dump_json())) == stored
