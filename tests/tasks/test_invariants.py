"""Slices the contract makes safe, through the real engine: invariants per target kind, stated and
enforced."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from suture.config.settings import load_settings
from suture.contracts.quiz import QuizContract
from suture.tasks.engine import RunFull, RunSurgical, apply_full, apply_surgical, next_action, start
from suture.tasks.policy import Policy, Step, policy_from_mapping
from suture.tasks.policy_choice import PolicyMismatch, check_configured_policies, check_fit
from tests.tasks import quizzes as q
from tests.tasks.test_engine import fixed_question

SMALLEST = Policy(name="smallest", steps=(Step(mode="full"), Step(mode="surgical", target="smallest")))


def first(state: Any, policy: Policy, value: Any) -> Any:
    action = next_action(state, policy)
    assert isinstance(action, RunFull)
    return apply_full(state, action, q.reply(value))


def test_the_smallest_slice_of_an_imbalanced_question_is_its_option_list() -> None:
    # Given two questions with imbalanced options
    state = first(start(q.spec()), SMALLEST, q.imbalance(q.valid_quiz(), [3, 6]))
    # When the surgical step is planned
    action = next_action(state, SMALLEST)
    # Then only the option lists are regenerated, each pinned at its correct option
    assert isinstance(action, RunSurgical)
    assert list(action.calls) == ["/questions/3/options", "/questions/6/options"]
    assert action.preserve == ["/questions/3/options/3", "/questions/6/options/2"]
    prompt = action.calls["/questions/3/options"].messages[-1]["content"]
    correct = q.imbalance(q.valid_quiz(), [3])["questions"][3]["correct_answer_text"]
    assert f'- /questions/3/options/3 must stay exactly "{correct}"' in prompt


def test_an_options_slice_that_moves_the_correct_answer_is_rolled_back_alone() -> None:
    # Given two imbalanced questions, repaired by their option lists
    broken = q.imbalance(q.valid_quiz(), [3, 6])
    state = first(start(q.spec()), SMALLEST, broken)
    action = next_action(state, SMALLEST)
    assert isinstance(action, RunSurgical)
    # When the slice of question 3 balances its options but moves the correct one to another position
    moved = fixed_question(broken["questions"][3])["options"]
    moved[3], moved[0] = moved[0], moved[3]
    replies = {
        "/questions/3/options": q.slice_reply(moved),
        "/questions/6/options": q.slice_reply(fixed_question(broken["questions"][6])["options"]),
    }
    state = apply_surgical(state, action, replies)
    # Then that slice alone is rolled back (a preserve failure at the pinned option), question 6 is fixed
    record = state.attempts[-1]
    assert record.rolled_back == ["/questions/3/options"]
    assert [(f.code, f.pointer) for f in record.failures if f.kind == "preserve"] == [
        ("preserve_violated", "/questions/3/options/3")
    ]
    assert state.best is not None
    assert state.best.output["questions"][3] == broken["questions"][3]
    assert state.best.output["questions"][6] == fixed_question(broken["questions"][6])
    assert [f.pointer for f in state.best.failures] == ["/questions/3/options"]


def test_a_question_slice_keeps_its_answer_text_and_may_move_it_with_the_options() -> None:
    # Given two failing questions repaired whole
    parent = Policy(name="parent", steps=(Step(mode="full"), Step(mode="surgical", target="parent")))
    broken = q.imbalance(q.valid_quiz(), [3, 6])
    state = first(start(q.spec()), parent, broken)
    action = next_action(state, parent)
    assert isinstance(action, RunSurgical)
    assert action.preserve == ["/questions/3/correct_answer_text", "/questions/6/correct_answer_text"]
    # When question 3 comes back with a new answer, and question 6 with its options reordered (text kept)
    changed = fixed_question(broken["questions"][3]) | {"correct_answer_text": "Warehouse Kappa"}
    reordered = fixed_question(broken["questions"][6])
    reordered["options"] = reordered["options"][1:] + reordered["options"][:1]
    reordered["correct_answer_index"] = reordered["options"].index(reordered["correct_answer_text"])
    replies = {"/questions/3": q.slice_reply(changed), "/questions/6": q.slice_reply(reordered)}
    state = apply_surgical(state, action, replies)
    # Then the changed answer is rolled back, the moved one (index and text together) is applied
    assert state.attempts[-1].rolled_back == ["/questions/3"]
    assert state.best is not None and state.best.output["questions"][6] == reordered


def test_answer_fields_are_repaired_with_the_whole_question_and_absorb_its_option_list() -> None:
    # Given question 2 with a text that is not its option, and question 5 both imbalanced and skewed
    quiz = q.imbalance(q.valid_quiz(), [5])
    quiz["questions"][2]["correct_answer_text"] = "Warehouse Nowhere"
    state = first(start(q.spec()), SMALLEST, quiz)
    # When the smallest slices are planned
    action = next_action(state, SMALLEST)
    # Then the mismatched answer widens to its question; the imbalance stays an options slice
    assert isinstance(action, RunSurgical)
    assert list(action.calls) == ["/questions/2", "/questions/5/options"]


def test_a_slice_prompt_carries_the_excerpt_not_the_document() -> None:
    # Given a long source and an imbalanced question whose quote is in it
    filler = "".join(
        f"Paragraph {i} of the appendix lists shelving codes and opening hours.\n" for i in range(80)
    )
    spec = q.spec().model_copy(update={"source": q.source() + filler})
    broken = q.imbalance(q.valid_quiz(), [4])
    broken["questions"][9]["source_quote"] = "A sentence the report never says."
    state = first(start(spec), SMALLEST, q.imbalance(broken, [9]))
    action = next_action(state, SMALLEST)
    assert isinstance(action, RunSurgical)
    user = action.calls["/questions/4/options"].messages[-1]["content"]
    # Then the slice prompt carries its question's excerpt and the question around it, not the document
    assert "<document>" not in user and "Paragraph 79" not in user
    assert f"<source_excerpt>{q.source()[:40]}" not in user
    assert q.sentence(4) in user.split("<source_excerpt>", 1)[1].split("</source_excerpt>", 1)[0]
    assert '"options":"(the slice above)"' in user and "Where is crate 4 of the catalogue kept?" in user
    assert len(user) < len(spec.source) / 4
    # ...and a slice whose quote is not in the source gets the whole document, first (shared, cached)
    assert {"/questions/9/options", "/questions/9/source_quote"} <= set(action.calls)
    for pointer in ("/questions/9/options", "/questions/9/source_quote"):
        other = action.calls[pointer].messages[-1]["content"]
        assert other.startswith(f"<document>\n{spec.source}\n</document>") and "<source_excerpt>" not in other


def test_a_whole_question_slice_has_no_context_block_repeating_it() -> None:
    parent = Policy(name="parent", steps=(Step(mode="full"), Step(mode="surgical", target="parent")))
    state = first(start(q.spec()), parent, q.imbalance(q.valid_quiz(), [1]))
    action = next_action(state, parent)
    assert isinstance(action, RunSurgical)
    user = action.calls["/questions/1"].messages[-1]["content"]
    assert "<context" not in user and user.count('"source_quote"') == 1


@pytest.mark.parametrize(
    ("target", "name", "kind", "kept"),
    [
        # an options slice keeps the correct option, not correct_answer_text (which is not under it)
        ("failures", "correct_answer_text", "/questions/*/options", "correct_option"),
        ("smallest", "correct_answer_text", "/questions/*/options", "correct_option"),
        # a whole question keeps its answer's text, not an option at a fixed index
        ("parent", "correct_option", "/questions/*", "correct_answer_text"),
    ],
)
def test_an_invariant_a_target_kind_does_not_keep_is_refused_when_the_settings_load(
    target: str, name: str, kind: str, kept: str
) -> None:
    # Given settings with a policy whose surgical step relies on an invariant some of its targets lack
    settings = load_settings()
    leaky = {"steps": [{"mode": "full"}, {"mode": "surgical", "target": target, "preserve": [name]}]}
    bad = settings.model_copy(update={"policies": {**settings.policies, "leaky": leaky}})
    # When the settings are loaded for use, Then the policy is refused in one line naming the policy,
    # the step, the name and the kind of target that does not keep it
    with pytest.raises(PolicyMismatch) as raised:
        check_configured_policies(bad)
    message = str(raised.value)
    assert "\n" not in message
    assert message == (
        f"policy 'leaky', step 2, field 'preserve': names {name!r}, which contract 'quiz' does not keep "
        f"under target {kind} (target: {target}; kept there: {kept})"
    )


def test_an_invariant_kept_under_every_target_kind_of_the_step_fits() -> None:
    data = {
        "steps": [
            {"mode": "full"},
            {"mode": "surgical", "target": "parent", "preserve": ["correct_answer_text"]},
            {"mode": "surgical", "target": "smallest"},
        ]
    }
    policy = policy_from_mapping("fine", copy.deepcopy(data), load_settings())
    check_fit(policy, QuizContract)  # no error
    assert policy.steps[1].preserve == ("correct_answer_text",)
