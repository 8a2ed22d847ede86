"""Shared pieces of the bad-output corpus (source text, valid base quiz, editors), so every case module
builds its cases from the same quiz."""

from __future__ import annotations

import json
from typing import Any

# (name, raw bytes, expected kind or 'ok', expected code or None, finish_reason)
Case = tuple[str, bytes, str, str | None, str | None]

SOURCE = (
    "The mitochondrion is the site of cellular respiration in eukaryotic cells. "
    "Glycolysis takes place in the cytoplasm and splits one glucose molecule into two pyruvate molecules. "
    "The Krebs cycle runs in the mitochondrial matrix and releases carbon dioxide. "
    "Oxidative phosphorylation on the inner membrane produces most of the cell's ATP. "
    "Oxygen is the final electron acceptor of the electron transport chain."
)
QUOTES = [
    "The mitochondrion is the site of cellular respiration",
    "Glycolysis takes place in the cytoplasm",
    "The Krebs cycle runs in the mitochondrial matrix",
    "Oxygen is the final electron acceptor",
]


def base_quiz() -> dict[str, Any]:
    """A valid 4-question quiz of SOURCE (answers at positions 0, 1, 2, 3)."""
    rows = [
        (
            "Where does cellular respiration take place?",
            ["Mitochondrion", "Nucleus", "Ribosome", "Golgi body"],
        ),
        ("Where does glycolysis take place?", ["Nucleus", "Cytoplasm", "Matrix", "Lysosome"]),
        ("Where does the Krebs cycle run?", ["Cytoplasm", "Nucleus", "Mitochondrial matrix", "Cell wall"]),
        ("What is the final electron acceptor?", ["Glucose", "Pyruvate", "Carbon dioxide", "Oxygen"]),
    ]
    questions = []
    for i, (text, options) in enumerate(rows):
        questions.append(
            {
                "question": text,
                "options": options,
                "correct_answer_index": i,
                "correct_answer_text": options[i],
                "explanation": f"The source says: {QUOTES[i]}.",
                "source_quote": QUOTES[i],
            }
        )
    return {"title": "Cellular respiration", "questions": questions}


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def edited(path: list[Any], value: Any) -> dict[str, Any]:
    """The base quiz with the value at ``path`` replaced (or deleted when value is ...)."""
    quiz = base_quiz()
    node: Any = quiz
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return quiz
