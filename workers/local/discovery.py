"""Where other shells find a running ``suture up``, and the settings a producer uses when nothing is
configured.

``suture up`` publishes its stack in a state file that only its user can read (0600, in a 0700
folder): ``$XDG_RUNTIME_DIR/suture/stack.json`` (a per-user tmpfs, emptied at logout), else
``$XDG_CACHE_HOME/suture/stack.json`` (default ``~/.cache/suture/stack.json``). It holds the stack's
URLs *with their password*, so it is a secret: nothing prints it but ``suture up --env``, which a
user asks for; ``up`` removes it when it stops. A file whose ``up`` is gone (SIGKILLed, crashed) is
stale: ignored and removed. A file not owned by this user, or readable by others, is ignored.

``resolve(settings)`` is the one place a producer (the job commands, ``stats``, the Python API)
decides where the broker is: configured settings (CLI > ENV > YAML) always win; else the running
local stack; else ``NoBrokerConfigured``, naming the ways out. There is no default Redis: the store's
and the broker's URLs (``store_url``, ``broker_url``) raise the same error for settings never resolved.
``resolve_for_worker`` does the same for a worker process and keeps the answer for its tasks.
``find()`` is the same look-up for commands that would otherwise start a stack of their own.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.config.sources import environment
from suture.workers.local.child_process import alive
from suture.workers.local.errors import NoBrokerConfigured, StackError

STATE_FILE = "stack.json"
EXPORTED = {
    "broker_url": "SUTURE_BROKER_URL",
    "result_backend": "SUTURE_RESULT_BACKEND",
    "redis_url": "SUTURE_REDIS_URL",
    "openai_base_url": "SUTURE_OPENAI_BASE_URL",
}


@dataclass(frozen=True)
class StackAddress:
    """How to reach one running local stack; ``pid`` is its ``suture up``."""

    pid: int
    broker_url: str
    result_backend: str
    redis_url: str
    openai_base_url: str | None = None  # the stack's simulator, when it runs one
    simulated: bool = False
    process_start: str | None = None  # tells a pid reused by another process from ``up`` itself

    def applied_to(self, settings: Settings) -> Settings:
        """``settings`` pointing at this stack's broker, result backend and store."""
        urls = {"broker_url": self.broker_url, "result_backend": self.result_backend}
        return settings.model_copy(update=urls | {"redis_url": self.redis_url})

    def environment(self) -> dict[str, str]:
        """The ``SUTURE_*`` variables that point a process at this stack (they hold its password)."""
        return {variable: value for field, variable in EXPORTED.items() if (value := getattr(self, field))}

    def exports(self) -> str:
        """POSIX shell ``export`` lines for other tools (they hold the password: printed on request only)."""
        lines = [f"# the local stack of `suture up` (pid {self.pid}); these URLs hold its password"]
        if self.simulated:
            lines.append("# its model is the suture SIMULATOR, a simulation, not a real model")
        lines += [f"export {name}={shlex.quote(value)}" for name, value in self.environment().items()]
        return "\n".join(lines) + "\n"


def state_path(environ: Mapping[str, str] | None = None) -> Path:
    """The state file's path for this user (see the module docstring for the choice)."""
    env = environment() if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "suture" / STATE_FILE
    cache = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(cache) / "suture" / STATE_FILE


def configured(settings: Settings) -> bool:
    """True if the settings name a broker, result backend or store (then no local stack is looked for)."""
    return bool(settings.broker_url or settings.result_backend or settings.redis_url)


def resolve(settings: Settings) -> Settings:
    """The settings a producer uses: as configured, else pointing at the running local stack.

    Raises NoBrokerConfigured when nothing is configured and no ``suture up`` runs for this user.
    """
    if configured(settings):
        return settings
    address = find()
    if address is None:
        raise NoBrokerConfigured()
    return address.applied_to(settings)


def resolve_for_worker(settings: Settings) -> Settings:
    """A worker's settings, resolved as ``resolve`` does, and kept for the whole process.

    When the stack was found (nothing configured), its variables go into this process's environment,
    so every later ``load_settings()`` (each task's, each forked child's) reads the same stack.
    """
    if configured(settings):
        return settings
    address = find()
    if address is None:
        raise NoBrokerConfigured()
    os.environ.update(address.environment())
    return address.applied_to(settings)


def find(environ: Mapping[str, str] | None = None) -> StackAddress | None:
    """The running local stack of this user, or None (a stale state file is removed on the way)."""
    path = state_path(environ)
    address = _read(path)
    if address is None:
        return None
    if not alive(address.pid, address.process_start):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return address


def publish(address: StackAddress, environ: Mapping[str, str] | None = None) -> Path:
    """Write the state file (0600) for other shells; raises StackError if another stack runs or it cannot."""
    path = state_path(environ)
    try:
        return _publish(address, path, environ)
    except OSError as exc:
        raise StackError(
            "local stack", f"cannot write its state file {path}: {exc.strerror or exc}"
        ) from None


def _publish(address: StackAddress, path: Path, environ: Mapping[str, str] | None) -> Path:
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not _private(folder):
        raise StackError("local stack", f"{folder} must belong to you and be closed to others (chmod 700)")
    tmp = folder / f".{STATE_FILE}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(asdict(address), out)
    try:
        for _ in range(2):  # a second try once a stale file is out of the way
            try:
                os.link(tmp, path)  # fails if the file exists: two stacks never overwrite each other
                return path
            except FileExistsError:
                running = find(environ)
                if running is not None:
                    raise StackError(
                        "local stack", f"another one is running (suture up, pid {running.pid}); stop it first"
                    ) from None
                with contextlib.suppress(OSError):  # unreadable or stale: nobody is behind it
                    path.unlink()
        raise StackError("local stack", f"cannot write {path}")
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def withdraw(pid: int, environ: Mapping[str, str] | None = None) -> None:
    """Remove the state file if it is the one process ``pid`` published."""
    path = state_path(environ)
    address = _read(path)
    if address is not None and address.pid == pid:
        with contextlib.suppress(OSError):
            path.unlink()


def _read(path: Path) -> StackAddress | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8") as source:
        if not _private(path, fd=source.fileno()):
            return None  # not written by this user's `suture up`: never trusted
        try:
            raw: Any = json.load(source)
            return StackAddress(**raw)
        except (ValueError, TypeError):
            return None


def _private(path: Path, *, fd: int | None = None) -> bool:
    info = os.fstat(fd) if fd is not None else os.stat(path)
    closed = not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    return info.st_uid == os.getuid() and closed
