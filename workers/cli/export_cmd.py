"""``suture export OUT --format FORMAT -o FILE``: a batch's quizzes as question banks for an LMS.

Reads OUT/quizzes.jsonl (the ``--out`` folder of ``suture batch``) and writes one file: Moodle XML,
GIFT, a QTI 1.2 zip (Canvas Classic Quizzes), a QTI 2.1 package (Canvas New Quizzes, Blackboard),
Aiken, CSV, or a printable HTML copy; one bank per section, named after the document and the
section title. Soft-delivered quizzes are left out unless ``--include-soft``; ``--only-accepted``
keeps quizzes whose line carries ``"accepted": true`` (set by a person's review).

Exit codes: 0 written (what was left out, and why, is listed); 1 nothing to export; 2 unusable
arguments (no quizzes.jsonl in OUT, unknown format).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from suture.workers.cli import UsageError
from suture.workers.exports import FORMATS, ExportError, export
from suture.workers.exports.bank import quizzes_file
from suture.workers.exports.feedback import SIMULATION_NOTICE


def register(subparsers: Any) -> None:
    """Add the ``export`` subcommand."""
    formats = ", ".join(f"{name} ({spec.description})" for name, spec in FORMATS.items())
    parser = subparsers.add_parser(
        "export",
        help="write a batch's quizzes as question banks for an LMS (Moodle, Canvas, Blackboard...)",
        description=f"Export the quizzes of a batch's output folder OUT. Formats: {formats}.",
    )
    parser.add_argument(
        "out", metavar="OUT", help="the --out folder of `suture batch` (or its quizzes.jsonl)"
    )
    parser.add_argument("--format", required=True, choices=list(FORMATS), help="the file format to write")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write")
    parser.add_argument("--include-soft", action="store_true", help="also export soft-delivered quizzes")
    parser.add_argument(
        "--only-accepted", action="store_true", help='only quizzes marked "accepted": true in quizzes.jsonl'
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export, then say what was written and what was left out."""
    out, target = Path(args.out), Path(args.output)
    try:
        quizzes_file(out)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    if target.is_dir():
        raise UsageError(f"-o must name a file, not a folder: {target}")
    try:
        catalogue = export(
            out, args.format, target, include_soft=args.include_soft, only_accepted=args.only_accepted
        )
    except ExportError as exc:
        print(f"suture export: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    if catalogue.simulated:
        print(SIMULATION_NOTICE)
    print(f"wrote {len(catalogue.banks)} banks, {catalogue.questions} questions ({args.format}): {target}")
    for why, count in catalogue.left_out.items():
        print(f"left out: {count} {why}")
    for problem in catalogue.problems[:20]:
        print(f"  {problem}")
    return 0
