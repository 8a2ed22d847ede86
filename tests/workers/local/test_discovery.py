"""Finding a running `suture up` from other shells: the state file, its secrecy and staleness, and
precedence."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from suture.config.settings import ConfigError, load_settings
from suture.workers.local import discovery
from suture.workers.local.child_process import process_start
from suture.workers.local.errors import NoBrokerConfigured, StackError

SECRET = "s3cret-never-shown"


def address(pid: int | None = None, **fields: object) -> discovery.StackAddress:
    url = f"redis://:{SECRET}@127.0.0.1:6390/0"
    values: dict[str, object] = {
        "pid": pid or os.getpid(),
        "broker_url": url,
        "result_backend": url,
        "redis_url": url,
        "process_start": process_start(pid or os.getpid()),
    }
    return discovery.StackAddress(**(values | fields))  # type: ignore[arg-type]


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    """A user with a runtime dir of their own, as on a desktop or an ssh session."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    return {"XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path / "home")}


@pytest.fixture
def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait(timeout=10)
    return process.pid


def test_the_state_file_lives_in_the_runtime_dir_else_the_cache_dir(tmp_path: Path) -> None:
    # Given a runtime dir / only a home / a cache dir named explicitly
    runtime = tmp_path / "run"
    runtime.mkdir()
    # Then the state file goes where the XDG base directory rules put per-user runtime state
    assert discovery.state_path({"XDG_RUNTIME_DIR": str(runtime)}) == runtime / "suture" / "stack.json"
    home = {"HOME": str(tmp_path)}
    assert discovery.state_path(home) == tmp_path / ".cache" / "suture" / "stack.json"
    cache = home | {"XDG_CACHE_HOME": str(tmp_path / "c"), "XDG_RUNTIME_DIR": str(tmp_path / "absent")}
    assert discovery.state_path(cache) == tmp_path / "c" / "suture" / "stack.json"


def test_a_published_stack_is_readable_by_its_user_only_and_found_until_withdrawn(
    environ: dict[str, str],
) -> None:
    # When a stack is published
    path = discovery.publish(address(), environ)

    # Then only its user can read the file or enter its folder, and the stack is found
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert discovery.find(environ) == address()

    # And once withdrawn, it is gone
    discovery.withdraw(os.getpid(), environ)
    assert not path.exists() and discovery.find(environ) is None


def test_a_second_stack_cannot_take_the_place_of_a_running_one(environ: dict[str, str]) -> None:
    # Given a running stack (this process stands for its `suture up`)
    discovery.publish(address(), environ)
    # When another publishes, Then it is refused, naming the one that runs
    with pytest.raises(StackError, match=f"pid {os.getpid()}"):
        discovery.publish(address(broker_url="redis://elsewhere:1/0"), environ)
    # And a stack that withdraws only removes its own file
    discovery.withdraw(os.getpid() + 1, environ)
    assert discovery.find(environ) == address()


def test_a_stale_state_file_is_ignored_removed_and_replaced(environ: dict[str, str], dead_pid: int) -> None:
    # Given the state file of a `suture up` that was SIGKILLed
    path = discovery.publish(address(dead_pid, process_start=None), environ)

    # When a producer looks for a stack, Then there is none and the stale file is gone
    assert discovery.find(environ) is None
    assert not path.exists()

    # And a new stack publishes over a stale file as well
    discovery.publish(address(dead_pid, process_start=None), environ)
    assert discovery.publish(address(), environ) == path
    assert discovery.find(environ) == address()


def test_a_pid_reused_by_another_process_is_not_the_stack(environ: dict[str, str]) -> None:
    # Given a state file whose pid is alive but started at another time (the pid was reused)
    discovery.publish(address(process_start="1"), environ)
    # Then it is not taken for a running stack
    assert discovery.find(environ) is None


def test_a_state_file_others_can_read_is_never_trusted(environ: dict[str, str]) -> None:
    # Given a state file readable by other users (not written by `suture up`)
    path = discovery.publish(address(), environ)
    path.chmod(0o644)
    # Then it is ignored
    assert discovery.find(environ) is None


