"""Reliability-suite helpers: varied documents, a delivery counter on Redis pub/sub, and trace checks.

The checks here are the suite's definition of "ended exactly once": one stored result per job, one
``done`` publication per job (the store publishes only from the once-only deliver script), and a
trace whose attempt numbers run 1..k without gaps or repeats and whose slices are unique per attempt.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis

FINAL = frozenset({"delivered", "soft_delivered", "refused", "failed"})
SUBJECTS = ["glaciers", "volcanoes", "rivers", "forests", "deserts", "tides", "storms", "metals"]
VERBS = ["shape", "warm", "feed", "cool", "move", "erode", "protect", "change"]


def varied_document(index: int, sentences: int = 8) -> str:
    """A small source document, different for every ``index``, with quotable sentences for the simulator."""
    lines = []
    for k in range(sentences):
        subject = SUBJECTS[(index + k) % len(SUBJECTS)]
        verb = VERBS[(index * 3 + k) % len(VERBS)]
        lines.append(
            f"Record {index}-{k} notes that {subject} {verb} nearby valleys over roughly "
            f"{10 + k * 7 + index % 50} "
            f"centuries of patient observation."
        )
    return " ".join(lines)


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``condition`` every 50 ms; fail naming ``what`` if it does not hold in time."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not reached within {timeout_s:g} s"
        time.sleep(0.05)


@dataclass
class DeliveryCounter:
    """Counts the store's ``done`` publications per job id (the once-only delivery notice)."""

    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, channel: str) -> None:
        with self.lock:
            self.counts[channel.rsplit(":", 1)[-1]] += 1

    def snapshot(self) -> Counter[str]:
        with self.lock:
            return Counter(self.counts)


@pytest.fixture
def delivery_counter() -> Iterator[Callable[[str], DeliveryCounter]]:
    """Factory: ``delivery_counter(redis_url)`` starts listening on ``suture:done:*``; stopped at teardown."""
    listeners: list[Any] = []

    def start(url: str) -> DeliveryCounter:
        counter = DeliveryCounter()
        client = redis.Redis.from_url(url, decode_responses=True)
        pubsub = client.pubsub()
        pubsub.psubscribe(**{"suture:done:*": lambda message: counter.add(str(message["channel"]))})
        thread = pubsub.run_in_thread(sleep_time=0.05, daemon=True)
        listeners.append((thread, pubsub, client))
        return counter

    yield start
    for thread, pubsub, client in listeners:
        thread.stop()
        thread.join(timeout=5)
        pubsub.close()
        client.close()


def traced_calls(result: dict[str, Any]) -> int:
    """Model calls a job's trace records: one per full attempt, one per slice (a fix calls no model), and
    the retries each attempt records (a transport retry, a reply cut off by its cap sent again)."""
    calls = 0
    for attempt in result["attempts"]:
        mode = attempt.get("mode")
        calls += 1 if mode == "full" else len(attempt.get("slices") or []) if mode == "surgical" else 0
        calls += int(attempt.get("transport_retries") or 0) + int(attempt.get("cap_retries") or 0)
    return calls


def trace_problems(result: dict[str, Any]) -> list[str]:
    """Why a job's trace is not one clean record per attempt (empty when it is)."""
    problems = []
    numbers = [a["n"] for a in result["attempts"]]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"attempt numbers {numbers} are not 1..{len(numbers)}")
    for attempt in result["attempts"]:
        pointers = [s["pointer"] for s in attempt.get("slices", [])]
        if len(pointers) != len(set(pointers)):
            problems.append(f"attempt {attempt['n']} has duplicate slices {sorted(pointers)}")
    if result["status"] not in FINAL:
        problems.append(f"status {result['status']!r} is not final")
    return problems


def assert_each_ended_once(
    job_ids: list[str], results: dict[str, dict[str, Any]], deliveries: Counter[str]
) -> None:
    """Every job has exactly one result and one delivery notice, and a clean trace."""
    missing = [j for j in job_ids if j not in results]
    assert not missing, f"{len(missing)} jobs lost, e.g. {missing[:3]}"
    twice = {j: n for j, n in deliveries.items() if j in results and n != 1}
    assert not twice, f"jobs delivered other than once: {dict(list(twice.items())[:5])}"
    unseen = [j for j in job_ids if deliveries[j] == 0]
    assert not unseen, f"{len(unseen)} results stored without a delivery notice, e.g. {unseen[:3]}"
    bad = {j: trace_problems(r) for j, r in results.items() if trace_problems(r)}
    assert not bad, f"{len(bad)} jobs with bad traces, e.g. {list(bad.items())[:3]}"


@pytest.fixture
def password_redis(tmp_path: Any) -> Iterator[Callable[[str], str]]:
    """Factory: ``password_redis(password)`` starts a redis-server with ``requirepass`` -> its URL with the
    password."""
    import subprocess

    from tests.fixtures.redis_server import free_port, redis_server_binary

    processes: list[subprocess.Popen[bytes]] = []

    def start(password: str) -> str:
        binary = redis_server_binary()
        port = free_port()
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)]
        command += ["--save", "", "--appendonly", "no", "--requirepass", password]
        processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        url = f"redis://:{password}@127.0.0.1:{port}/0"
        client = redis.Redis.from_url(url)
        try:
            wait_until(lambda: _pings(client), 10, "password-protected redis-server answers")
        finally:
            client.close()
        return url

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


@dataclass
class KeyedWebhook:
    """A webhook endpoint recording each POST's ``Idempotency-Key`` header with the body's job id."""

    url: str = ""
    posts: list[tuple[str | None, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def by_key(self) -> Counter[str | None]:
        """POSTs per idempotency key: what a receiver that honours the key would see once each."""
        with self.lock:
            return Counter(key for key, _ in self.posts)

    def mismatched(self) -> list[tuple[str | None, str]]:
        """POSTs whose idempotency key is not their job id (a receiver could not deduplicate them)."""
        with self.lock:
            return [(key, job_id) for key, job_id in self.posts if key != job_id]


@pytest.fixture
def keyed_webhook() -> Iterator[KeyedWebhook]:
    """A running KeyedWebhook; stopped after the test."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hook = KeyedWebhook()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with hook.lock:
                hook.posts.append((self.headers.get("Idempotency-Key"), str(body["job_id"])))
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    # shutdown() returns at serve_forever's next poll: 0.5 s by default, at every teardown.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield hook
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
