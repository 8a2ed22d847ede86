"""Compare config/defaults.yaml with the settings models' defaults, and rewrite its values from them.

The models define each default; the YAML documents each one beside its value. ``python -m
tools.defaults`` rewrites the YAML's values from the models in place (comments and layout kept, one
line at a time), and ``tests/config/test_defaults_file.py`` fails when the two differ.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import yaml
from pydantic import BaseModel

from suture.config.settings import DEFAULTS_FILE, Settings

# Settings with no default to document: connection URLs and secrets (from the environment or the user).
UNDOCUMENTED = {
    "broker_url",
    "result_backend",
    "redis_url",
    "openai_api_key",
    "openai_base_url",
    "sentry_dsn",
}


def model_defaults() -> dict[str, Any]:
    """Every default of the settings models, as the YAML would write it."""
    found: dict[str, Any] = {}
    for name, field in Settings.model_fields.items():
        if name in UNDOCUMENTED:
            continue
        value = field.get_default(call_default_factory=True)
        found[name] = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    return found


def differences(documented: dict[str, Any], defaults: dict[str, Any], prefix: str = "") -> list[str]:
    """Each key where the YAML and the models disagree, or which the YAML leaves out, as one line."""
    found: list[str] = []
    for key, model_value in defaults.items():
        path = f"{prefix}{key}"
        if key not in documented:
            found.append(f"{path}: missing from defaults.yaml (model {model_value!r})")
            continue
        value = documented[key]
        if isinstance(model_value, dict) and model_value and isinstance(value, dict):
            found += differences(value, model_value, f"{path}.")
        elif isinstance(model_value, dict) and not model_value:
            continue  # a data table (prices, policies, per-model limits): the YAML is its one home
        elif value != model_value:
            found.append(f"{path}: defaults.yaml {value!r}, model {model_value!r}")
    found += [f"{prefix}{key}: in defaults.yaml, not a setting" for key in documented if key not in defaults]
    return found


def rewrite(text: str, defaults: dict[str, Any]) -> str:
    """The YAML text with each scalar value that differs from the models' replaced, comments kept."""
    lines = text.splitlines(keepends=True)
    stack: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        match = re.match(r"^(\s*)([A-Za-z_][\w-]*):(\s*)([^#\n]*?)(\s*#.*)?$", line.rstrip("\n"))
        if not match:
            continue
        indent = len(match.group(1))
        stack = [(depth, key) for depth, key in stack if depth < indent] + [(indent, match.group(2))]
        wanted = _lookup(defaults, [key for _, key in stack])
        if not match.group(4) or isinstance(wanted, dict) or wanted is _MISSING:
            continue
        rendered = yaml.safe_dump(wanted, default_flow_style=True, width=1000).strip().removesuffix("...")
        if yaml.safe_load(match.group(4)) != wanted:
            comment = match.group(5) or ""
            lines[index] = f"{match.group(1)}{match.group(2)}:{match.group(3)}{rendered.strip()}{comment}\n"
    return "".join(lines)


_MISSING = object()


def _lookup(tree: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(tree, dict) or key not in tree:
            return _MISSING
        tree = tree[key]
    return tree


def main() -> int:
    """Rewrite defaults.yaml from the models, then list what still needs a hand (a missing key)."""
    text = DEFAULTS_FILE.read_text(encoding="utf-8")
    DEFAULTS_FILE.write_text(rewrite(text, model_defaults()), encoding="utf-8")
    left = differences(yaml.safe_load(DEFAULTS_FILE.read_text(encoding="utf-8")), model_defaults())
    for line in left:
        print(f"defaults.yaml: {line}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    raise SystemExit(main())
