"""Contracts by name, so jobs, policies and the CLI can refer to a contract with a plain string."""

from __future__ import annotations

from typing import Any

from contracts.contract import Contract
from contracts.errors import ContractDefinitionError, UnknownContractError
from contracts.quiz import QuizContract

CONTRACTS: dict[str, type[Contract]] = {QuizContract.name: QuizContract}


def contract_names() -> list[str]:
    """The registered contract names, sorted."""
    return sorted(CONTRACTS)


def get_contract(name: str, **params: Any) -> Contract:
    """A new contract ``name`` built with ``params`` (e.g. ``questions=15, source=text``)."""
    try:
        contract_class = CONTRACTS[name]
    except (KeyError, TypeError):
        raise UnknownContractError(str(name), contract_names()) from None
    try:
        return contract_class(**params)
    except TypeError as exc:
        raise ContractDefinitionError(str(name), f"bad parameters: {exc}") from exc
