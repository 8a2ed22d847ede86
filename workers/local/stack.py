"""An embedded local stack (Redis, Celery workers, simulator, Flower) for a machine with nothing installed.

``LocalStack(settings).start()`` returns settings pointing at everything it started; ``stop()`` stops
exactly those things and nothing else, within about 10 s: every child runs in its own process group,
which is terminated, waited for briefly, then killed (``child_process``). Redis comes from an
explicit URL if given, else a private server (``redis_server``); workers and Flower are Celery
processes (``celery_processes``); the simulator, when no model is configured, runs in a thread of
this process. Logs and Redis data live in a temporary work folder, removed by ``stop()``; the folders
of stacks whose owner was SIGKILLed are removed by the next stack that starts. Given ``state_dir``, the
private Redis keeps its data there instead (append-only file, written out when it stops), and so does
the simulator (its files and batches, as a provider keeps them), so a later stack on the same folder
finds the same store and batches; a lock in it keeps two stacks off one folder. Errors:
``StackError(component,
problem, log_tail)`` (``errors``), raised once what
had started is stopped again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from signal import SIGTERM
from types import TracebackType
from typing import Any

from suture.config.listen_settings import http_url, reachable
from suture.config.redaction import mask_url
from suture.config.settings import Settings
from suture.workers.local.celery_processes import (
    START_TIMEOUT_S,
    child_env,
    flower_argv,
    http_answers,
    wait_for_workers,
    worker_roles,
)
from suture.workers.local.child_process import Child, alive, free_port, process_start, stop_children
from suture.workers.local.errors import StackError
from suture.workers.local.redis_server import (
    RedisNotFound,
    find_redis,
    private_config,
    redis_answers,
    redis_binary,
)

FLOWER_USER = "suture"
__all__ = ["LocalStack", "StackError", "child_env", "masked", "redis_binary"]


WORKDIR_PREFIX = "suture-stack-"
OWNER_FILE = "owner"  # "<pid> <process start>" of the process that owns a work folder
SIMULATOR_STATE = "simulator-batches.json"  # the simulator's files and batches, in ``state_dir``


def sweep_stale_workdirs(parent: Path) -> list[Path]:
    """Remove this user's stack work folders (logs, Redis data) whose owner was killed before it could."""
    removed = []
    for folder in parent.glob(f"{WORKDIR_PREFIX}*"):
        try:
            if folder.stat().st_uid != os.getuid():
                continue
            pid, _, started = (folder / OWNER_FILE).read_text().partition(" ")
            owner_alive = alive(int(pid), started.strip() or None)
        except (OSError, ValueError):  # not a folder of this version, or not ours to judge
            continue
        if not owner_alive:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def masked(url: str | None) -> str:
    """The URL with its credentials (``user:pass@``, ``?password=``) masked, safe to print or log."""
    return mask_url(url)


