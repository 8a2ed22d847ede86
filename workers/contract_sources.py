"""Where contracts come from besides the built-in ones: entry points, the settings, declarative files.

Resolved here, at the edge, and added to ``suture.contracts.registry.REGISTRY`` (which does no I/O):

- the entry-point group ``suture.contracts`` (``name = "module:Class"``, an installed package's own);
- the settings key ``contracts`` (``{name: "module:Class" | "path/to/file.yaml"}``; a path is absolute
  or relative to the working directory, ``.yaml``/``.yml``/``.json``).

A name given twice (two sources, or a source and a built-in) is one ``ContractSourceError`` naming both.
Each entry loads on first use (``ContractEntry.loader``): an import error, a class that is not a
``Contract`` or a malformed file fails the commands and jobs that use that contract, in one line naming
it, and leaves every other contract usable. ``install_contracts(settings)`` is called where settings are
loaded for use: the CLI (``cli.common.settings_from``), a worker starting, the producer API.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import threading
from importlib.metadata import entry_points
from pathlib import Path

from suture.config.settings import Settings
from suture.contracts.contract import Contract, check_definition
from suture.contracts.errors import ContractDefinitionError, ContractError
from suture.contracts.registry import REGISTRY, ContractEntry

GROUP = "suture.contracts"
FILE_SUFFIXES = (".yaml", ".yml", ".json")
_lock = threading.Lock()
_installed: list[tuple[tuple[str, str], ...]] = []


class ContractSourceError(ContractError):
    """A contract source that cannot be used at all: a clash of names, a value of no known form."""


def install_contracts(settings: Settings) -> Settings:
    """Add the entry points' and ``settings.contracts``' contracts to the registry; returns ``settings``.

    Idempotent for the same sources. Raises ``ContractSourceError`` (one line) for a name clash or a
    value that is neither ``module:Class`` nor a contract file.
    """
    sources = discovered() + [
        (name, value, f"settings contracts.{name}") for name, value in sorted(settings.contracts.items())
    ]
    key = tuple((name, origin + "=" + value) for name, value, origin in sources)
    with _lock:
        if _installed and _installed[-1] == key:
            return settings
        entries = [_entry(name, value, origin) for name, value, origin in sources]
        try:
            REGISTRY.use_extras(entries)
        except ContractDefinitionError as exc:
            raise ContractSourceError(f"contract {exc.contract!r}: {exc.problem}") from None
        _installed[:] = [key]
    return settings


def discovered() -> list[tuple[str, str, str]]:
    """The installed entry points of group ``suture.contracts``: (name, value, origin), sorted; scanned
    once per ``sys.path`` (every enqueue asks)."""
    return list(_discovered(tuple(sys.path)))


@functools.lru_cache(maxsize=8)
def _discovered(path: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    found = []
    for point in entry_points(group=GROUP):
        package = f"package {point.dist.name}" if point.dist is not None else "an installed package"
        found.append((point.name, point.value, f"entry point {point.name} = {point.value} ({package})"))
    return tuple(sorted(found))


def _entry(name: str, value: str, origin: str) -> ContractEntry:
    if value.lower().endswith(FILE_SUFFIXES):
        return ContractEntry(name, origin=f"{origin} ({value})", loader=lambda: _from_file(name, value))
    if ":" not in value or not all(part.strip() for part in value.split(":", 1)):
        raise ContractSourceError(
            f"contract {name!r} ({origin}): {value!r} is neither 'module:Class' nor a "
            f"{'/'.join(FILE_SUFFIXES)} file"
        )
    return ContractEntry(name, origin=origin, loader=lambda: _from_class_path(name, value, origin))


def _from_class_path(name: str, value: str, origin: str) -> type[Contract]:
    """The class ``module:Class`` names, checked; ContractDefinitionError naming ``name`` if unusable."""
    module_name, _, attribute = value.partition(":")
    try:
        found: object = importlib.import_module(module_name.strip())
        for part in attribute.strip().split("."):
            found = getattr(found, part)
    except Exception as exc:  # any error importing user code: the contract is broken, nothing else
        raise ContractDefinitionError(name, f"cannot load {value}: {type(exc).__name__}: {exc}") from None
    if not (inspect.isclass(found) and issubclass(found, Contract)):
        raise ContractDefinitionError(name, f"{value} ({origin}) is not a subclass of suture.Contract")
    check_definition(found, name)
    return found


def _from_file(name: str, value: str) -> type[Contract]:
    """The declarative contract in file ``value`` (``suture.contracts.declarative``)."""
    from suture.workers.contract_files import load_contract_file

    cls = load_contract_file(Path(value))
    if cls.name != name:
        raise ContractDefinitionError(name, f"{value} defines contract {cls.name!r}, not {name!r}")
    return cls


def contract_argument(value: str) -> str:
    """The contract name a ``--contract`` value means: a registered name as is, or a contract file
    (``.yaml``/``.yml``/``.json``) loaded and registered under the name it declares. Raises
    ContractError (one line: the file, the key, the problem) for a file that cannot be used."""
    if not value.lower().endswith(FILE_SUFFIXES):
        return value
    from suture.workers.contract_files import load_contract_file

    cls = load_contract_file(Path(value))
    if cls.name in REGISTRY.names() and _same_definition(cls, cls.name):
        return cls.name  # the file the settings name already (by another path, perhaps)
    try:
        REGISTRY.add(ContractEntry(cls.name, cls, origin=f"file {value}"))
    except ContractDefinitionError as exc:
        raise ContractSourceError(f"contract {exc.contract!r}: {exc.problem}") from None
    return cls.name


def _same_definition(cls: type[Contract], name: str) -> bool:
    """True if registered contract ``name`` is a declarative one with ``cls``'s very definition."""
    try:
        registered = REGISTRY.load(name)
    except ContractError:
        return False
    return getattr(registered, "definition", None) == getattr(cls, "definition", object())
