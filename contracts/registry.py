"""The one contract factory: a contract by name, built from a job's parameters and the settings.

Every entry point builds its contract here (the producer, the workers, ``generate``, ``validate``,
``batch``, ``eval``), so the rules a user configures reach every path, and none names a contract in
an ``if``. Contracts come from one ``ContractRegistry``, ``REGISTRY``: the built-in ones, plus what the
edge (``suture.workers.contract_sources``: entry points, the settings' ``contracts``, declarative files)
adds with ``use_extras``; those entries load lazily (``ContractEntry.loader``), so a broken one fails
where it is used, naming itself, and never stops the others. This module does no I/O itself.

``resolve_params(name, params, settings)`` gives a job's complete, checked, JSON-able parameters
(what the job stores at enqueue); ``build_contract(name, params, settings, source=...)`` the contract
for them. Built from complete parameters, a contract ignores the settings: a worker judges a job by
the rules stored with it, whatever its own settings say. Errors: ``UnknownContractError`` (names
the known contracts), ``ContractParamsError`` (names the parameter and value).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from suture.config.settings import Settings
from suture.contracts.contract import Contract
from suture.contracts.errors import ContractDefinitionError, UnknownContractError
from suture.contracts.outline import OutlineContract
from suture.contracts.quiz import QuizContract

BUILT_IN = "built-in"


@dataclass(frozen=True)
class ContractEntry:
    """One known contract: its name, its class (or the ``loader`` that gives it on first use), and where
    it came from (shown in errors and by ``suture contracts``)."""

    name: str
    contract_class: type[Contract] | None = None
    origin: str = BUILT_IN
    loader: Callable[[], type[Contract]] | None = None


class ContractRegistry:
    """Contracts by name; one name, one entry (a second entry under a taken name is refused)."""

    def __init__(self, entries: Iterable[ContractEntry] = ()) -> None:
        self._entries: dict[str, ContractEntry] = {}
        self._loaded: dict[str, type[Contract]] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: ContractEntry) -> None:
        """Register ``entry``; raises ContractDefinitionError if another source took its name (the same
        source again replaces its entry: a file given twice, reloaded)."""
        taken = self._entries.get(entry.name)
        if taken is not None and taken.origin == entry.origin != BUILT_IN:  # the same source, reloaded
            self._loaded.pop(entry.name, None)
        elif taken is not None:
            raise ContractDefinitionError(
                entry.name, f"name already registered by {taken.origin}, and again by {entry.origin}"
            )
        self._entries[entry.name] = entry

    def use_extras(self, entries: Iterable[ContractEntry]) -> None:
        """Replace every entry that is not built in by ``entries`` (all or none: a clash adds nothing)."""
        kept = {name: e for name, e in self._entries.items() if e.origin == BUILT_IN}
        trial = ContractRegistry(kept.values())
        for entry in entries:
            trial.add(entry)
        self._entries = trial._entries
        self._loaded = {n: c for n, c in self._loaded.items() if n in kept}

    def entries(self) -> list[ContractEntry]:
        """Every entry, sorted by name."""
        return [self._entries[name] for name in self.names()]

    def load(self, name: str) -> type[Contract]:
        """The class of contract ``name``, loaded on first use; raises UnknownContractError, or
        ContractDefinitionError (naming the contract and its origin) for one that cannot be loaded."""
        entry = self.entry(name)
        if entry.contract_class is not None:
            return entry.contract_class
        found = self._loaded.get(name)
        if found is None:
            if entry.loader is None:
                raise ContractDefinitionError(name, f"no class and no loader ({entry.origin})")
            found = entry.loader()
            self._loaded[name] = found
        return found

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def entry(self, name: str) -> ContractEntry:
        """The entry for ``name``; raises UnknownContractError naming the known contracts."""
        found = self._entries.get(name) if isinstance(name, str) else None
        if found is None:
            raise UnknownContractError(str(name), self.names())
        return found


REGISTRY = ContractRegistry(
    [ContractEntry(QuizContract.name, QuizContract), ContractEntry(OutlineContract.name, OutlineContract)]
)


def contract_names() -> list[str]:
    """The registered contract names, sorted."""
    return REGISTRY.names()


def contract_class(name: str) -> type[Contract]:
    """The class of contract ``name`` (its invariants, default policy); raises UnknownContractError."""
    return REGISTRY.load(name)


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
