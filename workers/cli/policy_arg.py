"""``--policy NAME|FILE``: a configured policy's name, or a YAML file the user named, read here.

A name from the settings (``policies``) passes as it is. Anything else that names a file (it ends in
``.yaml``/``.yml``, holds a path separator, or exists) is read on this machine, the producer's, at
most ``max_policy_file_bytes`` (refused by its size before it is read), parsed by
``suture.tasks.policy_yaml`` and checked as a policy; its content then travels with the job as data
(``JobSpec.policy_rules``), named after the file's stem. A worker never opens the path. Any other
value is left to ``enqueue``, which refuses it as an unknown policy, listing the configured ones.
Every problem is a one-line ``UsageError`` that names the field and the expected type, never the
file's content.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.workers.cli import UsageError
from suture.workers.cli.common import read_bounded


@dataclass(frozen=True)
class PolicyArg:
    """What ``--policy`` chose: a policy name, and the rules of a user's file (None for a configured name)."""

    name: str | None = None
    rules: dict[str, Any] | None = None


def policy_arg(value: str | None, settings: Settings) -> PolicyArg:
    """The policy ``--policy value`` names; a file is read and checked here (``UsageError`` if it cannot be
    used)."""
    from suture.tasks.policy import PolicyError, policy_from_mapping
    from suture.tasks.policy_yaml import rules_from_yaml

    if not value or value in settings.policies or not _names_a_file(value):
        return PolicyArg(value)
    raw = read_bounded(value, settings.max_policy_file_bytes, setting="max_policy_file_bytes")
    name = Path(value).stem or "file"
    try:
        rules = rules_from_yaml(name, raw)
        policy_from_mapping(name, rules, settings)
    except PolicyError as exc:
        raise UsageError(str(exc)) from None
    return PolicyArg(name, rules)


def _names_a_file(value: str) -> bool:
    seps = (os.sep, os.altsep) if os.altsep else (os.sep,)
    return value.endswith((".yaml", ".yml")) or any(sep in value for sep in seps) or Path(value).exists()
