"""The one contract factory: contracts by name, built from a job's parameters and the settings."""

from __future__ import annotations

import pytest

from suture.config.settings import QuizRules, Settings
from suture.contracts.errors import ContractDefinitionError, ContractParamsError, UnknownContractError
from suture.contracts.quiz import QuizContract
from suture.contracts.registry import (
    REGISTRY,
    ContractEntry,
    build_contract,
    contract_names,
    get_contract,
    resolve_params,
)


def test_given_quiz_with_params_when_looked_up_then_a_configured_quiz_contract() -> None:
    contract = get_contract("quiz", questions=3, source="text")
    assert isinstance(contract, QuizContract)
    assert (contract.questions, contract.title) == (3, "Quiz")
    assert "quiz" in contract_names()


@pytest.mark.parametrize("name", ["essay", "", "Quiz"])
def test_given_an_unknown_name_when_looked_up_then_unknown_contract_error_lists_known(name: str) -> None:
    with pytest.raises(UnknownContractError) as caught:
        get_contract(name)
    assert caught.value.name == name
    assert "known: outline, quiz" in str(caught.value)


def test_given_an_unknown_parameter_when_built_then_the_error_names_it_and_the_known_ones() -> None:
    with pytest.raises(ContractParamsError) as caught:
        build_contract("quiz", {"colour": "red"})
    assert (caught.value.param, caught.value.value) == ("colour", "red")
    assert "'colour' = 'red'" in str(caught.value) and "known: questions, rules" in str(caught.value)


@pytest.mark.parametrize("questions", [0, 101, -3, "5", 2.0, True])
def test_given_questions_outside_the_bounds_when_resolved_then_refused_naming_the_value(
    questions: object,
) -> None:
    with pytest.raises(ContractParamsError, match="from 1 to 100") as caught:
        resolve_params("quiz", {"questions": questions}, None)
    assert caught.value.param == "questions" and caught.value.value == questions


def test_given_settings_rules_when_resolved_then_the_params_are_complete_and_json_ready() -> None:
    # Given settings with a 3-option quiz rule
    settings = Settings(quiz=QuizRules(options_per_question=3))

    # When a job's parameters are resolved with only questions given
    params = resolve_params("quiz", {"questions": 5}, settings)

    # Then every rule is in them, the settings' rule included
    assert params["questions"] == 5
    assert params["rules"] == QuizRules(options_per_question=3).model_dump()


def test_given_a_job_rule_when_resolved_then_it_wins_over_the_settings() -> None:
    settings = Settings(quiz=QuizRules(options_per_question=3, require_question_mark=False))
    params = resolve_params("quiz", {"rules": {"options_per_question": 5}}, settings)
    assert (params["rules"]["options_per_question"], params["rules"]["require_question_mark"]) == (5, False)


def test_given_a_bad_rule_when_resolved_then_refused_naming_the_rule() -> None:
    with pytest.raises(ContractParamsError, match="options_per_question") as caught:
        resolve_params("quiz", {"rules": {"options_per_question": 1}}, None)
    assert caught.value.param == "rules"


def test_given_complete_params_when_built_under_other_settings_then_the_stored_rules_judge() -> None:
    # Given the params a job stored under a 3-option rule
    stored = resolve_params("quiz", {"questions": 2}, Settings(quiz=QuizRules(options_per_question=3)))

    # When a worker whose settings say 4 options rebuilds the contract from them
    contract = build_contract("quiz", stored, Settings(quiz=QuizRules(options_per_question=4)))

    # Then the job's rule holds
    assert isinstance(contract, QuizContract) and contract.options_per_question == 3


def test_the_quiz_declares_its_invariants_and_default_policy() -> None:
    contract = build_contract("quiz", {"questions": 2})
    assert QuizContract.default_policy == "default"
    assert QuizContract.invariant_names() == {"correct_answer_text", "correct_option"}
    output = {
        "questions": [{"options": ["a", "b", "c"], "correct_answer_index": 2, "correct_answer_text": "c"}]
    }
    # A question keeps its answer's text; its option list, the option at the correct index.
    assert contract.slice_invariants(output, "/questions/0") == ["/questions/0/correct_answer_text"]
    assert contract.slice_invariants(output, "/questions/0/options") == ["/questions/0/options/2"]
    # A target of no declared kind (inside an option, the whole list) keeps nothing.
    assert contract.slice_invariants(output, "/questions/0/stem") == []
    assert contract.slice_invariants(output, "/questions") == []


def test_a_second_entry_under_a_taken_name_is_refused() -> None:
    with pytest.raises(ContractDefinitionError, match="already registered"):
        REGISTRY.add(ContractEntry("quiz", QuizContract, origin="a plugin"))
