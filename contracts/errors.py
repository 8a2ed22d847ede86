"""Errors of the contract layer: only programmer errors raise; bad model output becomes failures.

ContractError                 base of this package's exceptions
├── PointerError              a JSON Pointer that is malformed or does not resolve in a document
├── ContractDefinitionError   a broken contract (bad rule, bad schema): a bug, not bad output
├── UnknownContractError      no contract is registered under the requested name
└── ContractParamsError       a job's parameters that the contract cannot take (names the value)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ContractError(Exception):
    """Base class of every exception raised by ``contracts``."""


class PointerError(ContractError):
    """A JSON Pointer is malformed, or does not resolve in the given document."""

    def __init__(self, pointer: str, reason: str) -> None:
        self.pointer = pointer
        self.reason = reason
        super().__init__(f"bad JSON pointer {pointer!r}: {reason}")


class ContractDefinitionError(ContractError):
    """A contract is defined wrongly (a programmer error); the message names what to fix."""

    def __init__(self, contract: str, problem: str) -> None:
        self.contract = contract
        self.problem = problem
        super().__init__(f"contract {contract!r} is broken: {problem}")


class UnknownContractError(ContractError):
    """No contract is registered under ``name``; the message lists the known names."""

    def __init__(self, name: str, known: list[str] | None = None) -> None:
        self.name = name
        self.known = list(known or [])
        choices = f" (known: {', '.join(self.known)})" if self.known else ""
        super().__init__(f"unknown contract {name!r}{choices}")


class ContractParamsError(ContractError):
    """A job's parameter the contract cannot take: unknown, of the wrong type, or out of bounds."""

    def __init__(
        self, contract: str, param: str, value: Any, problem: str, known: Sequence[str] = ()
    ) -> None:
        self.contract = contract
        self.param = param
        self.value = value
        self.problem = problem
        self.known = list(known)
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        choices = f" (known: {', '.join(self.known)})" if self.known else ""
        super().__init__(f"contract {contract!r}, parameter {param!r} = {shown}: {problem}{choices}")
