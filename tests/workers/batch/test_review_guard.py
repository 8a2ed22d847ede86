"""The local review app answers only to its own address and takes forms only from its pages (issue 33).

The attack: ``suture review`` checked neither ``Host`` nor ``Origin``, so a web page could reach it
through DNS rebinding (a name of the attacker's resolving to 127.0.0.1 sends its own ``Host``) or
post a form to it from another site. A real ``suture review`` process is asked as such a page would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from suture.workers.batch.review_guard import allowed_hosts

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
JOB = "ab" * 16


@pytest.fixture
def review(tmp_path: Path) -> Iterator[str]:
    """`suture review` over an (empty) batch output folder: its printed URL."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "quizzes.jsonl").write_text("")
    (out / "ledger.jsonl").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_"))}
    env |= {"HOME": str(tmp_path)}
    with subprocess.Popen(
        [sys.executable, "-m", "suture", "review", str(out)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        try:
            assert url.startswith("http://127.0.0.1:"), url
            yield url
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate(timeout=10)


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def test_a_request_naming_another_host_is_refused(review: str) -> None:
    port = _port(review)
    # Given the app's page, asked for by its own names and by a rebinding attacker's name
    own = [
        requests.get(review, headers={"Host": f"{name}:{port}"}, timeout=10)
        for name in ("127.0.0.1", "localhost")
    ]
    rebound = requests.get(review, headers={"Host": f"attacker.example:{port}"}, timeout=10)
    other_port = requests.get(review, headers={"Host": f"127.0.0.1:{port + 1}"}, timeout=10)
    # Then its own names are served, and any other Host (or another port) gets 421 with nothing of the page
    assert [r.status_code for r in own] == [200, 200]
    assert rebound.status_code == 421 and other_port.status_code == 421
    assert "quiz" not in rebound.text.lower() and "Host" in rebound.text


def test_a_form_from_another_origin_is_refused_and_one_from_its_page_passes(review: str) -> None:
    port = _port(review)
    accept = f"{review}quiz/{JOB}/accept"
    # Given forms posted to the accept action from another site, from a sandboxed page, and from its own page
    foreign = requests.post(accept, headers={"Origin": "http://attacker.example"}, timeout=10)
    sandboxed = requests.post(accept, headers={"Origin": "null"}, timeout=10)
    cross = requests.post(accept, headers={"Sec-Fetch-Site": "cross-site"}, timeout=10)
    own = requests.post(
        accept, headers={"Origin": f"http://localhost:{port}"}, timeout=10, allow_redirects=False
    )
    # Then the foreign ones are refused with 403 before the app sees them; its own reaches the app
    # (which has no such quiz: not a 403)
    assert [r.status_code for r in (foreign, sandboxed, cross)] == [403, 403, 403]
    assert own.status_code != 403 and own.status_code != 421


def test_the_allowed_hosts_are_loopback_localhost_and_the_configured_address_with_the_port() -> None:
    assert allowed_hosts("127.0.0.1", 8080) == {"127.0.0.1:8080", "localhost:8080"}
    assert allowed_hosts("0.0.0.0", 8080) == {"127.0.0.1:8080", "localhost:8080"}
    assert allowed_hosts("192.168.1.5", 80) == {"127.0.0.1:80", "localhost:80", "192.168.1.5:80"}
    assert "[::1]:80" in allowed_hosts("::1", 80)
