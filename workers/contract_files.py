"""Contract files: a declarative contract read from YAML or JSON (``suture.contracts.declarative``).

``load_contract_file(path)`` reads at most ``MAX_FILE_BYTES``, parses it (``.json`` as JSON, else YAML's
safe loader) and builds the contract. Every problem is one ``ContractFileError`` line naming the file,
the key (a JSON pointer into the file) and the problem: ``cards.yaml: /rules/2/max: Field required``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from suture.contracts.contract import Contract
from suture.contracts.declarative import DefinitionProblem, contract_from_definition
from suture.contracts.errors import ContractError

MAX_FILE_BYTES = 1024 * 1024


class ContractFileError(ContractError):
    """A contract file that cannot be used: ``<file>: <pointer>: <problem>``."""

    def __init__(self, path: Path, pointer: str, problem: str) -> None:
        self.path = path
        self.pointer = pointer
        self.problem = problem
        super().__init__(f"contract file {path}: {pointer}: {problem}")


def load_contract_file(path: Path) -> type[Contract]:
    """The contract ``path`` defines; raises ContractFileError (file, JSON pointer, problem)."""
    data = _parse(path, _read(path))
    try:
        return contract_from_definition(data)
    except DefinitionProblem as exc:
        raise ContractFileError(path, exc.pointer, exc.problem) from None


def _read(path: Path) -> bytes:
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ContractFileError(path, "/", "no such file") from None
    except OSError as exc:
        raise ContractFileError(path, "/", f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ContractFileError(path, "/", f"over {MAX_FILE_BYTES:,} bytes; not read")
    return raw


def _parse(path: Path, raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractFileError(path, "/", f"not UTF-8 (byte {exc.start})") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ContractFileError(path, "/", f"not JSON: {exc.msg} at line {exc.lineno}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ContractFileError(path, "/", f"not YAML: {problem}{where}") from None
