"""``suture config show``: the effective settings, each with where it came from, secrets masked.

Sources, highest first: ``cli`` (``--set KEY=VALUE``), ``env`` (``SUTURE_*`` and the conventional
``OPENAI_API_KEY``/``OPENAI_BASE_URL``/``SENTRY_DSN``), ``yaml`` (``--config``, ``$SUTURE_CONFIG``
or ./suture.yaml), ``default`` (the packaged config/defaults.yaml or the code's default).
Secret values never print: API keys and DSNs show as ``***``; credentials inside URLs, in any form
(``user:pass@``, ``?password=``), are masked by ``suture.config.redaction``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from suture.config.redaction import MASK, redact
from suture.config.settings import DEFAULTS_FILE, ConfigError, Settings, load_settings, user_config_file
from suture.config.sources import environment
from suture.workers.cli import UsageError

SECRET_FIELDS = frozenset({"openai_api_key", "sentry_dsn"})
ENV_ALIASES = {
    "openai_api_key": ("OPENAI_API_KEY",),
    "openai_base_url": ("OPENAI_BASE_URL",),
    "sentry_dsn": ("SENTRY_DSN",),
}


def register(subparsers: Any) -> None:
    """Add ``config show``."""
    parser = subparsers.add_parser("config", help="show the effective settings and their sources")
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print every setting with its source (cli/env/yaml/default)")
    show.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting as the CLI would (dotted keys, YAML values), repeatable",
    )
    show.add_argument("--json", action="store_true", help="print JSON instead of aligned text")
    show.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the effective settings with sources; 2 if the configuration is unusable."""
    overrides = parse_overrides(args.overrides)
    try:
        settings = load_settings(getattr(args, "config", None), overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    user_yaml = user_config_file(getattr(args, "config", None), environment())
    rows = effective_rows(settings, overrides, _yaml(user_yaml), _yaml(DEFAULTS_FILE), environment())
    if args.json:
        json.dump({key: {"value": v, "source": s} for key, v, s in rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    width = max(len(key) for key, _, _ in rows)
    for key, value, source in rows:
        print(f"{key:<{width}}  {json.dumps(value, ensure_ascii=False):<40}  ({source})")
    return 0


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["client.timeout_s=30"]`` -> ``{"client": {"timeout_s": 30}}`` (values read as YAML)."""
    nested: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            value = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError:
            value = raw
        node = nested
        *parents, leaf = key.strip().split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def effective_rows(
    settings: Settings,
    cli: Mapping[str, Any],
    user_yaml: Mapping[str, Any],
    defaults: Mapping[str, Any],
    environ: Mapping[str, str],
) -> list[tuple[str, Any, str]]:
    """(dotted key, masked value, source) for every setting, in field order."""
    secrets = settings.secrets()
    rows = []
    for key, value in _flatten(settings):
        path = key.split(".")
        if path[0] in SECRET_FIELDS and value is not None:
            value = MASK
        rows.append((key, _mask(value, secrets), _source(path, cli, user_yaml, defaults, environ)))
    return rows


def _flatten(settings: Settings) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            out += _flatten_section(name, value)
        elif isinstance(value, dict) and value:
            dumped = {
                k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v for k, v in value.items()
            }
            out += [(f"{name}.{k}", v) for k, v in dumped.items()]
        else:
            out.append((name, value.get_secret_value() if hasattr(value, "get_secret_value") else value))
    return out


def _flatten_section(prefix: str, section: BaseModel) -> list[tuple[str, Any]]:
    """A section's fields as dotted keys; a section inside it (``simulator.faults``) is expanded too."""
    out: list[tuple[str, Any]] = []
    for key, dumped in section.model_dump(mode="json").items():
        value = getattr(section, key)
        if isinstance(value, BaseModel):
            out += _flatten_section(f"{prefix}.{key}", value)
        else:
            out.append((f"{prefix}.{key}", dumped))
    return out


def _source(
    path: list[str],
    cli: Mapping[str, Any],
    user_yaml: Mapping[str, Any],
    defaults: Mapping[str, Any],
    environ: Mapping[str, str],
) -> str:
    if _has(cli, path):
        return "cli"
    env_names = ["SUTURE_" + "__".join(p.upper() for p in path[:i]) for i in range(1, len(path) + 1)]
    env_names += ENV_ALIASES.get(path[0], ())
    if any(name in environ for name in env_names):
        return "env"
    if _has(user_yaml, path):
        return "yaml"
    return "default"


def _has(tree: Mapping[str, Any], path: list[str]) -> bool:
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _mask(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: _mask(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, secrets) for v in value]
    return value


def _yaml(path: Path | None) -> dict[str, Any]:
    if path is None or not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"cannot read {path}: {' '.join(str(exc).split())}") from None
    return data if isinstance(data, dict) else {}
