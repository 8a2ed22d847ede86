"""`suture review OUT` in a real headless browser (Debian's Chromium driven by Playwright; `make browser`).

Real processes on the default setup: a batch on its own embedded stack, then the review app
serving its output folder (regenerations on the simulator over HTTP). A teacher sees every quiz,
edits a question (the contract's verdict shows at once, a failing question highlighted with its
failure in words), regenerates one question with a comment (only it changes), accepts the quiz,
and a rerun of the batch keeps all of it for $0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.workers.batch.test_ledger_reruns import _env, ledger

pytestmark = [pytest.mark.integration, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[3]
DOCUMENT = ROOT / "examples" / "photosynthesis.md"
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


def suture(home: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suture", *map(str, args)],
        env=_env(home, "0"),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.fixture
def reviewed(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A finished default-setup batch and `suture review` serving it: (output folder, URL)."""
    out = tmp_path / "out"
    assert suture(tmp_path, "batch", DOCUMENT, "--out", out, "--questions", "4").returncode == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "suture", "review", str(out)],
        env=_env(tmp_path, "0"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/"), url
        yield out, url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate(timeout=10)


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "quizzes.jsonl").read_text().splitlines()]


def test_a_teacher_reviews_edits_regenerates_and_accepts_a_quiz(
    reviewed: tuple[Path, str], browser: Any
) -> None:
    from playwright.sync_api import expect

    out, url = reviewed
    first = lines(out)[0]
    job = first["job_id"]
    page = browser.new_context().new_page()
    # When she opens the review view, every quiz of the batch is listed, with the simulation notice
    page.goto(url)
    expect(page.locator("#jobs tr[data-job]")).to_have_count(len(lines(out)))
    expect(page.locator(".sim")).to_contain_text("SIMULATION")
    repaired = page.locator(f"tr[data-job='{job}'] td").nth(3).inner_text()
    # And the first quiz reads as a reader sees it: question, options, the correct one, explanation, quote
    page.click(f"tr[data-job='{job}'] a")
    expect(page.locator("body")).to_contain_text(f"\u00b7 {repaired} repaired \u00b7")  # as the index says
    questions = page.locator("section.question")
    expect(questions).to_have_count(4)
    expect(page.locator("section.question li.correct")).to_have_count(4)
    expect(page.locator("section.question .explanation")).to_have_count(4)
    expect(page.locator("section.question .excerpt mark")).to_have_count(4)
    expect(questions.nth(0).locator("h3")).to_contain_text(first["quiz"]["questions"][0]["question"][:40])

    # When she edits question 3 so that its right answer is far longer than the others
    page.click("#edit-2 summary")
    page.fill(
        "#edit-2 textarea[name=options]", "Oxygen\nWater\nCarbon dioxide, taken in through the leaves\nSoil"
    )
    page.fill("#edit-2 input[name=correct]", "3")
    page.click("#edit-2 button.save")
    # Then the edit is saved and checked at once: that question is highlighted, its failure in words
    expect(page.locator("#notice")).to_contain_text("Saved")
    expect(page.locator("#edited")).to_be_visible()
    failing = page.locator("section.question.failing")
    expect(failing).to_have_count(1)
    assert failing.get_attribute("data-question") == "2"
    expect(failing.locator(".failure[data-code='imbalanced_options']")).to_contain_text("longer")
    edited = lines(out)[0]
    assert edited["edited"] and edited["status"] == "soft_delivered"
    assert edited["quiz"]["questions"][2]["correct_answer_text"].startswith("Carbon dioxide")

    # When she asks for question 2 alone to be regenerated, with a comment
    page.check("#target-1")
    page.fill("#comment", "Question 2 is too easy; make it test understanding.")
    page.click("#regenerate")
    # Then only question 2 changed
    expect(page.locator("#notice")).to_contain_text("Regenerated")
    after = lines(out)[0]["quiz"]["questions"]
    assert after[1] != edited["quiz"]["questions"][1]
    assert [json.dumps(q) for i, q in enumerate(after) if i != 1] == [
        json.dumps(q) for i, q in enumerate(edited["quiz"]["questions"]) if i != 1
    ]

    # When she accepts the quiz
    page.click("#accept")
    expect(page.locator("#notice")).to_contain_text("Accepted")
    expect(page.locator("#accepted")).to_be_visible()
    accepted = lines(out)[0]
    assert accepted["accepted"] is True and accepted["status"] == "delivered"
    assert [e["event"] for e in ledger(out)][-3:] == ["edited", "regenerated", "accepted"]

    # Then a rerun of the batch keeps the quiz as she left it, for $0
    rerun = suture(out.parent, "batch", DOCUMENT, "--out", out, "--questions", "4")
    assert rerun.returncode == 0 and "cost $0.0000 this run" in rerun.stdout, rerun.stdout + rerun.stderr
    assert lines(out)[0]["quiz"] == accepted["quiz"] and lines(out)[0]["accepted"] is True
