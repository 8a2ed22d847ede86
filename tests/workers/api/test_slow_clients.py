"""Half-sent requests against a real ``suture serve`` are closed on time (issue 33, the slowloris row).

The attack: 300 connections each holding half a request head for 90 s; nothing was closed (uvicorn
has no deadline for reading a request, and its keep-alive timer restarts with every byte). Now a
head must arrive whole within ``api.header_timeout_s`` (408 and closed), a body within
``api.body_timeout_s`` once its head is in (closed), and a head past ``api.max_header_bytes`` gets 431.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest
import requests

from tests.fixtures.api_server import ApiServer
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration
HEADER_TIMEOUT_S = 3.0
BODY_TIMEOUT_S = 3.0
SLACK_S = 3.0  # a loaded two-core machine: the deadline fires on the server's next loop turn
HALF_HEAD = b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@pytest.fixture
def server(celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]) -> ApiServer:
    return api_server(
        celery_stack("http://127.0.0.1:9/v1"),
        SUTURE_API__HEADER_TIMEOUT_S=str(HEADER_TIMEOUT_S),
        SUTURE_API__BODY_TIMEOUT_S=str(BODY_TIMEOUT_S),
    )


def _connect(server: ApiServer) -> socket.socket:
    parts = urlsplit(server.url)
    return socket.create_connection((parts.hostname, parts.port), timeout=30)


def _closed_after(sock: socket.socket, started: float, into: list[tuple[float, bytes]]) -> None:
    """Read until the server closes; record when (seconds after ``started``) and what it sent."""
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except OSError:
        pass
    into.append((time.monotonic() - started, got))


def test_300_half_sent_heads_are_closed_on_time_while_a_normal_request_answers(server: ApiServer) -> None:
    # Given 300 connections that each sent half a request head and then hold it
    socks = [_connect(server) for _ in range(300)]
    started = time.monotonic()
    for sock in socks:
        sock.sendall(HALF_HEAD)
    closed: list[tuple[float, bytes]] = []
    readers = [threading.Thread(target=_closed_after, args=(s, started, closed)) for s in socks]
    for reader in readers:
        reader.start()
    # When an ordinary client asks while they hold
    answer = server.call("GET", "/v1/stats")
    for reader in readers:
        reader.join(timeout=HEADER_TIMEOUT_S + 30)
    for sock in socks:
        sock.close()
    # Then it is answered, and every held connection got a 408 and was closed within the deadline
    assert answer.status_code == 200
    assert len(closed) == 300
    assert all(got.startswith(b"HTTP/1.1 408 ") for _, got in closed)
    latest = max(when for when, _ in closed)
    assert min(when for when, _ in closed) >= HEADER_TIMEOUT_S - 0.5 and latest <= HEADER_TIMEOUT_S + SLACK_S


def test_a_head_dripped_a_byte_at_a_time_is_closed_at_the_head_deadline(server: ApiServer) -> None:
    # Given a client that sends its head one byte every 0.5 s (each byte restarts uvicorn's keep-alive timer)
    sock = _connect(server)
    started = time.monotonic()
    closed_at = None
    try:
        for byte in HALF_HEAD + b"x" * 100:
            sock.sendall(bytes([byte]))
            time.sleep(0.5)
    except OSError:  # the server closed it
        closed_at = time.monotonic() - started
    finally:
        sock.close()
    # Then the connection is closed once the head deadline passes, not kept while bytes trickle in
    assert closed_at is not None and closed_at <= HEADER_TIMEOUT_S + SLACK_S


def test_a_body_that_stops_coming_is_cut_at_the_body_deadline(server: ApiServer) -> None:
    # Given an authenticated POST whose head says 1000 bytes of body, of which 10 are sent
    sock = _connect(server)
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    ).encode()
    sock.sendall(head + b'{"input": ')
    closed: list[tuple[float, bytes]] = []
    # When the client holds the rest
    _closed_after(sock, time.monotonic(), closed)
    sock.close()
    # Then the server closes the connection at the body deadline, and still serves others
    [(when, _)] = closed
    assert BODY_TIMEOUT_S - 0.5 <= when <= BODY_TIMEOUT_S + SLACK_S
    assert server.call("GET", "/v1/stats").status_code == 200
    assert not any("Traceback" in line for line in server.log)


def test_a_head_larger_than_the_cap_gets_431_and_is_closed(server: ApiServer) -> None:
    # Given a request head of 64 KB of one header, not yet ended
    sock = _connect(server)
    sock.sendall(HALF_HEAD + b"a" * 64 * 1024)
    # When the server reads it
    closed: list[tuple[float, bytes]] = []
    _closed_after(sock, time.monotonic(), closed)
    sock.close()
    # Then it answers 431 at once (not at the head deadline) and closes
    [(when, got)] = closed
    assert got.startswith(b"HTTP/1.1 431 ") and when < HEADER_TIMEOUT_S
    assert requests.get(server.url + "/healthz", timeout=10).status_code == 200
