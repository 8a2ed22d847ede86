"""The pure engine, driven with scripted model replies exactly as a driver would feed them."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from suture.config.settings import load_settings
from suture.tasks.engine import (
    EngineError,
    Finish,
    JobState,
    RunFull,
    RunSurgical,
    apply_full,
    apply_surgical,
    next_action,
    result,
    start,
)
from suture.tasks.policy import Policy, Step, load_policy
from tests.tasks import quizzes as q


@pytest.fixture(scope="module")
def default_policy() -> Policy:
    return load_policy("default", load_settings())


@pytest.fixture(scope="module")
def full_only() -> Policy:
    return load_policy("full-only", load_settings())


def full(state: JobState, policy: Policy, value: Any = None, **kwargs: Any) -> JobState:
    action = next_action(state, policy)
    assert isinstance(action, RunFull), action
    return apply_full(state, action, q.reply(value, model=action.call.model, **kwargs))


def finished(state: JobState, policy: Policy) -> dict[str, Any]:
    action = next_action(state, policy)
    assert isinstance(action, Finish), action
    return result(state, action)


def fixed_question(question: dict[str, Any]) -> dict[str, Any]:
    """The question with distractors as long as its (long) correct option: balanced, answer kept."""
    fixed = copy.deepcopy(question)
    fixed["options"] = [
        o if j == fixed["correct_answer_index"] else f"{o}, the small southern depot beside the new rail yard"
        for j, o in enumerate(fixed["options"])
    ]
    return fixed


def test_first_pass_delivery_makes_one_call_and_no_diff(default_policy: Policy) -> None:
    # Given a model whose first output is valid
    state = full(start(q.spec()), default_policy, q.valid_quiz())
    # When the chain decides
    res = finished(state, default_policy)
    # Then it is delivered after one attempt, with no patch and the tier-1 example on the first prompt
    assert res["status"] == "delivered"
    assert res["output"] == q.valid_quiz()
    assert len(res["attempts"]) == 1
    attempt = res["attempts"][0]
    assert attempt["patch"] == [] and attempt["outcome"] == "valid" and attempt["example_tier"] == 1
    assert res["failures"] == [] and res["simulated"] is False


def test_every_call_of_a_job_carries_its_id_as_the_cache_key_outside_the_fingerprint(
    default_policy: Policy,
) -> None:
    # Given a job whose first output has two failing questions
    first = next_action(start(q.spec()), default_policy)
    assert isinstance(first, RunFull)
    state = full(start(q.spec()), default_policy, q.imbalance(q.valid_quiz(), [1, 4]))
    surgical = next_action(state, default_policy)
    assert isinstance(surgical, RunSurgical)
    # Then the full call and every slice call carry the job id as their prompt-cache key
    assert first.call.cache_key == "job-1"
    assert {c.cache_key for c in surgical.calls.values()} == {"job-1"}
    # And the key is no part of the prompt: another job's identical prompt has the same fingerprint
    other = next_action(start(q.spec().model_copy(update={"job_id": "job-2"})), default_policy)
    assert isinstance(other, RunFull)
    assert other.call.cache_key == "job-2" and other.fingerprint == first.fingerprint


def test_every_call_of_a_bulk_job_carries_its_class_outside_the_fingerprint(default_policy: Policy) -> None:
    # Given a bulk job whose first output has two failing questions
    spec = q.spec().model_copy(update={"priority": "bulk"})
    first = next_action(start(spec), default_policy)
    assert isinstance(first, RunFull)
    state = full(start(spec), default_policy, q.imbalance(q.valid_quiz(), [1, 4]))
    surgical = next_action(state, default_policy)
    assert isinstance(surgical, RunSurgical)
    # Then its full call and every slice call are bulk calls (they leave the interactive budget share)
    assert first.call.priority == "bulk"
    assert {c.priority for c in surgical.calls.values()} == {"bulk"}
    # And the class is no part of the prompt: an interactive twin has the same fingerprint
    twin = next_action(start(q.spec()), default_policy)
    assert isinstance(twin, RunFull)
    assert twin.call.priority == "interactive" and twin.fingerprint == first.fingerprint


def test_escalation_to_the_next_model_after_unparseable_output(full_only: Policy) -> None:
    # Given nano replies with garbage
    state = full(start(q.spec()), full_only, text="Sure! Here is your quiz: {")
    # When the chain continues
    action = next_action(state, full_only)
    # Then it escalates to mini, and mini's valid output is delivered
    assert isinstance(action, RunFull) and action.call.model == "gpt-5-mini"
    state = apply_full(state, action, q.reply(q.valid_quiz(), model="gpt-5-mini"))
    res = finished(state, full_only)
    assert res["status"] == "delivered"
    assert [a["model"] for a in res["attempts"]] == ["gpt-5-nano", "gpt-5-mini"]
    assert res["attempts"][0]["outcome"] == "unparseable"


@pytest.mark.parametrize("failing", [[3], [0, 7], [1, 5, 9], [2, 4, 11, 14]])
def test_surgical_repair_leaves_other_questions_byte_identical(
    default_policy: Policy, failing: list[int]
) -> None:
    # Given a first output with k imbalanced questions
    broken = q.imbalance(q.valid_quiz(), failing)
    state = full(start(q.spec()), default_policy, broken)
    # When the surgical step runs, one slice per failing question: its option list, the smallest failing path
    action = next_action(state, default_policy)
    assert isinstance(action, RunSurgical)
    assert list(action.calls) == [f"/questions/{i}/options" for i in failing]
    replies = {
        f"/questions/{i}/options": q.slice_reply(fixed_question(broken["questions"][i])["options"])
        for i in failing
    }
    state = apply_surgical(state, action, replies)
    res = finished(state, default_policy)
    # Then the quiz is delivered, the untouched questions byte-identical, the patch only inside targets
    assert res["status"] == "delivered"
    for i, question in enumerate(res["output"]["questions"]):
        if i not in failing:
            assert json.dumps(question) == json.dumps(broken["questions"][i])
    surgical = res["attempts"][1]
    assert surgical["mode"] == "surgical" and surgical["targets"] == list(action.calls)
    assert all(
        any(op["path"].startswith(f"/questions/{i}/options/") for i in failing) for op in surgical["patch"]
    )


def test_preserve_violation_is_rolled_back_alone() -> None:
    # Given two failing questions, and a slice for /questions/3 that changes its correct answer (the
    # quiz contract keeps a repaired question's correct_answer_text; the policy names no invariant)
    policy = Policy(name="p", steps=(Step(mode="full"), Step(mode="surgical", target="parent")))
    broken = q.imbalance(q.valid_quiz(), [3, 6])
    state = full(start(q.spec()), policy, broken)
    action = next_action(state, policy)
    assert isinstance(action, RunSurgical)
    assert action.preserve == ["/questions/3/correct_answer_text", "/questions/6/correct_answer_text"]
    bad = fixed_question(action.sent_values["/questions/3"])
    bad["correct_answer_index"] = 0
    bad["correct_answer_text"] = bad["options"][0]
    replies = {
        "/questions/3": q.slice_reply(bad),
        "/questions/6": q.slice_reply(fixed_question(action.sent_values["/questions/6"])),
    }
    # When the slices are merged
    state = apply_surgical(state, action, replies)
    record = state.attempts[-1]
    # Then only /questions/3 is rolled back (a preserve failure), /questions/6 is fixed
    assert record.rolled_back == ["/questions/3"]
    assert any(f.kind == "preserve" for f in record.failures)
    assert state.best is not None
    assert state.best.output["questions"][3] == broken["questions"][3]
    assert state.best.output["questions"][6] == fixed_question(broken["questions"][6])
    assert [f.pointer for f in state.best.failures] == ["/questions/3/options"]


def test_slice_that_breaks_a_whole_output_rule_is_not_kept() -> None:
    # Given 4 questions with answers at positions 0,1,2,2 and a policy without preserve rules of its own
    policy = Policy(name="no-preserve", steps=(Step(mode="full"), Step(mode="surgical", target="parent")))
    quiz = {"title": "Storage report", "questions": [q.question(i, p) for i, p in enumerate([0, 1, 2, 2])]}
    broken = q.imbalance(quiz, [0])
    state = full(start(q.spec(4)), policy, broken)
    action = next_action(state, policy)
    assert isinstance(action, RunSurgical)
    # When the slice fixes the imbalance but moves the answer (its text kept) to position 2: 3 of 4 there
    moved = fixed_question(broken["questions"][0])
    options = moved["options"]
    options[0], options[2] = options[2], options[0]
    moved["correct_answer_index"] = 2
    state = apply_surgical(state, action, {"/questions/0": q.slice_reply(moved)})
    # Then re-validating the whole quiz finds the skew, the merge is not kept, the old output stands
    record = state.attempts[-1]
    assert "answer_position_skew" in {f.code for f in record.failures}
    assert record.outcome == "no_better" and record.patch == []
    assert state.best is not None and state.best.output == broken
    assert finished(state, policy)["status"] == "soft_delivered"


@pytest.mark.parametrize(
    "refusal_reply",
    [
        {"text": "", "refusal": "I can't help with that."},
        {"text": "", "finish_reason": "content_filter"},
    ],
)
def test_refusal_stops_the_chain_at_once(default_policy: Policy, refusal_reply: dict[str, Any]) -> None:
    # Given the first reply is a refusal
    state = full(start(q.spec()), default_policy, **refusal_reply)
    # When the chain decides
    res = finished(state, default_policy)
    # Then it stops refused, after one attempt, with no output
    assert res["status"] == "refused" and res["output"] is None
    assert len(res["attempts"]) == 1 and res["attempts"][0]["outcome"] == "refused"
    assert [f["kind"] for f in res["failures"]] == ["refusal"]


@pytest.mark.parametrize(
    ("first", "accepted", "tier"),
    [
        ({"text": '{"title": "Storage', "finish_reason": "length"}, False, 1),
        ({"text": "not json at all"}, False, 1),
        ({"value": {"title": "x"}}, True, 1),  # schema failure: structure first, even with accepted outputs
        ({"value": "imbalanced"}, True, 2),  # rule failure: a real accepted output first
        ({"value": "imbalanced"}, False, 1),
    ],
)
def test_retry_attaches_the_example_tier_for_the_failure_kind(
    first: dict[str, Any], accepted: bool, tier: int
) -> None:
    from suture.contracts.examples import AcceptedOutput

    # Given a two-step full chain with feedback and examples, and a first reply failing in one way
    policy = Policy(name="two", steps=(Step(mode="full"), Step(mode="full", model="gpt-5-mini")))
    if first.get("value") == "imbalanced":
        first = {"value": q.imbalance(q.valid_quiz(), [1])}
    state = full(start(q.spec()), policy, **first)
    pool = [AcceptedOutput(output=q.valid_quiz(), repaired_kinds=["rule"])] if accepted else []
    # When the retry is planned
    action = next_action(state, policy, accepted=pool)
    # Then its prompt carries feedback and the expected example tier
    assert isinstance(action, RunFull) and action.example is not None
    assert action.example.tier == tier
    user = action.call.messages[1]["content"]
    assert "<failures>" in user and "<example>" in user and "keep everything else unchanged" in user


def test_budget_exhaustion_soft_delivers_instead_of_escalating(default_policy: Policy) -> None:
    # Given a policy whose budget the first attempt nearly spends, and an output failing a whole-output check
    policy = Policy(name="tight", steps=default_policy.steps, budget_usd=0.0002)
    broken = q.valid_quiz()
    broken["questions"] = broken["questions"][:14]  # question_count failure: not fixable surgically
    state = full(start(q.spec()), policy, broken, output_tokens=400)
    # When the chain decides
    res = finished(state, policy)
    # Then it stops on the budget and soft-delivers the output it has
    assert res["status"] == "soft_delivered" and "budget" in res["reason"]
    assert res["cause"] == "budget"
    assert len(res["attempts"]) == 1


def test_soft_delivery_returns_the_best_attempt_not_the_last(full_only: Policy) -> None:
    # Given nano's output with 1 failure, then mini's with 3 failures
    better = q.imbalance(q.valid_quiz(), [0])
    worse = q.imbalance(q.valid_quiz(), [0, 1, 2])
    state = full(start(q.spec()), full_only, better)
    state = full(state, full_only, worse)
    # When the steps are exhausted
    res = finished(state, full_only)
    # Then the best (first) output is soft-delivered with its remaining failures
    assert res["status"] == "soft_delivered"
    assert res["output"] == better
    assert [f["pointer"] for f in res["failures"]] == ["/questions/0/options"]
    assert "#1" in res["reason"]
    assert res["cause"] == "exhausted"


def test_fully_unparseable_run_fails_with_nothing_delivered(full_only: Policy) -> None:
    state = full(start(q.spec()), full_only, text="{oops")
    state = full(state, full_only, text="")
    res = finished(state, full_only)
    assert res["status"] == "failed" and res["output"] is None
    assert "no attempt produced a parseable output" in res["reason"]
    assert res["cause"] == "invalid_output"
    assert {f["kind"] for f in res["failures"]} <= {"parse", "truncated", "empty"}


def test_identical_prompt_is_never_sent_twice_to_the_same_model() -> None:
    # Given two identical full steps without feedback (their prompts would be byte-identical)
    policy = Policy(
        name="repeat", feedback=False, examples=False, steps=(Step(mode="full"), Step(mode="full"))
    )
    state = full(start(q.spec()), policy, q.imbalance(q.valid_quiz(), [0]))
    # When the chain continues
    res = finished(state, policy)
    # Then the second step is skipped with the reason recorded
    assert res["status"] == "soft_delivered" and len(res["attempts"]) == 1
    assert "identical prompt" in res["skipped"][0]["reason"]


def test_surgery_retries_an_item_once_with_its_rejected_repair_then_stops() -> None:
    # Given three identical surgical nano steps, and a slice that keeps coming back unchanged
    surgical = Step(mode="surgical", target="parent")
    policy = Policy(
        name="p",
        steps=(Step(mode="full"), surgical, surgical, surgical, Step(mode="full", model="gpt-5-mini")),
    )
    broken = q.imbalance(q.valid_quiz(), [4])
    unchanged = {"/questions/4": q.slice_reply(broken["questions"][4])}
    state = full(start(q.spec()), policy, broken)
    first = next_action(state, policy)
    assert isinstance(first, RunSurgical)
    state = apply_surgical(state, first, unchanged)
    # When the chain continues
    second = next_action(state, policy)
    # Then the second surgical step re-asks with the rejected repair in the prompt (a new prompt)
    assert isinstance(second, RunSurgical)
    prompt = second.calls["/questions/4"].messages[-1]["content"]
    assert "<rejected_repairs>" in prompt
    assert "<rejected_repairs>" not in first.calls["/questions/4"].messages[-1]["content"]
    state = apply_surgical(state, second, unchanged)
    # And when the same repair comes back again, the third (now byte-identical) step is skipped
    third = next_action(state, policy)
    assert isinstance(third, RunFull) and third.call.model == "gpt-5-mini"
    assert "already sent" in third.skipped[0].reason


def test_unparseable_and_error_slices_are_just_not_applied(default_policy: Policy) -> None:
    broken = q.imbalance(q.valid_quiz(), [1, 2, 3])
    state = full(start(q.spec()), default_policy, broken)
    action = next_action(state, default_policy)
    assert isinstance(action, RunSurgical)
    replies = {
        "/questions/1/options": q.reply(text="{not json"),
        "/questions/2/options": q.reply(text="", error="HTTP 503 after retries", error_kind="unavailable"),
        "/questions/3/options": q.slice_reply(fixed_question(broken["questions"][3])["options"]),
    }
    state = apply_surgical(state, action, replies)
    statuses = {s.pointer: s.status for s in state.attempts[-1].slices}
    assert statuses == {
        "/questions/1/options": "unparseable",
        "/questions/2/options": "transport_error",
        "/questions/3/options": "applied",
    }
    assert state.best is not None and len(state.best.failures) == 2


def test_terminal_transport_error_fails_the_job(default_policy: Policy) -> None:
    state = full(start(q.spec()), default_policy, text="", error="invalid api key", error_kind="auth")
    res = finished(state, default_policy)
    assert res["status"] == "failed" and "auth" in res["reason"]
    assert res["cause"] == "auth"


@pytest.mark.parametrize(("kind", "cause"), [("bad_request", "bad_request"), ("not_found", "bad_request")])
def test_a_rejected_request_fails_the_job_with_cause_bad_request(
    default_policy: Policy, kind: str, cause: str
) -> None:
    state = full(start(q.spec()), default_policy, text="", error="HTTP 400", error_kind=kind)
    assert finished(state, default_policy)["cause"] == cause


def test_a_provider_down_for_every_attempt_fails_the_job_as_provider_unavailable(full_only: Policy) -> None:
    # Given every attempt of the chain ended in a retryable transport error (retries exhausted)
    state = full(start(q.spec()), full_only, text="", error="HTTP 503", error_kind="unavailable")
    state = full(state, full_only, text="", error="HTTP 503", error_kind="unavailable")
    # Then the job fails, and says the provider was unavailable rather than the output invalid
    res = finished(state, full_only)
    assert (res["status"], res["cause"]) == ("failed", "provider_unavailable")


def test_a_delivered_job_has_no_cause(default_policy: Policy) -> None:
    state = full(start(q.spec()), default_policy, q.valid_quiz())
    assert finished(state, default_policy)["cause"] is None


def test_applying_an_attempt_twice_is_a_no_op_and_state_round_trips(default_policy: Policy) -> None:
    # Given a state after one attempt, serialised and read back (as Redis would store it)
    state = start(q.spec())
    action = next_action(state, default_policy)
    assert isinstance(action, RunFull)
    reply = q.reply(q.imbalance(q.valid_quiz(), [2]))
    once = apply_full(state, action, reply)
    stored = JobState.model_validate_json(once.model_dump_json())
    # When the same attempt is applied again (a redelivered task)
    twice = apply_full(stored, RunFull.model_validate_json(action.model_dump_json()), reply)
    # Then nothing changes; an action from the future is a programmer error
    assert twice == stored
    with pytest.raises(EngineError, match="out of order"):
        apply_full(state, action.model_copy(update={"n": 5}), reply)


def test_max_attempts_one_means_one_try(default_policy: Policy) -> None:
    policy = Policy(name="once", steps=default_policy.steps, max_attempts=1)
    state = full(start(q.spec()), policy, q.imbalance(q.valid_quiz(), [0]))
    res = finished(state, policy)
    assert res["status"] == "soft_delivered" and "max_attempts (1)" in res["reason"]


@pytest.mark.parametrize("store_prompts", [True, False])
def test_prompts_are_redacted_and_optional_in_the_trace(default_policy: Policy, store_prompts: bool) -> None:
    secret = "sk-test-SECRET-1234567890"
    spec = q.spec(store_prompts=store_prompts).model_copy(update={"source": q.source() + f"key {secret}\n"})
    action = next_action(start(spec), default_policy, secrets=[secret])
    assert isinstance(action, RunFull)
    assert secret not in json.dumps(action.call.model_dump())
    state = apply_full(start(spec), action, q.reply(q.valid_quiz()))
    res = result(state, next_action(state, default_policy))  # type: ignore[arg-type]
    assert secret not in json.dumps(res)
    prompt = res["attempts"][0]["prompt"]
    assert (prompt is not None) == store_prompts
    if prompt:
        assert "[source document," in prompt[1]["content"]
