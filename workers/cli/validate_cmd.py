"""``suture validate``: check one output file against a contract and print its failures as JSON.

Exit codes: 0 valid, 1 invalid (failures printed), 2 unusable input (missing or unreadable file,
unknown contract, bad ``--questions``, more than ``max_input_bytes``, refused before it is read
whole, ``/dev/zero`` included) with one line on stderr. The file may hold any bytes: whatever it
contains becomes failures, never a traceback. ``--source`` takes any document
``suture batch`` reads (a PDF, a Word file, a slide deck, markdown or text), read the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from suture.config.settings import Settings
from suture.contracts.errors import ContractError
from suture.contracts.registry import build_contract
from suture.workers.cli import UsageError
from suture.workers.cli.common import (
    CONTRACT_HELP,
    add_follow_symlinks,
    add_teaching_flags,
    contract_from,
    read_bounded,
    refuse_symlink,
    settings_from,
    teaching_params,
)
from suture.workers.documents import InputNotFound, UnreadableDocument, document_text


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help="check an output file against a contract",
        description="Validate FILE against a contract; prints {valid, failures} as JSON.",
    )
    parser.add_argument("file", metavar="FILE", help="the output to check (any bytes; '-' reads stdin)")
    parser.add_argument("--contract", default="quiz", help=CONTRACT_HELP)
    parser.add_argument("--questions", metavar="N", default=None, help="questions requested (default 15)")
    parser.add_argument(
        "--source",
        metavar="DOC",
        help="source document (.pdf, .docx, .pptx, .md, .txt, read as `suture batch` reads it): enables the "
        "quote rule",
    )
    add_follow_symlinks(parser)
    add_teaching_flags(parser)  # the kinds, options and language the output was asked with
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate, print the verdict as JSON on stdout, return 0 (valid) or 1 (invalid)."""
    settings = settings_from(args)
    args.contract = contract_from(args)
    refuse_symlink(args.file, args)
    if args.source:
        refuse_symlink(args.source, args)
    raw = read_bounded(args.file, settings.max_input_bytes)  # refused unread past the limit
    params: dict[str, Any] = teaching_params(args)
    if args.questions is not None:
        params["questions"] = _positive_int(args.questions)
    source = _source_text(args.source, settings) if args.source else None
    # The rules a job would be judged by: the settings' (suture.yaml, SUTURE_*), as for every entry point.
    try:
        contract = build_contract(args.contract, params, settings, source=source)
    except ContractError as exc:
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


def _source_text(path: str, settings: Settings) -> str:
    """The document's whole text as a batch reads it (PDF pages, Office files, decoded text)."""
    try:
        return document_text(path, settings.batch)
    except InputNotFound:
        raise UsageError(f"file not found: {path}") from None
    except UnreadableDocument as exc:
        raise UsageError(f"cannot read the source document {path}: {exc.reason}: {exc.detail}") from None
