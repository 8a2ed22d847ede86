"""Child processes of the local stack: each in its own process group, logging to a file, stopped as a group.

A child's own session means Ctrl-C at the terminal reaches only its parent (``suture up``), which then
stops children in order; stopping signals the child's group, so helpers it spawned go too, and never
anything the stack did not start. On Linux a child is also TERMed by the kernel if its parent dies
without stopping it (SIGKILL, crash), so no stack outlives its owner. No errors of its own: ``OSError``
from ``Popen`` propagates.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

STOP_TIMEOUT_S = 15.0
LOG_TAIL_CHARS = 2000
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


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
    ) -> Child:
        """Start ``argv`` in a new session; ``stdin_text`` (e.g. a config holding a password) is piped in."""
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin_text else subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )
        if stdin_text and process.stdin is not None:
            process.stdin.write(stdin_text.encode())
            process.stdin.close()
        return cls(name, process, log_path)

    def log_tail(self) -> str:
        """The end of the child's log, for error messages."""
        try:
            return self.log_path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
        except OSError:
            return ""


def stop_children(children: list[Child], timeout_s: float = STOP_TIMEOUT_S) -> None:
    """TERM each child's process group, wait for all together, then KILL the groups still there."""
    running = [c.process for c in children if c.process.poll() is None]
    for process in running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    for process in running:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout_s)


def _die_with_parent() -> Callable[[], None] | None:
    """A pre-exec hook asking the kernel to TERM the child when this process dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    parent_pid = os.getpid()

    def hook() -> None:
        # Runs in the child between fork and exec. The death signal is tied to the forking thread,
        # so stacks must be started from a thread that lives as long as they do (the main thread).
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return hook


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
