"""A targeted round: a person names the questions to regenerate; only those change, under the invariants."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from suture.tasks.engine import (
    EngineError,
    Finish,
    JobState,
    RunFull,
    RunSurgical,
    apply_full,
    apply_surgical,
    finish,
    next_action,
    result,
    resume,
    start,
)
from suture.tasks.policy import Policy, Step
from tests.tasks import quizzes as q

POLICY = Policy(
    name="full-then-surgery",
    steps=(
        Step(mode="full"),
        Step(mode="surgical", target="parent"),
        Step(mode="surgical", target="parent", model="gpt-5-mini"),
    ),
)


def delivered() -> JobState:
    """A job delivered valid on its first attempt, as the store hands it back."""
    state = start(q.spec())
    action = next_action(state, POLICY)
    assert isinstance(action, RunFull)
    state = apply_full(state, action, q.reply(q.valid_quiz()))
    stop = next_action(state, POLICY)
    assert isinstance(stop, Finish) and stop.status == "delivered"
    return JobState.model_validate_json(finish(state, stop).model_dump_json())


def reworded(question: dict[str, Any], stem: str) -> dict[str, Any]:
    new = copy.deepcopy(question)
    new["question"] = stem
    return new


def test_only_the_named_questions_are_regenerated_and_the_rest_stay_byte_identical() -> None:
    # Given a delivered quiz and a person naming questions 1 and 4
    state = delivered()
    before = state.best.output if state.best else None
    resumed = resume(state, "Questions 2 and 5 are too easy.", ["/questions/1", "/questions/4"])
    # When the round plans / Then one surgical step is sent for exactly those, carrying the feedback
    action = next_action(resumed, POLICY)
    assert isinstance(action, RunSurgical)
    assert sorted(action.calls) == ["/questions/1", "/questions/4"]
    assert all("too easy" in c.messages[1]["content"] for c in action.calls.values())
    assert "/questions/1/correct_answer_text" in action.preserve  # the contract's invariants still hold
    replies = {
        p: q.slice_reply(reworded(before["questions"][int(p.rsplit("/", 1)[1])], f"Harder question {p}?"))
        for p in action.calls
    }
    done = apply_surgical(resumed, action, replies)
    final = next_action(done, POLICY)
    assert isinstance(final, Finish) and final.status == "delivered", final
    res = result(done, final)
    # And only the targets changed; every other question is byte-identical
    after = res["output"]["questions"]
    assert after[1]["question"] == "Harder question /questions/1?" and after[4]["question"].startswith(
        "Harder"
    )
    assert [json.dumps(x) for i, x in enumerate(after) if i not in (1, 4)] == [
        json.dumps(x) for i, x in enumerate(before["questions"]) if i not in (1, 4)
    ]
    assert "regenerated 2 of 2" in res["reason"] and res["round"] == 1


def test_a_rolled_back_target_is_retried_by_the_next_surgical_step_alone() -> None:
    # Given a targeted round whose first reply changes the correct answer (an invariant)
    state = delivered()
    before = state.best.output if state.best else None
    resumed = resume(state, "Question 3 is ambiguous.", ["/questions/2"])
    first = next_action(resumed, POLICY)
    assert isinstance(first, RunSurgical)
    bad = copy.deepcopy(before["questions"][2])
    bad["correct_answer_text"] = bad["options"][bad["correct_answer_index"]] = "Something else entirely"
    state = apply_surgical(resumed, first, {"/questions/2": q.slice_reply(bad)})
    # When the round goes on / Then the next surgical step retries that target (no full attempt)
    second = next_action(state, POLICY)
    assert isinstance(second, RunSurgical) and list(second.calls) == ["/questions/2"]
    assert second.model == "gpt-5-mini"
    good = reworded(before["questions"][2], "Which one is meant here, unambiguously?")
    done = apply_surgical(state, second, {"/questions/2": q.slice_reply(good)})
    final = next_action(done, POLICY)
    assert isinstance(final, Finish) and final.status == "delivered"
    assert result(done, final)["output"]["questions"][2]["question"].endswith("unambiguously?")


@pytest.mark.parametrize(
    ("targets", "problem"),
    [(["/questions/99"], "not a part of the output"), (["questions/1"], "not a part"), (["/"], "not a part")],
)
def test_targets_that_name_nothing_are_refused(targets: list[str], problem: str) -> None:
    with pytest.raises(EngineError, match=problem):
        resume(delivered(), "fix it", targets)


def test_a_delivered_job_without_targets_still_cannot_be_resumed() -> None:
    with pytest.raises(EngineError, match="only a soft_delivered job"):
        resume(delivered(), "fix it")
