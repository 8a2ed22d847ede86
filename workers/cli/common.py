"""Small helpers every subcommand shares: loading settings as a usage error, and argument types."""

from __future__ import annotations

import argparse

from config.settings import ConfigError, Settings, load_settings
from workers.cli import UsageError


def settings_from(args: argparse.Namespace) -> Settings:
    """The effective settings for this command; a bad config file is a one-line usage error (exit 2)."""
    try:
        return load_settings(getattr(args, "config", None))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def positive_int(text: str) -> int:
    """An argparse type for a whole number >= 1, with a message that names the problem."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
