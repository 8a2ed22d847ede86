"""Child processes of the local stack: each in its own process group, logging to a file, stopped as a group.

A child's own session means Ctrl-C at the terminal reaches only its parent, which then stops the
children in order; stopping signals the child's group, so helpers it spawned go too, and never
anything the stack did not start. Every child still running is listed (``running()``) so a second
Ctrl-C can kill them all at once (``kill_all()``). On Linux the kernel also sends each child its
``death_signal`` if its parent dies without stopping it (SIGKILL, crash), so no stack outlives its
owner: Redis gets SIGTERM (it exits at once), Celery workers and Flower get SIGKILL (a worker's
warm or cold shutdown waits for model calls in flight; nobody is left to wait for). Beside them:
``alive(pid, started)`` tells whether a recorded process still runs (not a reused pid). No errors of
its own: ``OSError`` from ``Popen`` propagates.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# A worker's warm shutdown finishes the tasks in flight; past this the rest are killed, so a whole
# stack stops within 10 s (tasks are acknowledged late: a killed task's message is delivered again).
STOP_TIMEOUT_S = 4.0
LOG_TAIL_CHARS = 2000
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>

_running: dict[int, Child] = {}
# Reentrant: a second Ctrl-C's handler lists the children in the thread it interrupted, which may hold it.
_running_lock = threading.RLock()


@dataclass
class Child:
    """One subprocess in its own process group, its output in ``log_path``."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @classmethod
    def spawn(
        cls,
        name: str,
        argv: list[str],
        log_path: Path,
        *,
        env: dict[str, str] | None = None,
        stdin_text: str = "",
        death_signal: int = signal.SIGKILL,
    ) -> Child:
        """Start ``argv`` in a new session; ``stdin_text`` (e.g. a config holding a password) is piped in.

        Call it from a thread that lives as long as the child (the main thread): Linux sends the
        death signal when the *thread* that started the child ends, not only its process.
        """
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin_text else subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent(death_signal),
            )
        child = cls(name, process, log_path)
        with _running_lock:
            _running[process.pid] = child
        if stdin_text and process.stdin is not None:
            process.stdin.write(stdin_text.encode())
            process.stdin.close()
        return child

    def log_tail(self) -> str:
        """The end of the child's log, for error messages."""
        try:
            return self.log_path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
        except OSError:
            return ""

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the child's process group, unless the child has been reaped."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signum)


def stop_children(children: list[Child], timeout_s: float = STOP_TIMEOUT_S, *, at_once: bool = False) -> None:
    """TERM each child's process group, wait for all together, then KILL the groups still there.

    ``at_once``: KILL at once (an interrupted command: no model reply in flight is waited for).
    """
    running = [c for c in children if c.process.poll() is None]
    for child in running:
        child.signal_group(signal.SIGKILL if at_once else signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    for child in running:
        try:
            child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.signal_group(signal.SIGKILL)
            child.process.wait(timeout=timeout_s)
    _forget(children)


def running() -> list[Child]:
    """Every child started in this process and not yet stopped (for a stop-at-once)."""
    with _running_lock:
        return [c for c in _running.values() if c.process.poll() is None]


def kill_all(timeout_s: float = 2.0) -> int:
    """SIGKILL the group of every child still running (a second Ctrl-C); returns how many there were.

    Called from a signal handler that ends the process: the frame it interrupted may be inside
    ``Popen.wait`` on one of these children, holding that ``Popen``'s lock, so they are waited for
    here with ``waitpid`` directly (a ``Popen.wait`` would spin on the lock until its timeout).
    """
    children = running()
    for child in children:
        child.signal_group(signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    waiting = [child.process.pid for child in children]
    while waiting and time.monotonic() < deadline:
        waiting = [pid for pid in waiting if not _reaped(pid)]
        if waiting:
            time.sleep(0.01)
    with _running_lock:
        for child in children:
            if child.process.pid not in waiting:
                _running.pop(child.process.pid, None)
    return len(children)


def _reaped(pid: int) -> bool:
    """True once child ``pid`` has exited (reaped here, or already by its ``Popen``)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True


def _forget(children: list[Child]) -> None:
    with _running_lock:
        for child in children:
            if child.process.returncode is not None:
                _running.pop(child.process.pid, None)


def _die_with_parent(death_signal: int) -> Callable[[], None] | None:
    """A pre-exec hook asking the kernel to signal the child when this process dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    parent_pid = os.getpid()
    # Looked up here, in the parent: between fork and exec the child must not load libraries
    # (another thread of the parent may have held the loader's lock when it forked).
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, int(death_signal))
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return hook


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (Linux: clock ticks since boot), to tell a reused pid; None elsewhere."""
    fields = _proc_stat(pid)
    return fields[19] if fields else None


def _proc_stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (state first), or [] where there is none."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    # The command name is in parentheses and may hold spaces; what follows starts at field 3 (state).
    return stat_line.rsplit(")", 1)[-1].split()


def alive(pid: int, started: str | None) -> bool:
    """True if process ``pid`` runs and (where known) is the one that started at ``started``."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the pid now belongs to another user's process
        return False
    fields = _proc_stat(pid)
    if fields and fields[0] == "Z":  # killed, not yet reaped by its parent
        return False
    return started is None or not fields or fields[19] == started


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
