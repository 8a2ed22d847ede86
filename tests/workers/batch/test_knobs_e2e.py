"""Teaching knobs end to end: a French chapter and a title slide batched through real processes (the
CLI, an embedded stack of real Celery workers on a real Redis, the simulator over HTTP: a simulation),
then exported and read back by the independent readers of tests/workers/exports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.workers.batch.test_batch import read_jsonl, suture_batch
from tests.workers.exports.readers import (
    QTI21,
    manifest_resources,
    parse_gift,
    read_moodle,
    read_qti21_item,
    read_zip,
    validate_qti12,
)
from tests.workers.exports.test_export_cli import suture

ROOT = Path(__file__).parents[3]
FRENCH = ROOT / "tests" / "data" / "french" / "photosynthese.md"
KINDS = ["single", "multiple", "true_false"]
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def batch(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The French chapter and a 108-character title slide, all three kinds asked, the count left to auto."""
    folder = tmp_path_factory.mktemp("knobs")
    shutil.copy(FRENCH, folder / "photosynthese.md")
    (folder / "title_slide.md").write_text(
        "# Welcome\n\nBiology 101, autumn term. Lecture notes by the teaching team, version 3, for "
        "first-year students.\n"
    )
    out = folder / "out"
    run = suture_batch(
        redis_url,
        folder,
        "--out",
        out,
        "--kinds",
        ",".join(KINDS),
        "--audience",
        "first-year students",
        "--options",
        "5",
    )
    assert run.returncode == 0, run.stderr
    return out, run.stdout


def _quiz_line(out: Path) -> dict[str, Any]:
    (line,) = read_jsonl(out / "quizzes.jsonl")
    return line


def test_the_french_chapter_gets_a_french_quiz_of_every_kind_sized_by_its_length(
    batch: tuple[Path, str],
) -> None:
    out, stdout = batch
    line = _quiz_line(out)
    assert line["source"]["file"].endswith("photosynthese.md")
    questions = line["quiz"]["questions"]
    assert len(questions) == 7  # 2,141 characters // 300 per question (batch.auto_questions)
    # Asked in turn; a question the simulated model repeated and the repair reworded keeps its kind
    assert {q["kind"] for q in questions} == set(KINDS)
    assert line["quiz"]["title"].startswith("Quiz : ") and all(
        q["question"].endswith(" ?") for q in questions
    )
    assert all(q["options"] == ["Vrai", "Faux"] for q in questions if q["kind"] == "true_false")
    assert all(len(q["correct_answer_indices"]) >= 2 for q in questions if q["kind"] == "multiple")
    assert all(len(q["options"]) == 5 for q in questions if q["kind"] != "true_false")  # --options 5
    assert "SIMULATION: these quizzes were written by the suture simulator" in stdout  # and it says so


def test_the_job_stores_the_detected_language_and_the_knobs(batch: tuple[Path, str]) -> None:
    out, _ = batch
    trace = json.loads((out / "traces" / f"{_quiz_line(out)['job_id']}.json").read_text())
    rules = trace["contract_params"]["rules"]
    assert rules["language"] == "fr" and rules["question_kinds"] == KINDS
    assert rules["audience"] == "first-year students"
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["question_kinds"] == KINDS and report["settings"]["questions"] == "auto"


def test_a_section_too_short_for_a_quiz_is_skipped_with_its_reason(batch: tuple[Path, str]) -> None:
    out, stdout = batch
    reason = "too short for a quiz: 108 characters, 900 needed for 3 questions"
    assert any(line.startswith("skipped section: ") and reason in line for line in stdout.splitlines())
    short = json.loads((out / "report.json").read_text())["short_sections"]
    assert short["count"] == 1 and short["sections"][0]["file"].endswith("title_slide.md")
    assert reason in (out / "report.html").read_text()


def _export(out: Path, fmt: str) -> bytes:
    target = out.parent / f"banks-{fmt}"
    run = suture("export", out, "--format", fmt, "-o", target, "--include-soft")
    assert run.returncode == 0, run.stderr
    return target.read_bytes()