class LocalStack:
    """Start and stop suture's whole runtime locally; usable as a context manager.

    Start it from a thread that outlives it (every command uses the main thread): on Linux its
    children are told to die with the thread that started them.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        workers: int = 1,
        concurrency: int | None = None,
        flower: bool = False,
        flower_port: int = 0,
        redis_url: str | None = None,
        metrics_port: int | None = None,
        state_dir: Path | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.settings = settings
        self.workers = workers
        self.concurrency = concurrency or settings.worker.model_concurrency
        self.flower = flower
        self.flower_port = flower_port
        self.external_redis_url = redis_url or settings.redis_url
        self.state_dir = (
            state_dir  # where a private Redis keeps its data across stacks (None: the work folder)
        )
        self._dir_lock: int | None = None
        self.children: list[Child] = []
        self.simulator: Any = None
        self.flower_url: str | None = None
        self.flower_login: tuple[str, str] | None = None  # (user, password) when generated here
        self.redis_url: str | None = None
        self.workdir: Path | None = None
        self.started: Settings | None = None
        self.metrics_urls: list[str] = []  # one per worker: per-worker series, summed by Prometheus
        # The first worker's metrics port, the next ones counting up (a fixed Prometheus config); None: free
        # ones.
        self.metrics_port = metrics_port if metrics_port is not None else settings.worker.metrics_port

    def __enter__(self) -> Settings:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Settings:
        """Start every component; returns the settings pointing at them. On failure, stops and raises."""
        self.workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
        (self.workdir / OWNER_FILE).write_text(f"{os.getpid()} {process_start(os.getpid()) or ''}")
        sweep_stale_workdirs(self.workdir.parent)
        try:
            self.redis_url = self._start_redis()
            base_url = self._start_simulator()
            updates: dict[str, Any] = {
                "broker_url": self.settings.broker_url or self.redis_url,
                "result_backend": self.settings.result_backend or self.redis_url,
                "redis_url": self.redis_url,
            }
            if base_url:
                updates["openai_base_url"] = base_url
                if self.settings.sentry.environment is None:  # the workers' alerts say "simulation"
                    updates["sentry"] = self.settings.sentry.model_copy(update={"environment": "simulation"})
            self.started = self.settings.model_copy(update=updates)
            self._start_workers(self.started)
            if self.flower:
                self.flower_url = self._start_flower(self.started)
        except BaseException:
            self.stop()
            raise
        return self.started

    @property
    def private_redis(self) -> bool:
        """True if the stack runs its own Redis (its data goes when the stack stops)."""
        return self.external_redis_url is None

    @property
    def kept_store(self) -> bool:
        """True if the stack runs its own Redis whose data outlives it (in ``state_dir``)."""
        return self.private_redis and self.state_dir is not None

    def urls(self) -> dict[str, str]:
        """What is running where, passwords masked; the simulator is labelled as simulated."""
        shown = {"broker": masked(self.started.broker_url if self.started else None)}
        shown["store"] = masked(self.redis_url)
        if self.simulator is not None:
            shown["model"] = f"{self.simulator.base_url} (simulated model, not a real LLM)"
        if self.flower_url:
            shown["flower"] = self.flower_url
        if self.metrics_urls:
            shown["metrics"] = " ".join(self.metrics_urls)
        if self.workdir:
            shown["logs"] = str(self.workdir)
        return shown

    def exited(self) -> StackError | None:
        """The first child that has died since start, as an error naming it and its log, else None."""
        for child in self.children:
            code = child.process.poll()
            if code is not None:
                return StackError(child.name, f"exited with code {code}", child.log_tail())
        return None

    def stop(self, *, at_once: bool = False) -> None:
        """Stop everything this stack started, and nothing else; safe to call twice.

        Workers and Flower stop together (their warm shutdowns overlap), then Redis, which they
        need until they are gone, then the simulator, which answers their last calls. ``at_once``
        (an interrupted command): workers and Flower are killed, no call in flight is waited for.
        """
        redis_children = [c for c in self.children if c.name == "redis"]
        stop_children([c for c in self.children if c.name != "redis"], at_once=at_once)
        stop_children(redis_children)  # TERM: Redis writes its append-only file out, then exits
        self.children = []
        if self._dir_lock is not None:
            os.close(self._dir_lock)
            self._dir_lock = None
        self.metrics_urls = []
        if self.simulator is not None:
            with contextlib.suppress(Exception):
                self.simulator.stop()
            self.simulator = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    # -- components -------------------------------------------------------------------------------

    def _start_redis(self) -> str:
        try:  # the one way Redis is found, shared with the test suite's fixtures
            source = find_redis(self.external_redis_url)
        except RedisNotFound as exc:
            raise StackError("redis", str(exc)) from None
        if source.url:
            return source.url
        binary = source.binary
        assert binary is not None
        assert self.workdir is not None
        config, url = private_config(self._data_dir())
        # TERM: Redis writes its append-only file out and exits (at once for a work folder's small store).
        child = self._spawn("redis", [binary, "-"], stdin_text=config, death_signal=SIGTERM)
        self._wait(child, lambda: redis_answers(url))
        return url

    def _data_dir(self) -> Path:
        """The work folder, or ``state_dir`` made and locked for this stack (``StackError`` if in use)."""
        if self.state_dir is None:
            assert self.workdir is not None
            return self.workdir
        try:
            self.state_dir.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(self.state_dir / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise StackError("redis", f"cannot use {self.state_dir} for its data: {exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StackError("redis", f"{self.state_dir} is in use by another running command") from None
        self._dir_lock = fd
        return self.state_dir

    def _start_simulator(self) -> str | None:
        if self.settings.openai_api_key is not None or self.settings.openai_base_url:
            return None
        from suture.workers.simulator import start_from_settings

        kept = self.state_dir / SIMULATOR_STATE if self.kept_store and self.state_dir is not None else None
        # It binds listen.simulator_host (loopback unless configured otherwise).
        self.simulator = start_from_settings(self.settings, batch_state_file=kept)
        return str(self.simulator.base_url)

    def _start_workers(self, settings: Settings) -> None:
        names: list[str] = []
        for i in range(self.workers):
            for name, argv in worker_roles(i, self.concurrency):
                port = self.metrics_port + len(names) if self.metrics_port else free_port()
                host = settings.listen.metrics_host  # handed down: settings made in code reach it too
                env = child_env(settings) | {"SUTURE_WORKER__METRICS_PORT": str(port)}
                env["SUTURE_LISTEN__METRICS_HOST"] = host
                self._spawn(f"worker {name}", argv, env=env)
                self.metrics_urls.append(http_url(host, port, "/metrics"))
                names.append(name)
        wait_for_workers(settings.broker_url or "", names, self.children)

    def _start_flower(self, settings: Settings) -> str:
        port = self.flower_port or free_port()
        env = child_env(settings)
        if not env.get("FLOWER_BASIC_AUTH"):  # never an open UI, even on 127.0.0.1 (other local users)
            self.flower_login = (FLOWER_USER, secrets.token_urlsafe(18))
            env["FLOWER_BASIC_AUTH"] = ":".join(self.flower_login)  # in its environment, never argv
        host = settings.listen.flower_host
        child = self._spawn("flower", flower_argv(port, host), env=env)
        url = http_url(host, port)
        self._wait(child, lambda: http_answers(f"{http_url(reachable(host), port)}/healthcheck"))
        return url

    # -- process handling -------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str], **options: Any) -> Child:
        assert self.workdir is not None
        log_path = self.workdir / f"{name.split('@')[0].replace(' ', '-')}.log"
        child = Child.spawn(name, argv, log_path, **options)
        self.children.append(child)
        return child

    def _wait(self, child: Child, ready: Callable[[], bool], timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if child.process.poll() is not None:
                raise StackError(child.name, f"exited with code {child.process.returncode}", child.log_tail())
            if ready():
                return
            time.sleep(0.1)
        raise StackError(child.name, f"not ready within {timeout_s:g} s", child.log_tail())
