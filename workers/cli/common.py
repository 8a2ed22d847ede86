"""Small helpers every subcommand shares: settings as a usage error, the document reader, argument types."""

from __future__ import annotations

import argparse
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from suture.config.settings import ConfigError, Settings, load_settings
from suture.workers.cli import UsageError
from suture.workers.printable import shown

STDIN = "-"


def settings_from(args: argparse.Namespace) -> Settings:
    """The effective settings for this command; a bad config file or a configured policy that cannot
    run (or names what a contract does not declare) is a one-line usage error (exit 2)."""
    from suture.contracts.errors import ContractError
    from suture.tasks.policy import PolicyError
    from suture.tasks.policy_choice import check_configured_policies
    from suture.workers.contract_sources import install_contracts

    try:
        settings = install_contracts(load_settings(getattr(args, "config", None)))
        return check_configured_policies(settings)
    except (ConfigError, PolicyError, ContractError) as exc:
        raise UsageError(str(exc)) from None


CONTRACT_HELP = "contract name, or a contract file (.yaml/.json); `suture contracts` lists them"


def contract_from(args: argparse.Namespace) -> str:
    """The contract name ``--contract`` means (a file is loaded and registered, ``contract_sources``);
    call after ``settings_from``. An unusable file or a clash is a one-line usage error."""
    from suture.contracts.errors import ContractError
    from suture.workers.contract_sources import contract_argument

    try:
        return contract_argument(str(args.contract))
    except ContractError as exc:
        raise UsageError(str(exc)) from None


def producer_settings(args: argparse.Namespace) -> Settings:
    """The settings of a command that talks to a broker: as configured, else the running `suture up`.

    Neither is a one-line usage error naming the ways out (``suture.workers.local.discovery``).
    """
    from suture.workers.local.discovery import resolve

    try:
        return resolve(settings_from(args))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def add_follow_symlinks(parser: argparse.ArgumentParser) -> None:
    """Add ``--follow-symlinks``: read a symbolic link named on the command line (never one inside a
    folder)."""
    parser.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="read a symbolic link named here as an input (links inside folders are never followed)",
    )


def refuse_symlink(name: str, args: argparse.Namespace) -> None:
    """A UsageError for a symbolic link named as an input unless ``--follow-symlinks`` was given.

    A link can carry ``~/secret.env`` or ``/etc/shadow`` into a prompt and a result; the name is printed
    escaped (``repr``), so a newline in it cannot forge an output line.
    """
    if name != STDIN and Path(name).is_symlink() and not getattr(args, "follow_symlinks", False):
        raise UsageError(f"{name!r}: skipped: symlink: not followed (pass --follow-symlinks to read it)")


def read_bounded(name: str, limit: int, *, setting: str = "max_input_bytes") -> bytes:
    """The bytes of file ``name`` (``-``: standard input), refusing more than ``limit`` before reading them
    all.

    A regular file is refused by its size before it is opened; a device, pipe or stdin is read up to
    ``limit`` + 1 bytes, never more (``/dev/zero`` included). Every refusal is a UsageError naming the
    setting.
    """
    too_large = f"{name}: more than {limit:,} bytes ({setting}); nothing past that was read"
    data = sys.stdin.buffer.read(limit + 1) if name == "-" else _read_file_bounded(Path(name), limit, setting)
    if len(data) > limit:
        raise UsageError(too_large)
    return data


def _read_file_bounded(path: Path, limit: int, setting: str) -> bytes:
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise UsageError(f"is a directory, not a file: {path}")
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise UsageError(
                f"{shown(path)} is {info.st_size:,} bytes, over {setting}={limit:,}; it was not read"
            )
        with path.open("rb") as stream:
            return stream.read(limit + 1)
    except FileNotFoundError:
        raise UsageError(f"file not found: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_document(name: str, settings: Settings) -> str:
    """The text of a document file (.pdf, .md, .txt; all sections joined) or of standard input (``-``),
    read as ``suture batch`` reads files; an unusable one is a UsageError naming why."""
    if name == STDIN:
        return _read_stdin(settings)
    return _read_file(Path(name), settings)


def _read_stdin(settings: Settings) -> str:
    data = read_bounded(STDIN, settings.max_input_bytes)  # never more than the limit is read
    # Spooled to a file named for what it holds, so standard input goes through the same reader.
    suffix = ".pdf" if data.lstrip()[:5] == b"%PDF-" else ".txt"
    with tempfile.TemporaryDirectory(prefix="suture-stdin-") as folder:
        path = Path(folder) / f"stdin{suffix}"
        path.write_bytes(data)
        return _read_file(path, settings, label="standard input")


def _read_file(path: Path, settings: Settings, *, label: str | None = None) -> str:
    from suture.workers.documents import DocumentError, InputIssue, iter_documents

    if not path.is_file():
        raise UsageError(f"file not found: {path}")
    size_b, limit = path.stat().st_size, settings.max_input_bytes
    if label is None and size_b > limit:  # refused by its size, unread (as enqueue refuses the text)
        raise UsageError(
            f"{shown(path)} is {size_b:,} bytes, over max_input_bytes={limit:,}; it was not read"
        )
    texts: list[str] = []
    try:
        for item in iter_documents([path], settings.batch):
            if isinstance(item, InputIssue):
                if item.skipped:
                    raise UsageError(
                        str(item) if label is None else f"{label}: skipped: {item.reason}: {item.detail}"
                    )
                continue
            texts.append(item.text)
    except DocumentError as exc:
        raise UsageError(str(exc)) from None
    if not texts:
        raise UsageError(f"{shown(label or path)}: no text to work from")
    return "\n\n".join(texts)


def positive_int(text: str) -> int:
    """An argparse type for a whole number >= 1, with a message that names the problem."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_teaching_flags(parser: argparse.ArgumentParser) -> None:
    """The quiz's teaching knobs as flags (each over the settings' ``quiz`` value, stored with the job)."""
    parser.add_argument(
        "--kinds",
        metavar="KIND[,KIND]",
        help="question kinds, each question one of them: single, multiple, true_false (default: single)",
    )
    parser.add_argument(
        "--language",
        metavar="CODE",
        help="the quiz's language: auto (the document's) or en, fr, de, es, it, pt, nl",
    )
    parser.add_argument("--difficulty", choices=("easy", "medium", "hard"), help="prompt guidance")
    parser.add_argument("--audience", metavar="TEXT", help="who the quiz is for (prompt guidance)")
    parser.add_argument(
        "--options", metavar="K", type=positive_int, help="options per question (not true/false)"
    )


def teaching_params(args: argparse.Namespace) -> dict[str, Any]:
    """The quiz parameters the teaching flags give (nothing for a flag not given)."""
    params: dict[str, Any] = {}
    if args.kinds is not None:
        params["question_kinds"] = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    for name in ("language", "difficulty", "audience"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    if args.options is not None:
        params["rules"] = {"options_per_question": args.options}
    return params
