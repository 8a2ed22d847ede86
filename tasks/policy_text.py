"""How policy errors speak of a value: by its kind and, for a name that looks like a field, its name.

A policy's text may be anything a user's file holds (a secret too); an error names the field and the
expected type and never echoes the value's text. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")


def value_kind(value: Any) -> str:
    """What ``value`` is, for an error, without its text (a number is shown: it holds no secret)."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return f"text of {len(value)} characters" if value else "empty text"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def shown_name(value: Any) -> str | None:
    """``value`` quoted if it looks like a field name (an identifier of at most 32 characters), else None:
    a policy's text may be anything a user's file holds, a secret too, and errors never echo it."""
    return repr(value) if isinstance(value, str) and _FIELD_NAME.fullmatch(value) else None
