"""A hostile client cannot make ``suture simulator`` hoard memory or hold its connections.

Through a real ``suture simulator`` process: many large distinct prompts leave its memory flat (it
keeps a digest per prompt, and analyses within a character budget), half-open connections are
closed after ``simulator.idle_timeout_s`` while normal requests are still answered, and a body that
never finishes gets 408 after ``simulator.read_timeout_s``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest

DOCUMENT = "Photosynthesis turns light into sugar in the chloroplasts of a leaf. " * 75_000  # ~5 MB


@pytest.fixture
def simulator(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A ``suture simulator`` process (latency 0) with the settings the test asks for; its /v1 URL."""
    settings: dict[str, str] = getattr(request, "param", {})
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")} | settings
    argv = [sys.executable, "-m", "suture", "simulator", "--port", "0", "--latency-scale", "0"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    yield process, url
    process.kill()
    process.communicate(timeout=10)


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]


def quiz_request(document: str) -> dict[str, object]:
    return {
        "model": "gpt-5-nano",
        "messages": [
            {"role": "system", "content": "Write exactly 3 questions, each with exactly 4 options."},
            {"role": "user", "content": f"<document>\n{document}\n</document>"},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "quiz", "schema": {"type": "object"}},
        },
    }


# ~1.3M-token prompts: a model table whose window takes them, so the simulator processes each one
# (the packaged 400,000 tokens would answer context_length_exceeded, as the provider does).
@pytest.mark.parametrize(
    "simulator", [{"SUTURE_PRICES__GPT-5-NANO__CONTEXT_TOKENS": "100000000"}], indirect=True
)
def test_many_large_distinct_prompts_leave_the_simulators_memory_flat(
    simulator: tuple[subprocess.Popen[str], str],
) -> None:
    # Given a running simulator that has answered three ~5 MB prompts
    process, url = simulator
    with httpx2.Client(timeout=120) as client:
        for n in range(3):
            assert (
                client.post(f"{url}/chat/completions", json=quiz_request(f"{n} {DOCUMENT}")).status_code
                == 200
            )
        settled = rss_mb(process.pid)

        # When ten more distinct ~5 MB prompts arrive (50 MB of prompts it has never seen)
        for n in range(3, 13):
            assert (
                client.post(f"{url}/chat/completions", json=quiz_request(f"{n} {DOCUMENT}")).status_code
                == 200
            )

    # Then it kept none of them: its memory grew by less than the prompts themselves (before, it kept
    # each prompt and its analysis: ~12 MB per prompt, 120 MB here)
    assert rss_mb(process.pid) - settled < 50, (settled, rss_mb(process.pid))


@pytest.mark.parametrize("simulator", [{"SUTURE_SIMULATOR__IDLE_TIMEOUT_S": "1"}], indirect=True)
def test_half_open_connections_are_closed_and_normal_requests_still_answered(
    simulator: tuple[subprocess.Popen[str], str],
) -> None:
    # Given 300 connections that each sent half a request head and then nothing
    _, url = simulator
    address = urlsplit(url)
    sockets = [socket.create_connection((address.hostname, address.port), timeout=10) for _ in range(300)]
    try:
        for sock in sockets:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: simulator\r\n")

        # When a normal client calls meanwhile, Then it is answered
        assert httpx2.get(f"{url}/models", timeout=10).status_code == 200

        # ...and every half-open connection is closed by the server once idle_timeout_s passed
        closed = [sock.recv(1) == b"" for sock in sockets]
        assert all(closed)
    finally:
        for sock in sockets:
            sock.close()


@pytest.mark.parametrize("simulator", [{"SUTURE_SIMULATOR__READ_TIMEOUT_S": "1"}], indirect=True)
def test_a_body_that_never_finishes_gets_408_and_loses_its_connection(
    simulator: tuple[subprocess.Popen[str], str],
) -> None:
    # Given a client that announces a 1 MB body and sends 20 bytes of it
    _, url = simulator
    address = urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: simulator\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000000\r\n\r\n"
        )
        sock.sendall(head.encode() + b'{"model": "gpt-5-nano')
        started = time.monotonic()

        # When it waits, Then the simulator answers 408 (request_timeout) and closes the connection
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    body = json.loads(reply.partition(b"\r\n\r\n")[2])
    assert body["error"]["code"] == "request_timeout"
    assert time.monotonic() - started < 10  # the 1 s limit, not a socket timeout