def test_exports_hold_the_urls_for_other_tools_and_say_what_they_are() -> None:
    # When a simulated stack's settings are printed for other tools
    text = address(openai_base_url="http://127.0.0.1:9/v1", simulated=True).exports()
    # Then they are shell lines a user can eval, with the password (asked for), and the simulator labelled
    assert f"export SUTURE_BROKER_URL=redis://:{SECRET}@127.0.0.1:6390/0" in text
    assert "export SUTURE_OPENAI_BASE_URL=http://127.0.0.1:9/v1" in text
    assert "SIMULATOR" in text
    done = subprocess.run(
        ["sh", "-c", f"{text}\necho $SUTURE_REDIS_URL"], capture_output=True, text=True, timeout=10
    )
    assert done.stdout.strip() == f"redis://:{SECRET}@127.0.0.1:6390/0"


def test_configured_settings_win_over_the_local_stack(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a running local stack, and a broker set in the environment
    monkeypatch.setenv("XDG_RUNTIME_DIR", environ["XDG_RUNTIME_DIR"])
    discovery.publish(address(), environ)
    monkeypatch.setenv("SUTURE_BROKER_URL", "redis://configured:6379/3")

    # Then the configured broker is used, and the stack only when nothing is configured
    assert discovery.resolve(load_settings()).broker_url == "redis://configured:6379/3"
    monkeypatch.delenv("SUTURE_BROKER_URL")
    resolved = discovery.resolve(load_settings())
    assert resolved.broker_url == resolved.redis_url == address().redis_url


def test_with_nothing_configured_and_no_stack_the_producer_api_names_the_ways_out(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given nothing configured and no `suture up`
    monkeypatch.setenv("XDG_RUNTIME_DIR", environ["XDG_RUNTIME_DIR"])
    for name in ("SUTURE_BROKER_URL", "SUTURE_REDIS_URL", "SUTURE_RESULT_BACKEND", "SUTURE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    from suture import enqueue, get_job

    # When a producer enqueues or looks a job up, Then it fails in one line naming every way out
    for attempt in (lambda: enqueue("quiz", "Plants make sugar from light."), lambda: get_job("x")):
        with pytest.raises(NoBrokerConfigured) as raised:
            attempt()
        message = str(raised.value)
        assert "\n" not in message and isinstance(raised.value, ConfigError)
        assert all(way in message for way in ("suture up", "SUTURE_BROKER_URL", "suture.yaml"))


def test_with_nothing_configured_and_no_stack_the_asyncio_api_and_the_store_name_the_ways_out(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given nothing configured and no `suture up`
    monkeypatch.setenv("XDG_RUNTIME_DIR", environ["XDG_RUNTIME_DIR"])
    for name in ("SUTURE_BROKER_URL", "SUTURE_REDIS_URL", "SUTURE_RESULT_BACKEND", "SUTURE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    from suture.workers import aio
    from suture.workers.runtime.app import broker_url
    from suture.workers.store.job_store import store_url

    # When the asyncio API enqueues or looks a job up, Then it raises the same error, never trying a default
    # Redis
    for attempt in (lambda: aio.enqueue("quiz", "Plants make sugar from light."), lambda: aio.get_job("x")):
        with pytest.raises(NoBrokerConfigured):
            asyncio.run(attempt())
    # And settings never resolved name no Redis of their own either
    for url_of in (store_url, broker_url):
        with pytest.raises(NoBrokerConfigured):
            url_of(load_settings())


def test_suture_enqueue_with_nothing_configured_exits_2_with_one_line(tmp_path: Path) -> None:
    # Given a clean environment: no SUTURE_* variable, a home of its own, no `suture up`
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    document = tmp_path / "doc.txt"
    document.write_text("Plants make sugar from light. " * 20)

    # When a job is enqueued from a shell
    done = subprocess.run(
        [sys.executable, "-m", "suture", "enqueue", str(document)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    # Then nothing is enqueued anywhere, and one line says what to do
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.count("\n") == 1 and "`suture up`" in done.stderr and "SUTURE_BROKER_URL" in done.stderr
    )
