"""``suture validate``: check one output file against a contract and print its failures as JSON.

Exit codes: 0 valid, 1 invalid (failures printed), 2 unusable input (missing or unreadable file,
unknown contract, bad ``--questions``) with one line on stderr. The file may hold any bytes:
whatever it contains becomes failures, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from contracts.errors import ContractDefinitionError, UnknownContractError
from contracts.registry import contract_names, get_contract
from workers.cli import UsageError
from workers.cli.common import settings_from


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help="check an output file against a contract",
        description="Validate FILE against a contract; prints {valid, failures} as JSON.",
    )
    parser.add_argument("file", metavar="FILE", help="the output to check (any bytes; '-' reads stdin)")
    parser.add_argument("--contract", default="quiz", help=f"contract name ({', '.join(contract_names())})")
    parser.add_argument("--questions", metavar="N", default=None, help="questions requested (default 15)")
    parser.add_argument("--source", metavar="DOC", help="source document: enables the quote rule")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate, print the verdict as JSON on stdout, return 0 (valid) or 1 (invalid)."""
    raw = _read_bytes(args.file)
    params: dict[str, Any] = {}
    if args.questions is not None:
        params["questions"] = _positive_int(args.questions)
    if args.source:
        params["source"] = _read_text(args.source)
    if args.contract == "quiz":
        params["rules"] = settings_from(args).quiz
    try:
        contract = get_contract(args.contract, **params)
    except (UnknownContractError, ContractDefinitionError) as exc:
        raise UsageError(str(exc)) from None
    verdict = contract.validate(raw)
    report = {"valid": verdict.ok, "failures": [failure.public() for failure in verdict.failures]}
    json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0 if verdict.ok else 1


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--questions expects a whole number, got {text!r}") from None
    if value < 1:
        raise UsageError(f"--questions must be at least 1, got {value}")
    return value


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"is a directory, not a file: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_text(path: str) -> str:
    data = _read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"source document is not UTF-8 text: {path}") from None
