"""Commands that stop cleanly: Ctrl-C, SIGTERM and a SIGKILLed parent, checked by process ids.

Each test starts a real `suture batch|generate|eval` subprocess with no broker and no model
configured (so it starts its own Redis, Celery workers and simulator), signals it while jobs are in
flight, and checks that every process it started is gone within 10 s and that it said, in one line,
what was kept and how to go on. (`suture up` is checked the same way in test_stack.py.)
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from suture.workers.local import shutdown
from tests.fixtures.processes import alive, children, still_running, wait_for_children

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
STOP_BOUND_S = 10.0
NOISE = ("Traceback", "Task was destroyed", "transport retry", "Exception ignored")


def start(tmp_path: Path, *args: str, latency_scale: str = "1") -> subprocess.Popen[str]:
    """`suture ARGS` as a user starts it: nothing configured, a home of its own, the simulator at real
    speed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "REDIS_URL"))}
    env |= {"HOME": str(tmp_path), "SUTURE_SIMULATOR__LATENCY_SCALE": latency_scale}
    env.pop("XDG_RUNTIME_DIR", None)  # no `suture up` to find: the command starts what it needs
    return subprocess.Popen(
        [sys.executable, "-m", "suture", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(process: subprocess.Popen[str], *signums: int) -> tuple[int, str, float]:
    """Send the signals (0.3 s apart); returns the exit code, stderr, and when the first was sent."""
    sent = time.monotonic()
    for i, signum in enumerate(signums):
        if i:
            time.sleep(0.3)
        process.send_signal(signum)
    try:
        _, stderr = process.communicate(timeout=STOP_BOUND_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    return process.returncode, stderr, sent


def stop_pressing_again(process: subprocess.Popen[str]) -> tuple[int, str, float]:
    """Ctrl-C, then Ctrl-C again every 20 ms while the process runs; as ``stop``."""
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    while process.poll() is None and time.monotonic() - sent < STOP_BOUND_S:
        time.sleep(0.02)
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=STOP_BOUND_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    return process.returncode, stderr, sent


def wait_for_line(path: Path, timeout_s: float = 60.0) -> None:
    """Wait until ``path`` has a line (the batch wrote its first job to its manifest)."""
    deadline = time.monotonic() + timeout_s
    while not (path.is_file() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} still empty after {timeout_s:g} s"
        time.sleep(0.1)


def check_one_line(stderr: str, command: str, args: list[str]) -> str:
    """The command's last line says it was stopped and how to go on; nothing noisy came before it."""
    lines = stderr.strip().splitlines()
    assert not [line for line in lines if any(n in line for n in NOISE)], stderr
    farewell = [line for line in lines if "interrupted" in line or "stopped" in line]
    assert farewell == [lines[-1]], stderr
    assert lines[-1].startswith(f"suture {command}: interrupted;"), stderr
    rerun = shlex.split(lines[-1].rsplit("rerun: ", 1)[-1])
    assert rerun[-len(args) :] == args, lines[-1]
    program = rerun[: -len(args)]
    runs = subprocess.run([*program, "--help"], capture_output=True, text=True, timeout=60)
    assert runs.returncode == 0, f"the rerun command does not run: {program}"
    return lines[-1]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_batch_stops_its_stack_and_says_how_to_resume(tmp_path: Path, signum: int) -> None:
    # Given a batch on its own embedded stack (Redis + 2 workers), with jobs in flight
    args = ["batch", str(EXAMPLES), "--out", str(tmp_path / "out")]
    process = start(tmp_path, *args)
    stack = wait_for_children(process.pid, 3)
    wait_for_line(tmp_path / "out" / "jobs.jsonl")

    # When it is interrupted
    code, stderr, sent = stop(process, signum)

    # Then everything it started is gone within 10 s, and one line says what is kept and how to go on
    assert not still_running(stack, sent + STOP_BOUND_S), stderr
    assert code == 128 + signum
    line = check_one_line(stderr, "batch", args)
    assert f"in {tmp_path / 'out'}/" in line and "jobs enqueued had finished" in line


def test_a_second_ctrl_c_stops_a_batch_at_once(tmp_path: Path) -> None:
    # Given a batch with jobs in flight
    args = ["batch", str(EXAMPLES), "--out", str(tmp_path / "out")]
    process = start(tmp_path, *args)
    stack = wait_for_children(process.pid, 3)
    wait_for_line(tmp_path / "out" / "jobs.jsonl")

    # When Ctrl-C is pressed twice, while the first is still stopping the workers (an interrupted
    # batch kills its workers at once, so its whole stop takes a few tenths of a second: the second
    # press is repeated every 20 ms until one lands while the first is still stopping)
    code, stderr, sent = stop_pressing_again(process)

    # Then it stops at once, and still leaves nothing behind
    assert code == 130, stderr
    assert not still_running(stack, sent + STOP_BOUND_S)
    assert "stopped at once on a second signal" in stderr.strip().splitlines()[-1], stderr


def test_the_stack_of_a_killed_batch_stops_on_its_own(tmp_path: Path) -> None:
    # Given a batch with jobs in flight
    process = start(tmp_path, "batch", str(EXAMPLES), "--out", str(tmp_path / "out"))
    stack = wait_for_children(process.pid, 3)
    wait_for_line(tmp_path / "out" / "jobs.jsonl")

    # When it is SIGKILLed, with no chance to stop anything
    process.kill()
    sent = time.monotonic()
    process.communicate(timeout=10)

    # Then Redis and the workers it started exit by themselves within 10 s
    assert not still_running(stack, sent + STOP_BOUND_S)


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "sigkill"]
)
def test_an_interrupted_generate_stops_its_stack(tmp_path: Path, signum: int) -> None:
    # Given one job through Celery on an embedded stack, its model call in flight
    args = ["generate", str(EXAMPLES / "photosynthesis.md")]
    process = start(tmp_path, *args)
    stack = wait_for_children(process.pid, 3)
    time.sleep(1.0)

    # When it is signalled
    code, stderr, sent = stop(process, signum)

    # Then every process it started is gone within 10 s; unless SIGKILLed, it said so in one line
    assert not still_running(stack, sent + STOP_BOUND_S), stderr
    assert code == (-signal.SIGKILL if signum == signal.SIGKILL else 128 + signum)
    if signum != signal.SIGKILL:
        assert "no result was kept" in check_one_line(stderr, "generate", args)


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "sigkill"]
)
def test_an_interrupted_eval_stops_at_once(tmp_path: Path, signum: int) -> None:
    # Given an eval running its jobs inline, on the simulator in a thread of its own process
    args = ["eval", str(EXAMPLES), "--out", str(tmp_path / "eval"), "--concurrency", "4"]
    process = start(tmp_path, *args)
    time.sleep(3.0)
    assert alive(process.pid) and children(process.pid) == []  # nothing outside the process to leave behind

    # When it is signalled mid-run
    code, stderr, _ = stop(process, signum)

    # Then it ends at once (threads waiting on model replies are not waited for), saying so in one line
    assert code == (-signal.SIGKILL if signum == signal.SIGKILL else 128 + signum)
    if signum != signal.SIGKILL:
        assert "nothing was written" in check_one_line(stderr, "eval", args)


