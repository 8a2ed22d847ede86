"""A batch output folder written by hand, with every kind of question and every character that bites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Every GIFT special character, markup, quotes, a newline and a formula-looking start.
NASTY_STEM = 'In 1:2 ratios, is a~b = {c} # "d" \\ <b>bold</b> & e\nright?'
NASTY_OPTION = "=SUM(A1:A9) ~ {x}"


def question(stem: str, options: list[str], correct: int, **extra: Any) -> dict[str, Any]:
    return {
        "question": stem,
        "options": options,
        "correct_answer_index": correct,
        "correct_answer_text": options[correct],
        "explanation": f"Because {options[correct]} is what the notes say.",
        "source_quote": f"The notes say {options[correct]}.",
        **extra,
    }


def line(
    file: str,
    section: int,
    title: str | None,
    pages: list[int] | None,
    questions: list[dict[str, Any]],
    **extra: Any,
) -> dict[str, Any]:
    source = {"file": file, "section": section, "title": title, "pages": pages}
    status = extra.pop("status", "delivered")
    failures = [{"code": "imbalanced_options"}] if status == "soft_delivered" else []
    quiz = {"title": f"Quiz {section}", "questions": questions}
    return {
        "source": source,
        "job_id": f"job-{file}-{section}",
        "status": status,
        "quiz": quiz,
        "failures": failures,
        **extra,
    }


LINES = [
    line(
        "course/cells.pdf",
        1,
        "1. Cells / membranes: an intro",
        [3, 4],
        [
            question(NASTY_STEM, [NASTY_OPTION, "Plain option", "Tab\there", "Last: one"], 0),
            question("Which organelle makes ATP?", ["Nucleus", "Mitochondrion", "Ribosome", "Vacuole"], 1),
            {
                "kind": "multiple",
                "question": "Which are organelles?",
                "options": ["Nucleus", "Cytosol", "Ribosome", "Water"],
                "correct_answer_indices": [0, 2],
                "explanation": "Both are organelles.",
                "source_quote": "organelles such as",
            },
            {
                "kind": "true_false",
                "question": "Cells divide by mitosis.",
                "options": ["True", "False"],
                "correct_answer_index": 0,
                "explanation": "They do.",
                "source_quote": "Cells divide by mitosis.",
            },
        ],
        accepted=True,
    ),
    line(
        "course/slides.pptx",
        2,
        "Ribosomes",
        [5, 5],
        [question("What do ribosomes make?", ["Proteins", "Lipids", "Sugars", "DNA"], 0)],
    ),
    line(
        "course/notes.md",
        1,
        None,
        None,
        [question("Which is soft?", ["Wax", "Iron", "Stone", "Glass"], 0)],
        status="soft_delivered",
    ),
]


def batch_output(folder: Path, lines: list[dict[str, Any]] = LINES, simulated: bool = True) -> Path:
    """An output folder as `suture batch` leaves it: quizzes.jsonl and report.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "quizzes.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    (folder / "report.json").write_text(json.dumps({"simulated": simulated}))
    return folder
