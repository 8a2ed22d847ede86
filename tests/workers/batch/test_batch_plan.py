"""`suture batch` knows its sections up front: document order, a dry run, a budget, Office inputs.

Real processes throughout: the installed CLI, the embedded stack on this test's Redis, the
simulator over HTTP (a simulation, not a real model).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pptx
import pytest

from suture.config.settings import load_settings
from suture.tasks.policy import load_policy
from suture.workers.batch.estimate import Estimator
from tests.fixtures.simulator import Scripted, ScriptedServer

ROOT = Path(__file__).parents[3]
EXAMPLES = ROOT / "examples"
pytestmark = pytest.mark.integration


def suture(
    redis_url: str, *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
    base |= {"REDIS_URL": redis_url, "SUTURE_SIMULATOR__LATENCY_SCALE": "0"} | (env or {})
    argv = [sys.executable, "-m", "suture", "batch", *map(str, args)]
    return subprocess.run(argv, env=base, cwd=ROOT, capture_output=True, text=True, timeout=150, check=False)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_dry_run_prints_sections_and_an_estimate_and_calls_no_model(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], tmp_path: Path
) -> None:
    # Given a configured model endpoint that records every request, and a broker nobody listens on
    model = scripted_server([])
    env = {
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "sk-test",
        "SUTURE_BROKER_URL": "redis://127.0.0.1:1/0",
    }
    # When the examples are batched with --dry-run
    run = suture("redis://127.0.0.1:1/0", EXAMPLES, "--out", tmp_path / "out", "--dry-run", env=env)
    # Then it exits 0 and lists every document's sections, with titles and pages, then the estimate
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "examples/plate_tectonics.pdf: 3 section(s)" in lines
    settings = load_settings()
    # ...each with the question count its length gives (--questions auto, the default: 2,212 // 300 = 7)
    questions = settings.batch.auto_questions.count(2212)
    assert questions == 7
    job = Estimator(settings, load_policy("default", settings), 15).job(2212, questions)
    assert (
        "  §1 1\u20132 From continental drift to plate tectonics, The layers of the Earth: 2,212 chars, p. "
        "1, "
        f"7 questions, ~${job.cost_usd:.4f}" in lines
    )
    assert lines[-3] == (
        "9 section(s) in 4 document(s); 0 input file(s) skipped; 0 section(s) too short for a quiz"
    )
    assert lines[-2].startswith("estimate (policy default, auto questions, first model gpt-5-nano): $0.0")
    overhead = settings.policies["default"]["repair_overhead"]["cost"]
    assert f"x repair overhead {overhead:g}" in lines[-2] and "with 16 jobs in flight" in lines[-2]
    # ...and no request reached the model, no stack was started, nothing was written
    assert model.requests == []
    assert "embedded local stack" not in run.stderr and not (tmp_path / "out").exists()


def test_a_skipped_input_is_listed_and_sets_exit_3_in_a_dry_run(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(
        "# Glaciers\n\n" + "Glaciers carve U-shaped valleys as they flow. " * 10
    )
    (tmp_path / "handout.epub").write_bytes(b"PK\x03\x04 an e-book")
    run = suture("redis://127.0.0.1:1/0", tmp_path, "--out", tmp_path / "out", "--dry-run")
    assert run.returncode == 3
    assert f"skipped: {tmp_path / 'handout.epub'}: unsupported:" in run.stdout


def _office_folder(folder: Path) -> Path:
    folder.mkdir()
    notes = docx.Document()
    for title, text in [
        ("Glaciers", "Glaciers form where more snow falls in winter than melts in summer, year after year. "),
        ("Moraines", "A moraine is a ridge of rock debris that a glacier pushes along and leaves behind. "),
    ]:
        notes.add_heading(title, level=1)
        notes.add_paragraph(text * 12)
    notes.save(str(folder / "a_notes.docx"))
    deck = pptx.Presentation()
    for title, text in [
        (
            "Ice ages",
            "During ice ages, ice sheets covered much of the northern continents for thousands of years.",
        ),
        (
            "Sea level",
            "When ice sheets grow, water is locked on land and the sea level falls by many metres.",
        ),
    ]:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = text
    deck.save(str(folder / "b_slides.pptx"))
    return folder


def test_word_and_powerpoint_files_are_quizzed_in_document_order(redis_url: str, tmp_path: Path) -> None:
    # Given a Word file with two headed parts and a two-slide deck (sections of any size)
    folder = _office_folder(tmp_path / "course")
    env = {
        "SUTURE_BATCH__SECTION_MIN_CHARS": "0",
        "SUTURE_BATCH__SLIDE_MIN_CHARS": "0",
        "SUTURE_BATCH__MIN_DOCUMENT_CHARS": "20",
    }
    # When they are batched
    run = suture(redis_url, folder, "--out", tmp_path / "out", "--questions", "2", env=env)
    # Then every section got a quiz, written in document order with the titles of the headings and slides
    assert run.returncode == 0, run.stderr
    lines = read_jsonl(tmp_path / "out" / "quizzes.jsonl")
    sources = [(Path(line["source"]["file"]).name, line["source"]["title"]) for line in lines]
    assert sources == [
        ("a_notes.docx", "Glaciers"),
        ("a_notes.docx", "Moraines"),
        ("b_slides.pptx", "Ice ages"),
        ("b_slides.pptx", "Sea level"),
    ]
    assert [line["source"]["pages"] for line in lines[2:]] == [[1, 1], [2, 2]]  # slide numbers
    # ...and the progress lines counted against the known total from the first one
    progress = [line for line in run.stdout.splitlines() if line.startswith("[")]
    assert progress[0].startswith("[1/4]") and progress[-1].startswith("[4/4]")


def test_the_budget_stops_starting_sections_and_says_what_is_left(redis_url: str, tmp_path: Path) -> None:
    # Given three sections of about $0.002 each (estimated, 15 questions each) and a budget for about one
    out = tmp_path / "out"
    run = suture(
        redis_url, EXAMPLES / "photosynthesis.md", "--out", out, "--questions", "15", "--budget-usd", "0.0025"
    )
    # Then the first section is quizzed, the other two are not started, and the batch says so
    assert run.returncode == 3, run.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["jobs"] == 1 and report["not_started"]["count"] == 2
    assert [s["section"] for s in report["not_started"]["sections"]] == [2, 3]
    # (what was spent is reported as is: a job already started finishes, even if it costs more than expected)
    assert report["budget"]["limit_usd"] == 0.0025 and report["budget"]["spent_usd"] == report["cost_usd"] > 0
    assert "budget $0.0025 reached" in run.stdout and "2 section(s) not started" in run.stdout
    assert "Not started: the budget" in (out / "report.html").read_text()


def test_a_batch_with_nothing_to_quiz_starts_no_stack_and_reports_the_skipped_files(tmp_path: Path) -> None:
    # Given a folder whose only file suture cannot read
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "handout.epub").write_bytes(b"PK\x03\x04 an e-book")
    out = tmp_path / "out"
    # When it is batched (with no Redis reachable: none is needed)
    run = suture("redis://127.0.0.1:1/0", tmp_path / "course", "--out", out)
    # Then it exits 3, lists the file on stdout and in both reports, and started nothing
    assert run.returncode == 3, run.stderr
    assert "skipped: " in run.stdout and "handout.epub: unsupported" in run.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["skipped"] == 1 and report["jobs"] == 0
    assert "handout.epub" in (out / "report.html").read_text()
    assert "embedded local stack" not in run.stderr
