"""The ``suture`` command: one entry point, one module per subcommand, imported only when used.

Each subcommand module defines ``register(subparsers)`` (adds its parser, sets ``func``) and a
``run(args) -> int``. Unusable input exits 2 with one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# name -> module; a module that does not exist yet is simply not offered.
SUBCOMMANDS: dict[str, str] = {
    "validate": "workers.cli.validate_cmd",
    "simulator": "workers.cli.simulator_cmd",
    "generate": "workers.cli.generate_cmd",
    "config": "workers.cli.config_cmd",
    "enqueue": "workers.cli.jobs_cmd",
    "status": "workers.cli.jobs_cmd",
    "result": "workers.cli.jobs_cmd",
    "trace": "workers.cli.jobs_cmd",
    "resume": "workers.cli.jobs_cmd",
    "cancel": "workers.cli.jobs_cmd",
    "stats": "workers.cli.stats_cmd",
    "worker": "workers.cli.worker_cmd",
    "up": "workers.cli.up_cmd",
    "batch": "workers.cli.batch_cmd",
    "eval": "workers.cli.eval_cmd",
}


class UsageError(Exception):
    """Unusable input for a command (missing file, unknown contract): exit 2 with this one line."""


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="suture",
        description="Contract-checked structured LLM output with surgical repair.",
    )
    parser.add_argument("--config", help="YAML settings file (default: $SUTURE_CONFIG or ./suture.yaml)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    seen: set[str] = set()
    for module_name in dict.fromkeys(SUBCOMMANDS.values()):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        if module_name not in seen:
            module.register(subparsers)
            seen.add(module_name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``suture``; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return 2
    except _simulator_settings_errors() as exc:  # evaluated only when something was raised
        print(f"suture: simulator settings: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("suture: interrupted", file=sys.stderr)
        return 130


def _simulator_settings_errors() -> tuple[type[Exception], ...]:
    """Unusable simulator settings, raised by any command that starts the simulator (imported late)."""
    from workers.simulator.errors import FaultRatesError, UnknownProfileError

    return (FaultRatesError, UnknownProfileError)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
