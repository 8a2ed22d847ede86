"""``suture contracts``: every contract this configuration knows, with where it came from.

Built-in ones, the installed entry points (group ``suture.contracts``) and the settings' ``contracts``
(``suture.workers.contract_sources``). Each is loaded to show its title; one that cannot load is listed
as broken with its one-line reason (exit 1), the others still shown. ``--json`` prints a list.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from suture.contracts.errors import ContractError
from suture.contracts.registry import REGISTRY
from suture.workers.cli.common import settings_from


def register(subparsers: Any) -> None:
    """Add the ``contracts`` subcommand."""
    parser = subparsers.add_parser(
        "contracts",
        help="list the contracts this configuration knows and where each came from",
        description="List every contract (built-in, entry points, suture.yaml `contracts`) and its origin.",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the contracts; 1 if one of them cannot be loaded (listed as broken), else 0."""
    settings_from(args)  # installs the entry points' and the settings' contracts
    rows = [_row(entry.name, entry.origin) for entry in REGISTRY.entries()]
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        width = max(len(row["name"]) for row in rows)
        for row in rows:
            what = row["title"] if row["ok"] else f"BROKEN: {row['problem']}"
            print(f"{row['name']:<{width}}  {what}  [{row['origin']}]")
    return 0 if all(row["ok"] for row in rows) else 1


def _row(name: str, origin: str) -> dict[str, Any]:
    try:
        cls = REGISTRY.load(name)
    except ContractError as exc:
        return {"name": name, "origin": origin, "ok": False, "title": None, "problem": str(exc)}
    return {"name": name, "origin": origin, "ok": True, "title": cls.title, "problem": None}
