"""A policy's declarative form read from the text of a YAML file a user named, never quoting it back.

The CLI reads the file on the producer's machine (``suture.workers.cli.policy_arg``) and hands its
bytes here; what comes back is plain JSON data (mappings with text keys, lists, text, numbers,
booleans, null), stored with the job spec as ``policy_rules``, so no worker ever opens a path. Every
error is a ``PolicyError`` that names a place (line and column, a field, a key's position) and the
expected type, never the file's content: a file holding a secret does not echo it into an error, a
job's reason or the store. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from suture.tasks.policy import PolicyError
from suture.tasks.policy_text import value_kind as kind

# Values (YAML aliases counted each time they are used) and nesting a policy's rules may hold: a
# real policy has a few dozen; more is an alias bomb or not a policy.
MAX_VALUES = 10_000
MAX_DEPTH = 16


def rules_from_yaml(name: str, raw: bytes) -> dict[str, Any]:
    """The policy mapping that ``raw`` (a YAML file's bytes) holds, as plain JSON data; raises
    ``PolicyError``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(name, None, "file", f"is not UTF-8 text (byte {exc.start + 1})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        raise PolicyError(name, None, "file", f"not valid YAML{_where(exc)}: {_problem(exc)}") from None
    except yaml.YAMLError:
        raise PolicyError(name, None, "file", "not valid YAML") from None
    return plain_rules(name, data)


def plain_rules(name: str, data: Any) -> dict[str, Any]:
    """A policy's declarative form as plain JSON data (text keys; text, numbers, booleans, null, lists,
    mappings), within ``MAX_VALUES`` and ``MAX_DEPTH``; raises ``PolicyError``. Rules given as data
    (``enqueue(policy_rules=...)``) pass here as a file's do."""
    if not isinstance(data, dict):
        raise PolicyError(name, None, "policy", f"must be a mapping, got {kind(data)}")
    plain: dict[str, Any] = _plain(name, data, [0], 0)
    return plain


def _where(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


def _problem(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's problem with quoted content longer than a few characters cut out (it may be a secret)."""
    problem = " ".join(str(exc.problem or "cannot parse").split())
    return re.sub(r"'[^']{4,}'|\"[^\"]*\"", "'…'", problem)[:200]


def _plain(name: str, value: Any, count: list[int], depth: int) -> Any:
    """A copy of ``value`` as JSON data, within ``MAX_VALUES`` and ``MAX_DEPTH``; raises ``PolicyError``."""
    count[0] += 1
    if count[0] > MAX_VALUES or depth > MAX_DEPTH:
        problem = f"holds more than {MAX_VALUES:,} values or {MAX_DEPTH} levels (YAML aliases included)"
        raise PolicyError(name, None, "file", problem)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_plain(name, item, count, depth + 1) for item in value]
    if isinstance(value, dict):
        copy: dict[str, Any] = {}
        for position, (key, item) in enumerate(value.items(), start=1):
            if not isinstance(key, str):
                raise PolicyError(
                    name, None, f"key {position}", f"a field name must be text, got {kind(key)}"
                )
            copy[key] = _plain(name, item, count, depth + 1)
        return copy
    raise PolicyError(
        name, None, "file", f"holds {kind(value)}; only text, numbers, lists and mappings are allowed"
    )
