"""Where the user's settings file came from, and what a file the user did not name may not do.

The user YAML is ``--config``, else ``$SUTURE_CONFIG``, else ``./suture.yaml`` if the working
directory holds one. The first two are named by the user; the third is whatever folder the command
runs in (a cloned repository, a shared folder, an unpacked course archive), so:

- when ``./suture.yaml`` is used, its path is named on stderr once per process;
- it may not send a key it did not set somewhere else: if it sets ``openai_base_url`` while
  ``openai_api_key`` comes from the environment or the CLI, the settings are refused
  (``ConfigError`` naming both), since the key and every document would go to that host. The base
  URL may come from the environment, the CLI, a file the user named, or be the provider's default.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

LOCAL_FILE = "suture.yaml"
# An existing Redis for the embedded stack to use instead of starting one (`suture up`/`batch`, the tests).
STACK_REDIS_ENV = "REDIS_URL"
BASE_URL_ENV = ("SUTURE_OPENAI_BASE_URL", "OPENAI_BASE_URL")
_announced: set[Path] = set()


@dataclass(frozen=True)
class ConfigFile:
    """The user YAML and who named it: ``cli`` (--config), ``env`` ($SUTURE_CONFIG) or ``cwd`` (found)."""

    path: Path
    origin: Literal["cli", "env", "cwd"]


def find_config_file(explicit: str | Path | None, environ: Mapping[str, str]) -> ConfigFile | None:
    """Pick the user YAML: --config, then $SUTURE_CONFIG, then ./suture.yaml if present."""
    if explicit:
        return ConfigFile(Path(explicit), "cli")
    if environ.get("SUTURE_CONFIG"):
        return ConfigFile(Path(environ["SUTURE_CONFIG"]), "env")
    local = Path(LOCAL_FILE)
    return ConfigFile(local, "cwd") if local.is_file() else None


def user_config_file(explicit: str | Path | None, environ: Mapping[str, str]) -> Path | None:
    """The user YAML's path (see ``find_config_file``), or None."""
    found = find_config_file(explicit, environ)
    return found.path if found else None


def announce(found: ConfigFile | None) -> None:
    """Name a working-directory settings file on stderr, once per process: the user did not name it."""
    if found is None or found.origin != "cwd":
        return
    where = found.path.resolve()
    if where in _announced:
        return
    _announced.add(where)
    print(
        f"suture: using settings from {where} (found in the working directory; "
        "--config or SUTURE_CONFIG names another)",
        file=sys.stderr,
    )


def endpoint_problem(
    found: ConfigFile | None,
    overrides: Mapping[str, Any],
    environ: Mapping[str, str],
    key_set: bool,
) -> str | None:
    """Why these settings may not be used, if a working-directory file redirects a key it did not set."""
    if found is None or found.origin != "cwd" or not key_set:
        return None
    data = _read_yaml(found.path)
    if not data.get("openai_base_url") or "openai_base_url" in overrides or _env_has(environ, BASE_URL_ENV):
        return None
    if "openai_api_key" in data and "openai_api_key" not in overrides and not _env_has(environ, KEY_ENV):
        return None  # the key comes from the same file: the file sends only its own key
    return (
        f"{found.path.resolve()} (found in the working directory) sets openai_base_url to "
        f"{_host(data['openai_base_url'])} while the API key comes from the environment or the command "
        "line; a file you did not name may not send your key and documents elsewhere: name it with "
        "--config (or SUTURE_CONFIG), or set OPENAI_BASE_URL yourself"
    )


KEY_ENV = ("SUTURE_OPENAI_API_KEY", "OPENAI_API_KEY")


def _env_has(environ: Mapping[str, str], names: tuple[str, ...]) -> bool:
    wanted = {name.upper() for name in names}
    return any(name.upper() in wanted and value for name, value in environ.items())


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return {}  # the settings loader reports an unreadable file itself
    return data if isinstance(data, dict) else {}


def _host(url: Any) -> str:
    from suture.config.redaction import mask_url

    return repr(mask_url(str(url))[:200])


def environment() -> Mapping[str, str]:
    """This process's environment: every other package reads it through here (config/ is the edge)."""
    return os.environ


def stack_redis_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The Redis an embedded stack uses instead of starting its own (``$REDIS_URL``), or None."""
    return (environment() if environ is None else environ).get(STACK_REDIS_ENV) or None


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """This user's state folder: ``$XDG_STATE_HOME``, else ``~/.local/state``."""
    env = environment() if environ is None else environ
    given = env.get("XDG_STATE_HOME")
    return Path(given) if given else Path(env.get("HOME") or Path.home()) / ".local" / "state"
