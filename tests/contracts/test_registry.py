"""Looking contracts up by name."""

from __future__ import annotations

import pytest

from contracts.errors import ContractDefinitionError, UnknownContractError
from contracts.quiz import QuizContract
from contracts.registry import contract_names, get_contract


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
    assert "known: quiz" in str(caught.value)


def test_given_an_unknown_parameter_when_looked_up_then_contract_definition_error() -> None:
    with pytest.raises(ContractDefinitionError, match="bad parameters"):
        get_contract("quiz", colour="red")
