"""How a command stops when asked to: Ctrl-C (SIGINT), SIGTERM, or its terminal closing (SIGHUP).

The first of these signals raises ``Interrupted`` in the main thread, so every ``with`` and
``finally`` on the way out runs: a local stack stops its children, the simulator its server, a
thread pool drops the jobs it had not started. ``Shutdown.leave`` then runs the command's interrupt
hooks (``on_interrupt``), prints the one line the command set (``farewell``: what was kept, how to
go on) and ends the process at once: threads still blocked on a model reply are abandoned, not
waited for. A second signal, or a stop still running ``GRACE_S`` after the first, kills every child
process still running and ends the process at once (signals after that are ignored: a stop never
nests in a stop), so nothing a command started outlives it by more than about 10 s. Errors::

    Interrupted(signum)   a KeyboardInterrupt: the command was asked to stop (exit code 128 + signum)
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from suture.workers.local.child_process import kill_all

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# From the first signal to the end of the process, at most: children then get no more time.
GRACE_S = 8.0


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop by ``signum``; raised once, in the main thread."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"


class Shutdown:
    """One command's way of stopping: its signal handlers, its interrupt hooks and its last line."""

    def __init__(self, command: str, argv: Sequence[str] = ()) -> None:
        self.command = command
        self.argv = list(argv)
        self.signum: int | None = None
        self._farewell: Callable[[], str] | None = None
        self._exit_code: int | None = None
        self._hooks: list[Callable[[], None]] = []
        self._previous: dict[int, Any] = {}
        self._said = False
        self._saying = threading.RLock()  # reentrant: a second signal may land while the line is printed
        self._held = 0
        self._deferred: int | None = None

    def rerun(self) -> str:
        """The command line that runs this command again, quoted for a POSIX shell."""
        return shlex.join([*_program(), *self.argv])

    def farewell(self, build: Callable[[], str], *, exit_code: int | None = None) -> None:
        """Set the one line printed when the command is stopped; ``exit_code`` replaces 128 + signum."""
        self._farewell = build
        self._exit_code = exit_code

    def on_interrupt(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` once the command has unwound, before its last line (e.g. write what finished)."""
        self._hooks.append(hook)

    def install(self) -> Shutdown:
        """Take over the stop signals (from the main thread only; elsewhere this does nothing)."""
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._first)
        return self

    def restore(self) -> None:
        """Give the stop signals back to whoever had them before ``install``."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous = {}

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold a first stop signal until the block ends: what must be done whole (a finished job's
        ledger line, report entry and files) is, and the command stops right after it."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if self._held == 0 and self._deferred is not None:
                signum, self._deferred = self._deferred, None
                self._first(signum, None)

    def leave(self, exc: Interrupted) -> NoReturn:
        """End an interrupted command: hooks, then every child gone, then its one line, then exit."""
        for hook in self._hooks:
            try:
                hook()
            except Exception as error:  # a hook must not stop the rest of the shutdown
                _say(f"suture {self.command}: while stopping: {type(error).__name__}: {error}")
        kill_all()  # nothing should be left; a signal in the middle of a stop may have cut it short
        self._say_once(self._line())
        self._exit(exc.signum)

    # -- signal handlers ---------------------------------------------------------------------------

    def _first(self, signum: int, frame: FrameType | None) -> None:
        self.signum = signum
        if self._held:  # raised when the held block ends (a second signal still stops at once)
            self._deferred = signum
            for each in STOP_SIGNALS:
                signal.signal(each, self._again)
            return
        # Threads left waiting on a model (or a simulator now stopping) would log their retries: noise.
        logging.disable(logging.CRITICAL)
        for each in STOP_SIGNALS:
            signal.signal(each, self._again)
        threading.Thread(target=self._deadline, name="suture-stop-deadline", daemon=True).start()
        raise Interrupted(signum)

    def _again(self, signum: int, frame: FrameType | None) -> None:
        self._hard_stop(signum, "stopped at once on a second signal")

    def _deadline(self) -> None:
        time.sleep(GRACE_S)
        self._hard_stop(self.signum or signal.SIGTERM, f"stopped at once: still stopping after {GRACE_S:g} s")

    def _hard_stop(self, signum: int, why: str) -> NoReturn:
        # More presses must not nest more stops in this one: each would wait on the same children
        # again, until the nesting overflowed the stack and the command died with a traceback.
        if threading.current_thread() is threading.main_thread():
            for each in STOP_SIGNALS:
                signal.signal(each, signal.SIG_IGN)
        killed = kill_all()
        detail = f"; {killed} child process(es) killed" if killed else ""
        self._say_once(f"{self._line()} ({why}{detail})")
        self._exit(signum, forced=True)

    def _line(self) -> str:
        fallback = f"suture {self.command}: interrupted; to run it again: {self.rerun()}"
        try:
            return self._farewell() if self._farewell else fallback
        except Exception:  # the line must come out whatever state the command was left in
            return fallback

    def _say_once(self, line: str) -> None:
        with self._saying:  # the deadline thread and a second signal may both end the command
            if not self._said:
                self._said = True
                _say(line)

    def _exit(self, signum: int, *, forced: bool = False) -> NoReturn:
        code = self._exit_code if self._exit_code is not None and not forced else 128 + signum
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


_current: Shutdown | None = None


def install(command: str, argv: Sequence[str]) -> Shutdown:
    """Make a ``Shutdown`` for this command the process's own and take over the stop signals."""
    global _current
    _current = Shutdown(command, argv).install()
    return _current


def current() -> Shutdown:
    """The running command's ``Shutdown`` (a detached one when the command was not started by the CLI)."""
    return _current if _current is not None else Shutdown("?")


def uninstall() -> None:
    """Restore the signals taken by ``install`` (for a command run inside a longer-lived process)."""
    global _current
    if _current is not None:
        _current.restore()
    _current = None


def _program() -> list[str]:
    """How this process was started, as its user can type it again: ``suture`` when PATH finds this one."""
    started = Path(sys.argv[0])
    on_path = shutil.which("suture")
    if started.name == "suture":
        same = on_path is not None and Path(on_path).resolve() == started.resolve()
        return ["suture"] if same else [sys.argv[0]]
    if on_path is not None and Path(on_path).parent == Path(sys.executable).parent:
        return ["suture"]
    return [sys.executable, "-m", "suture"]  # python -m suture


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except RuntimeError:  # a signal landed while the command itself printed to stderr: go past its buffer
        with contextlib.suppress(OSError):
            os.write(2, f"{line}\n".encode())
    except (OSError, ValueError):  # a closed terminal (SIGHUP) cannot be written to
        pass