HELD_SCRIPT = """
import os, signal, sys, time
from suture.workers.local import shutdown
stop = shutdown.install("test", [])
done = []
try:
    with stop.held():
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of work that must be done whole
        time.sleep(0.2)
        done.append("whole")
    done.append("after")  # never reached: the held signal is raised as the block ends
except shutdown.Interrupted as exc:
    print(done, exc.signum == signal.SIGINT)
    sys.exit(0)
print("not interrupted", done)
"""


def test_a_ctrl_c_during_a_held_block_stops_the_command_when_the_block_ends() -> None:
    # Given a command inside work that must be done whole (a finished job's ledger line and report entry)
    # When Ctrl-C arrives in the middle of it
    done = subprocess.run([sys.executable, "-c", HELD_SCRIPT], capture_output=True, text=True, timeout=30)
    # Then the work is finished first, and the command is interrupted right after it
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['whole'] True"


WAITING_SCRIPT = """
import sys, time
from pathlib import Path
from suture.workers.local import shutdown
from suture.workers.local.child_process import Child

stop = shutdown.install("test", [])
child = Child.spawn("sleeper", ["sleep", "60"], Path(sys.argv[1]))
try:
    print(child.process.pid, flush=True)
    while True:
        time.sleep(0.01)
except shutdown.Interrupted as exc:
    with child.process._waitpid_lock:  # where Popen.wait is, stopping a child, between its sleeps
        time.sleep(30)
    stop.leave(exc)
"""


def test_ctrl_c_pressed_again_and_again_while_a_child_is_waited_for_stops_at_once(tmp_path: Path) -> None:
    # Given a command stopping its children, in the middle of waiting for one (its Popen's lock held)
    process = subprocess.Popen(
        [sys.executable, "-c", WAITING_SCRIPT, str(tmp_path / "sleeper.log")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    sleeper = int(process.stdout.readline())

    # When Ctrl-C is pressed, then again every 20 ms while it runs
    code, stderr, sent = stop_pressing_again(process)

    # Then the second press ends it, in one line, its child killed: no press nests another stop in it
    # (each waited on the locked child again, until the nesting overflowed into a traceback)
    assert code == 130, stderr
    assert "Traceback" not in stderr, stderr
    [line] = stderr.strip().splitlines()
    assert line.startswith("suture test: interrupted;"), line
    assert line.endswith("(stopped at once on a second signal; 1 child process(es) killed)"), line
    assert not still_running([sleeper], sent + STOP_BOUND_S)


class BusyStream(io.StringIO):
    """stderr as the frame a signal interrupted left it: inside its own write, its buffer's lock held."""

    def write(self, text: str) -> int:
        raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stderr>'>")


def test_the_last_line_goes_out_even_when_a_signal_lands_inside_a_print(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given a second Ctrl-C that landed while the command itself was printing to stderr
    monkeypatch.setattr(sys, "stderr", BusyStream())
    # When the stop says its one line
    shutdown._say("suture test: interrupted; (stopped at once on a second signal)")
    # Then the line is written past the busy stream, to the process's stderr
    assert capfd.readouterr().err == "suture test: interrupted; (stopped at once on a second signal)\n"
