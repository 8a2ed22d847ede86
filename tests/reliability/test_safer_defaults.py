"""The defaults an attacker leaned on are safe now (issue 33, the "defaults" and ``localhost`` rows).

The attacks: ``suture serve`` ran with ``webhook.secret: null`` (callbacks went out unsigned with a
stderr warning) and ``api.rate_limit_per_minute: 0``; ``"callback": "http://localhost:9/hook"``
was accepted (202) with 127.0.0.1 in ``webhook.allowed_hosts``; a file name holding a newline was
printed raw and forged a line of ``batch --dry-run``'s listing. Each is tried on real processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.api_server import ApiServer
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import REPO, CeleryStack

pytestmark = pytest.mark.integration
MISSING = "0" * 32


def _serve(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suture", "serve", "--port", "0"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_serve_refuses_to_start_without_a_webhook_secret_while_callbacks_are_on(
    celery_stack: Callable[..., CeleryStack], tmp_path: Path
) -> None:
    # Given the settings of a deployment that forgot webhook.secret (callbacks on: the default)
    stack = celery_stack("http://127.0.0.1:9/v1")
    env = {k: v for k, v in stack.env.items() if k != "SUTURE_WEBHOOK__SECRET"} | {
        "SUTURE_API__KEYS": '["k"]'
    }
    # When `suture serve` starts
    done = _serve(env, tmp_path)
    # Then it exits 2 before listening, in one line that says how to make a secret and how to do without
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "webhook.secret is not set" in done.stderr
    assert "whsec_" in done.stderr and "webhook.enabled: false" in done.stderr


def test_with_callbacks_off_serve_starts_without_a_secret_and_refuses_callback_urls(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]
) -> None:
    # Given `suture serve` with webhook.enabled: false and no secret
    server = api_server(
        celery_stack("http://127.0.0.1:9/v1"), SUTURE_WEBHOOK__ENABLED="false", SUTURE_WEBHOOK__SECRET=""
    )
    # When a job names a callback URL
    body = {"input": document(2), "callback": "https://8.8.8.8/hook"}
    answer = server.call("POST", "/v1/jobs", json=body)
    # Then it is refused (nothing could be signed), naming the setting
    assert answer.status_code == 422 and answer.json()["field"] == "callback"
    assert "webhook.enabled: false" in answer.json()["detail"]
    assert server.call("POST", "/v1/jobs", json={"input": document(2)}).status_code == 202


def test_one_key_is_rate_limited_by_default(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]
) -> None:
    # Given `suture serve` with the packaged rate limit (no setting given), early in a clock minute
    server = api_server(celery_stack("http://127.0.0.1:9/v1"))
    from suture.config.settings import load_settings

    limit = load_settings().api.rate_limit_per_minute
    assert limit > 0
    if time.time() % 60 > 30:  # the window is a clock minute: start the burst at the top of the next
        time.sleep(60 - time.time() % 60 + 0.5)
    # When one key sends one request more than the limit within the minute
    import requests

    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {server.key}"
    codes = [session.get(f"{server.url}/v1/jobs/{MISSING}", timeout=30).status_code for _ in range(limit + 1)]
    # Then the last is refused with 429, all before it answered
    assert set(codes[:limit]) == {404} and codes[limit] == 429


RESERVED = [
    "http://localhost:9/hook",
    "http://LOCALHOST:9/hook",
    "http://localhost.:9/hook",
    "http://api.localhost:9/hook",
    "http://ip6-localhost:9/hook",
    "http://localhost.localdomain:9/hook",
    "http://printer.local:9/hook",
    "http://router.home.arpa:9/hook",
    "http://metadata.google.internal/hook",
]


def test_reserved_names_are_refused_at_enqueue_even_with_loopback_allowed(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]
) -> None:
    # Given a server that allows callbacks to the loopback address 127.0.0.1 (and plain http)
    server = _loopback_allowed(celery_stack, api_server)
    for callback in RESERVED:
        # When a job names a reserved host name as its callback
        answer = server.call("POST", "/v1/jobs", json={"input": document(2), "callback": callback})
        # Then it is refused at once (422 on the callback), by its name, whatever it resolves to
        assert answer.status_code == 422, (callback, answer.text)
        assert answer.json()["field"] == "callback" and "reserved name" in answer.json()["detail"]


def test_the_allowed_address_itself_still_passes_and_a_name_listed_by_name_too(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]
) -> None:
    # Given loopback allowed by address on one server, and "localhost" listed by name on another
    by_address = _loopback_allowed(celery_stack, api_server)
    by_name = _loopback_allowed(celery_stack, api_server, '["localhost", "127.0.0.1", "::1"]')

    def enqueue(server: ApiServer, callback: str) -> int:
        return server.call("POST", "/v1/jobs", json={"input": document(2), "callback": callback}).status_code

    # Then the address passes where it is allowed, and the name only where the name is listed
    assert enqueue(by_address, "http://127.0.0.1:9/hook") == 202
    assert enqueue(by_name, "http://localhost:9/hook") == 202


def _loopback_allowed(
    celery_stack: Callable[..., CeleryStack],
    api_server: Callable[..., ApiServer],
    hosts: str = '["127.0.0.1"]',
) -> ApiServer:
    settings = {"SUTURE_WEBHOOK__ALLOWED_HOSTS": hosts, "SUTURE_WEBHOOK__REQUIRE_HTTPS": "false"}
    stack = celery_stack("http://127.0.0.1:9/v1", **settings)
    return api_server(stack, **settings)


def test_a_file_name_holding_a_newline_cannot_forge_a_line_of_the_dry_run(tmp_path: Path) -> None:
    # Given a course folder with a good document and files whose names hold a newline, a carriage
    # return and a terminal escape, each name written to look like a line of the listing
    course = tmp_path / "course"
    course.mkdir()
    forged = "x.md\nshadow.md: 1 section(s)\n  §1 root: 99 chars, 3 questions"
    names = ["good.md", f"{forged}.md", "y.md\rskipped: nothing.md", "z\x1b[2Jclear.md"]
    for n, name in enumerate(names):  # distinct texts: no file is skipped as another's duplicate
        (course / name).write_text(f"# Topic {n}\n\n" + f"Plants turn light into sugar, case {n}. " * 40)
    (course / "bin\nfake.md: 9 section(s).md").write_bytes(b"\x00\x01\x02" * 100)  # skipped: binary
    # When `suture batch --dry-run` lists the folder
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, "-m", "suture", "batch", str(course), "--out", str(tmp_path / "out"), "--dry-run"],
        cwd=REPO,
        env=env | {"HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    # Then no line is one a name forged: each odd name is printed repr-style on its own line
    assert done.returncode in (0, 3), done.stderr
    assert not any(
        line.startswith(("shadow.md", "fake.md", "skipped: nothing.md", "  §1 root")) for line in lines
    )
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    assert any(line.startswith(repr(str(course / f"{forged}.md"))) for line in lines), lines
    assert any(line.startswith(repr(str(course / "y.md\rskipped: nothing.md"))) for line in lines), lines
    assert any(repr("bin\nfake.md: 9 section(s).md")[1:-1] in line for line in lines), lines