def test_every_kind_reaches_its_lms_type_read_back_independently(batch: tuple[Path, str]) -> None:
    out, _ = batch
    kinds = [q["kind"] for q in _quiz_line(out)["quiz"]["questions"]]
    moodle = read_moodle(_export(out, "moodle"))
    expected = {
        "single": ("multichoice", "true"),
        "multiple": ("multichoice", "false"),
        "true_false": ("truefalse", None),
    }
    assert [(q["type"], q["single"]) for q in moodle] == [expected[k] for k in kinds]
    gift = [i for i in parse_gift(_export(out, "gift").decode()) if i["type"] != "Category"]
    assert [i["type"] for i in gift] == ["TF" if k == "true_false" else "MC" for k in kinds]
    weights = [c["weight"] for c in gift[1]["choices"]]
    assert sorted(weights) == [-100, -100, -100, 50, 50]  # the multiple-answer question: two right halves
    files = read_zip(_export(out, "qti12"))
    (assessment,) = [
        r
        for r in manifest_resources(files, "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1")
        if r.get("type") == "imsqti_xmlv1p2"
    ]
    (href,) = [f.get("href") for f in assessment if f.tag.endswith("file")]
    types = [
        {f.findtext("fieldlabel"): f.findtext("fieldentry") for f in item.iter("qtimetadatafield")}[
            "question_type"
        ]
        for item in validate_qti12(files[href]).iter("item")
    ]
    names = {
        "single": "multiple_choice_question",
        "multiple": "multiple_answers_question",
        "true_false": "true_false_question",
    }
    assert types == [names[k] for k in kinds]
    files = read_zip(_export(out, "qti21"))
    items = [
        read_qti21_item(files[r.get("href")])
        for r in manifest_resources(files, "http://www.imsglobal.org/xsd/imscp_v1p1")
        if r.get("type") == "imsqti_item_xmlv2p1"
    ]
    assert [i["cardinality"] for i in items] == ["multiple" if k == "multiple" else "single" for k in kinds]
    assert QTI21 and all(len(i["correct"]) == 2 for i, k in zip(items, kinds, strict=True) if k == "multiple")


def test_aiken_says_it_cannot_carry_multiple_answers(batch: tuple[Path, str]) -> None:
    out, _ = batch
    target = out.parent / "banks.aiken"
    run = suture("export", out, "--format", "aiken", "-o", target, "--include-soft")
    assert run.returncode == 0, run.stderr
    assert "multiple question (the format cannot carry it)" in run.stdout + run.stderr


VOLCANOES = [
    "Basaltic magma is hot and runny, so the gas bubbles escape easily and eruptions stay rather gentle.",
    "Rhyolitic magma is cooler and sticky, so pressure builds up until the volcano explodes with great "
    "force.",
    "A stratovolcano is built from alternating layers of hardened lava, ash and broken rock fragments over "
    "time.",
    "A shield volcano has gentle slopes because its fluid lava flows far from the central vent before "
    "cooling.",
]


def test_questions_of_earlier_sections_are_avoided_in_later_prompts_and_repeats_reported(
    redis_url: str, tmp_path: Path
) -> None:
    # Given two handouts sharing four sentences (the second adds one), quizzed one after the other
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "a_volcanoes.md").write_text("# Volcanoes\n\n" + " ".join(VOLCANOES) + "\n")
    extra = "Lava domes grow slowly when very viscous lava piles up above the vent instead of flowing away."
    (tmp_path / "course" / "b_volcanoes_again.md").write_text(
        "# Volcanoes again\n\n" + " ".join([*VOLCANOES, extra]) + "\n"
    )
    out = tmp_path / "out"
    run = suture_batch(redis_url, tmp_path / "course", "--out", out, "--questions", "4", "--concurrency", "1")
    assert run.returncode == 0, run.stderr
    first, second = read_jsonl(out / "quizzes.jsonl")
    # Then the second section's job was asked not to repeat the first quiz's questions...
    trace = json.loads((out / "traces" / f"{second['job_id']}.json").read_text())
    assert trace["contract_params"]["avoid_questions"] == [
        " ".join(q["question"].split()) for q in first["quiz"]["questions"]
    ]
    assert (
        "avoid_questions"
        not in json.loads((out / "traces" / f"{first['job_id']}.json").read_text())["contract_params"]
    )
    # ...and the simulated model (which ignores that guidance) repeated some: the report lists them
    repeats = json.loads((out / "report.json").read_text())["repeats_across_sections"]
    assert repeats["count"] >= 1 and repeats["count"] == len(repeats["questions"])
    assert all(r["repeats"]["file"].endswith("a_volcanoes.md") for r in repeats["questions"])
    assert f"{repeats['count']} question(s) repeat a question of an earlier section" in run.stdout
    assert "Questions repeated across sections" in (out / "report.html").read_text()


def test_the_dry_run_shows_each_section_count_and_the_sections_too_short(tmp_path: Path) -> None:
    shutil.copy(FRENCH, tmp_path / "photosynthese.md")
    (tmp_path / "title_slide.md").write_text(
        "# Welcome\n\n" + "Biology 101, autumn term, lecture notes. " * 3
    )
    run = suture_batch("redis://127.0.0.1:1/0", tmp_path, "--out", tmp_path / "out", "--dry-run")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert any(line.startswith("  §1 La photosynthèse: 2,141 chars, 7 questions, ~$") for line in lines)
    assert any(
        "§1 Welcome: 133 chars: skipped: too short for a quiz: 133 characters" in line for line in lines
    )
    assert "1 section(s) too short for a quiz" in run.stdout and not (tmp_path / "out").exists()
