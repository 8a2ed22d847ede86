"""The one contract factory: a contract by name, built from a job's parameters and the settings.

Every entry point builds its contract here (the producer, the workers, ``generate``, ``validate``,
``batch``, ``eval``), so the rules a user configures reach every path, and none names a contract in
an ``if``. Contracts come from a ``ContractRegistry``: today the built-in ones; later sources (entry
points, settings, declarative files) add entries to the same registry and are built the same way.

``resolve_params(name, params, settings)`` gives a job's complete, checked, JSON-able parameters
(what the job stores at enqueue); ``build_contract(name, params, settings, source=...)`` the contract
for them. Built from complete parameters, a contract ignores the settings: a worker judges a job by
the rules stored with it, whatever its own settings say. Errors: ``UnknownContractError`` (names
the known contracts), ``ContractParamsError`` (names the parameter and value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from suture.config.settings import Settings
from suture.contracts.contract import Contract
from suture.contracts.errors import ContractDefinitionError, UnknownContractError
from suture.contracts.quiz import QuizContract


@dataclass(frozen=True)
class ContractEntry:
    """One known contract: its name, its class, and where it came from (shown in errors and docs)."""

    name: str
    contract_class: type[Contract]
    origin: str = "built-in"


class ContractRegistry:
    """Contracts by name; one name, one entry (a second entry under a taken name is refused)."""

    def __init__(self, entries: Iterable[ContractEntry] = ()) -> None:
        self._entries: dict[str, ContractEntry] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: ContractEntry) -> None:
        """Register ``entry``; raises ContractDefinitionError if its name is taken."""
        taken = self._entries.get(entry.name)
        if taken is not None:
            raise ContractDefinitionError(entry.name, f"name already registered ({taken.origin})")
        self._entries[entry.name] = entry

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def entry(self, name: str) -> ContractEntry:
        """The entry for ``name``; raises UnknownContractError naming the known contracts."""
        found = self._entries.get(name) if isinstance(name, str) else None
        if found is None:
            raise UnknownContractError(str(name), self.names())
        return found


REGISTRY = ContractRegistry([ContractEntry(QuizContract.name, QuizContract)])


def contract_names() -> list[str]:
    """The registered contract names, sorted."""
    return REGISTRY.names()


def contract_class(name: str) -> type[Contract]:
    """The class of contract ``name`` (its invariants, default policy); raises UnknownContractError."""
    return REGISTRY.entry(name).contract_class


def resolve_params(name: str, params: Mapping[str, Any] | None, settings: Settings | None) -> dict[str, Any]:
    """Contract ``name``'s complete parameters for a job: ``params`` over ``settings``' defaults, checked."""
    return contract_class(name).resolve_params(dict(params or {}), settings)


def build_contract(
    name: str,
    params: Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    *,
    source: str | None = None,
) -> Contract:
    """Contract ``name`` for a job's ``params`` (missing ones from ``settings``, else the contract's
    defaults) and its ``source`` document."""
    cls = contract_class(name)
    resolved = cls.resolve_params(dict(params or {}), settings)
    try:
        return cls.from_params(resolved, source)
    except TypeError as exc:  # resolve_params let through what the constructor cannot take: a bug
        raise ContractDefinitionError(name, f"bad parameters: {exc}") from exc


def get_contract(name: str, **params: Any) -> Contract:
    """``build_contract(name, params, source=params.pop("source"))`` without settings (tests, authors)."""
    source = params.pop("source", None)
    return build_contract(name, params, None, source=source)
