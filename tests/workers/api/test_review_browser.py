"""The review pages in a real headless browser (Debian's Chromium, driven by Playwright): the quiz
renders as a reader sees it, a failing question is marked, and "accept" and "resume with feedback"
change the job. ``make test`` installs Chromium when it is missing (``make browser``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.api_server import ApiServer
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.browser]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync"]


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium from the OS packages (never a downloaded browser)."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield chromium
        chromium.close()


def soft_delivered(server: ApiServer) -> str:
    """A job the full-only chain soft-delivers (one question stays imbalanced)."""
    body = {"input": document(4), "questions": 4, "policy": "full-only"}
    job_id = str(server.call("POST", "/v1/jobs", json=body).json()["job_id"])
    wait_for(
        lambda: server.call("GET", f"/v1/jobs/{job_id}").json()["status"] == "soft_delivered", timeout_s=60
    )
    return job_id


def test_a_reviewer_sees_the_quiz_and_accepts_one_job_and_resumes_another(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
    browser: Any,
) -> None:
    from playwright.sync_api import expect

    # Given two soft-delivered jobs and a teacher logged in with an API key (basic auth)
    model = scripted_model(questions=4, imbalanced=1)
    stack = celery_stack(model.base_url)
    stack.start_worker(concurrency=8)
    server = api_server(stack)
    to_accept, to_resume = soft_delivered(server), soft_delivered(server)
    context = browser.new_context(http_credentials={"username": "teacher", "password": server.key})
    page = context.new_page()
    # When she opens the review list, both are there, newest first
    page.goto(server.url + "/review")
    expect(page.locator("#jobs tr[data-job]")).to_have_count(2)
    assert page.locator("#jobs tr[data-job]").first.get_attribute("data-job") == to_resume
    # And on the first job's page the quiz renders as a reader sees it...
    page.click(f"tr[data-job='{to_accept}'] a")
    expect(page.locator("section.question")).to_have_count(4)
    expect(page.locator("section.question li.correct")).to_have_count(4)
    expect(page.locator("section.question .excerpt mark")).to_have_count(4)
    # ...with the failing question marked at its place, with its message
    failing = page.locator("section.question.failing")
    expect(failing).to_have_count(1)
    assert failing.get_attribute("data-question") == "0"
    expect(failing.locator(".failure[data-code='imbalanced_options']")).to_contain_text(
        "/questions/0/options"
    )
    # When she accepts it as is
    page.click("#accept")
    # Then the page says so and the job is delivered, marked reviewed
    expect(page.locator("#notice")).to_contain_text("Accepted")
    expect(page.locator("#status")).to_have_text("delivered")
    accepted = server.call("GET", f"/v1/jobs/{to_accept}").json()
    assert (accepted["status"], accepted["result"]["reviewed"]) == ("delivered", True)
    # When she resumes the other one with feedback
    page.goto(f"{server.url}/review/jobs/{to_resume}")
    page.fill("#feedback", "Make every wrong option as long as the right one.")
    page.click("#resume")
    # Then a new round runs with her feedback and delivers it; the review list is empty
    expect(page.locator("#notice")).to_contain_text("Resumed")
    deadline = time.monotonic() + 60
    while server.call("GET", f"/v1/jobs/{to_resume}").json()["status"] != "delivered":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert len(model.feedback_prompts) == 1
    page.goto(server.url + "/review")
    expect(page.locator("#empty")).to_be_visible()
    context.close()


def test_the_pages_ask_for_a_login_and_refuse_a_form_from_elsewhere(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer], browser: Any
) -> None:
    server = api_server(celery_stack("http://127.0.0.1:9/v1"))
    # Without credentials the browser is asked for them (401 with a Basic challenge), and a wrong
    # password is refused the same way
    for credentials in (None, {"username": "teacher", "password": "not-a-key"}):
        context = browser.new_context(http_credentials=credentials)
        response = context.request.get(server.url + "/review")
        assert response.status == 401 and response.headers["www-authenticate"].startswith("Basic")
        context.close()
    # A form posted without this page's token, or from another site, is refused
    forged = server.call("POST", f"/review/jobs/{'a' * 32}/accept", data={"token": "0" * 32})
    assert forged.status_code == 403 and forged.json()["code"] == "forbidden"
    headers = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    elsewhere = server.call(
        "POST", f"/review/jobs/{'a' * 32}/cancel", data={"token": "0" * 32}, headers=headers
    )
    assert elsewhere.status_code == 403
