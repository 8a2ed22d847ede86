"""The ``suture`` command: one entry point, one module per subcommand, imported only when used.

Each subcommand module defines ``register(subparsers)`` (adds its parser, sets ``func``) and a
``run(args) -> int``. Unusable input exits 2 with one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from suture.workers.extras import MissingExtra, extra_for, requiring

# name -> module; a module that does not exist yet is simply not offered.
SUBCOMMANDS: dict[str, str] = {
    "validate": "suture.workers.cli.validate_cmd",
    "contracts": "suture.workers.cli.contracts_cmd",
    "simulator": "suture.workers.cli.simulator_cmd",
    "generate": "suture.workers.cli.generate_cmd",
    "config": "suture.workers.cli.config_cmd",
    "enqueue": "suture.workers.cli.jobs_cmd",
    "status": "suture.workers.cli.jobs_cmd",
    "result": "suture.workers.cli.jobs_cmd",
    "trace": "suture.workers.cli.jobs_cmd",
    "resume": "suture.workers.cli.jobs_cmd",
    "cancel": "suture.workers.cli.jobs_cmd",
    "stats": "suture.workers.cli.stats_cmd",
    "worker": "suture.workers.cli.worker_cmd",
    "migrate-queues": "suture.workers.cli.migrate_queues_cmd",
    "serve": "suture.workers.cli.serve_cmd",
    "up": "suture.workers.cli.up_cmd",
    "batch": "suture.workers.cli.batch_cmd",
    "eval": "suture.workers.cli.eval_cmd",
    "calibrate": "suture.workers.cli.calibrate_cmd",
    "export": "suture.workers.cli.export_cmd",
    "review": "suture.workers.cli.review_cmd",
}


# The extra each command needs as a whole (pyproject.toml); a command not named here needs what its
# missing package's extra brings (``suture.workers.extras``).
COMMAND_EXTRAS: dict[str, str] = {
    **dict.fromkeys(("batch", "up", "eval", "calibrate", "generate", "simulator", "review"), "local"),
    "serve": "serve",
    "worker": "worker",
}


class UsageError(Exception):
    """Unusable input for a command (missing file, unknown contract): exit 2 with this one line."""


def build_parser(
    unavailable: dict[str, MissingExtra] | None = None, only: str | None = None
) -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand registered (or just ``only``'s module).

    A subcommand whose module needs an extra this install lacks is listed as needing it, and recorded
    in ``unavailable`` (name -> the error to show when it is asked for). Given ``only``, a known
    command, only its module is imported: a command starts without loading every other one's
    dependencies (the simulator's HTTP server, the embedded stack), about half a second each time.
    """
    parser = argparse.ArgumentParser(
        prog="suture",
        description="Contract-checked structured LLM output with surgical repair.",
    )
    parser.add_argument("--config", help="YAML settings file (default: $SUTURE_CONFIG or ./suture.yaml)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    seen: set[str] = set()
    modules = [SUBCOMMANDS[only]] if only in SUBCOMMANDS else list(dict.fromkeys(SUBCOMMANDS.values()))
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            if extra_for(exc) is None:
                raise
            _needs_extra(subparsers, module_name, exc, unavailable)
            continue
        if module_name not in seen:
            module.register(subparsers)
            seen.add(module_name)
    return parser


def _needs_extra(
    subparsers: Any, module_name: str, exc: ModuleNotFoundError, unavailable: dict[str, MissingExtra] | None
) -> None:
    """List each command of ``module_name`` as needing the extra that brings what it failed to import."""
    package = (exc.name or "").split(".")[0]
    for name in [name for name, module in SUBCOMMANDS.items() if module == module_name]:
        extra = COMMAND_EXTRAS.get(name) or extra_for(exc) or "all"
        subparsers.add_parser(name, help=f"(needs suture[{extra}])", add_help=False)
        if unavailable is not None:
            unavailable[name] = MissingExtra(f"'suture {name}'", extra, package)


def _command_of(given: list[str]) -> str | None:
    """The subcommand word of a command line (the first word that is not an option or --config's value)."""
    skip = False
    for token in given:
        if skip:
            skip = False
        elif token == "--config":
            skip = True
        elif not token.startswith("-"):
            return token
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``suture``; returns the process exit code (an interrupted command exits in ``Shutdown.leave``)."""
    from suture.workers.local import shutdown

    given = list(sys.argv[1:] if argv is None else argv)
    stop = shutdown.install("?", given)  # from the start: Ctrl-C while the parser loads is one line too
    try:
        unavailable: dict[str, MissingExtra] = {}
        command = _command_of(given)
        parser = build_parser(unavailable, only=None if "-h" in given or "--help" in given else command)
        if command in unavailable:
            raise UsageError(str(unavailable[command]))
        args = parser.parse_args(_bare_flags_valued(given))
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        stop.command = args.command
        with requiring(f"'suture {args.command}'", COMMAND_EXTRAS.get(args.command)):
            return int(args.func(args) or 0)
    except (UsageError, MissingExtra) as exc:
        from suture.config.redaction import redact

        print(f"suture: {redact(str(exc))}", file=sys.stderr)  # a URL in an error never shows its password
        return 2
    except _simulator_settings_errors() as exc:  # evaluated only when something was raised
        print(f"suture: simulator settings: {exc}", file=sys.stderr)
        return 2
    except shutdown.Interrupted as exc:
        stop.leave(exc)
    except KeyboardInterrupt:  # raised by Python's own handler: main() ran outside the main thread
        print("suture: interrupted", file=sys.stderr)
        return 130
    finally:
        shutdown.uninstall()


# Flags whose value is optional, with the value a bare flag means. argparse would take the next word
# (``suture batch --batch-api examples/``: the input folder) as the flag's value and refuse it.
OPTIONAL_VALUES: dict[str, tuple[str, tuple[str, ...]]] = {"--batch-api": ("all", ("all", "first", "off"))}


def _bare_flags_valued(given: list[str]) -> list[str]:
    """``given`` with each bare optional-value flag given its default value explicitly."""
    out: list[str] = []
    for i, token in enumerate(given):
        out.append(token)
        if token == "--":
            return out + given[i + 1 :]
        if token in OPTIONAL_VALUES:
            bare, values = OPTIONAL_VALUES[token]
            following = given[i + 1] if i + 1 < len(given) else None
            if following not in values:
                out.append(bare)
    return out


def _simulator_settings_errors() -> tuple[type[Exception], ...]:
    """Unusable simulator settings, raised by any command that starts the simulator.

    Only a command that imported the simulator can have raised them: for any other (an argparse
    error's SystemExit, say, reaches this clause too) the simulator and its HTTP server are not
    imported just to find out, which cost every such command half a second.
    """
    errors = sys.modules.get("suture.workers.simulator.errors")
    return (errors.FaultRatesError, errors.UnknownProfileError) if errors is not None else ()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
