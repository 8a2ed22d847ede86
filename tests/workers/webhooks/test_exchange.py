"""One callback POST against real loopback receivers: total deadline, response cap, no redirect, pinning."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from suture.workers.webhooks.exchange import post
from suture.workers.webhooks.targets import Target
from tests.fixtures.receivers import DripReceiver, RecordingReceiver

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def target(url: str) -> Target:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return Target(url, parts.scheme, parts.hostname or "", parts.port or 80)


def send(
    url: str, *, deadline_s: float = 5.0, cap: int = 65536, host: str | None = None
) -> tuple[object, float]:
    aim = target(url if host is None else url.replace("127.0.0.1", host))
    started = time.monotonic()
    exchange = asyncio.run(
        post(aim, LOOPBACK, '{"a":1}', {"webhook-id": "j"}, deadline_s=deadline_s, max_response_bytes=cap)
    )
    return exchange, time.monotonic() - started


def test_a_receiver_dripping_header_lines_costs_the_deadline_and_no_more(
    drip_receiver: Callable[..., DripReceiver],
) -> None:
    # Given a receiver that sends one header line every 0.3 s for a minute
    receiver = drip_receiver(every_s=0.3, lines=200)
    # When a callback is posted to it with a 2 s deadline
    exchange, took_s = send(receiver.url, deadline_s=2.0)
    # Then the whole exchange ends at the deadline (a per-read timeout would never fire)
    assert not exchange.ok and "within 2 s" in str(exchange.error)  # type: ignore[attr-defined]
    assert took_s >= 1.9  # not before it
    # Not a speed check: only a per-read timeout (each line resets it) would run on towards the drip's 60 s.
    assert took_s < 30


@pytest.fixture
def big_answer() -> Iterator[tuple[str, list[int]]]:
    """A receiver answering 200 with an endless body; records how many bytes it managed to send."""
    listener = socket.create_server(("127.0.0.1", 0))
    sent: list[int] = [0]
    stop = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n")
            chunk = b"x" * 65536
            try:
                while not stop.is_set() and sent[0] < 100_000_000:
                    conn.sendall(chunk)
                    sent[0] += len(chunk)
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook", sent
    stop.set()
    listener.close()


def test_a_long_answer_is_read_only_up_to_the_cap(big_answer: tuple[str, list[int]]) -> None:
    url, sent = big_answer
    exchange, took_s = send(url, cap=1000)
    assert exchange.ok  # type: ignore[attr-defined]
    time.sleep(0.3)
    assert sent[0] < 20_000_000 and took_s < 2.0  # nowhere near the 100 MB it offered


def test_a_redirect_is_never_followed(recording_receiver: Callable[..., RecordingReceiver]) -> None:
    # Given a receiver that redirects to another one
    inner = recording_receiver()
    outer = recording_receiver(status=302)
    # When a callback goes to the first (its Location names the second)
    aim = target(outer.url)
    exchange = asyncio.run(
        post(aim, LOOPBACK, "{}", {"X-Redirect-To": inner.url}, deadline_s=5, max_response_bytes=100)
    )
    # Then the 302 is the answer (not a success), and the second receiver got nothing
    assert exchange.status == 302 and not exchange.ok
    assert len(outer.received()) == 1 and inner.received() == []


def test_the_connection_goes_to_the_checked_address_whatever_the_name(
    recording_receiver: Callable[..., RecordingReceiver],
) -> None:
    # Given a name no resolver knows, pinned to the receiver's checked address
    receiver = recording_receiver()
    exchange, _ = send(receiver.url, host="callbacks.example.invalid")
    # Then the POST reached the pinned address, with the name as its Host
    assert exchange.ok  # type: ignore[attr-defined]
    assert receiver.received()[0].headers["host"].startswith("callbacks.example.invalid")
