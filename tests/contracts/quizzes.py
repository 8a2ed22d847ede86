"""Builders of real quiz outputs and their source document, shared by the contract and CLI tests."""

from __future__ import annotations

import copy
import json
from typing import Any

OPTION_WORDS = [
    "Amber",
    "Basalt",
    "Cobalt",
    "Dolomite",
    "Emerald",
    "Feldspar",
    "Garnet",
    "Hematite",
    "Iolite",
    "Jade",
]


def fact(i: int) -> str:
    """The sentence of the source that question ``i`` quotes."""
    return f"Sample {i} of the collection is catalogued as {OPTION_WORDS[i % len(OPTION_WORDS)]} {i}."


def source_document(n: int) -> str:
    """A source document with one fact per question, wrapped over lines like a real text."""
    return "\n".join(f"{fact(i)} It was described in the survey of year {1900 + i}." for i in range(n))


# Stems open in turn with different words, as a varied quiz does (``repeated_stem_opening``).
STEMS = [
    "What is the catalogue name of sample {i} of the collection?",
    "In the survey, what is sample {i} of the collection catalogued as?",
    "Which name is sample {i} of the collection catalogued under?",
    "Under what name does the collection catalogue sample {i}?",
]


def question(i: int, k: int = 4) -> dict[str, Any]:
    """A valid question ``i`` with ``k`` options; correct positions cycle so the quiz is balanced."""
    options = [f"{OPTION_WORDS[(i + j) % len(OPTION_WORDS)]} {i}" for j in range(k)]
    index = i % k
    options[index], options[0] = options[0], options[index]
    return {
        "question": STEMS[i % len(STEMS)].format(i=i),
        "options": options,
        "correct_answer_index": index,
        "correct_answer_text": options[index],
        "explanation": f"The survey catalogues sample {i} as {options[index]}.",
        "source_quote": fact(i),
    }


def make_quiz(n: int = 15, k: int = 4) -> dict[str, Any]:
    """A valid quiz of ``n`` questions with ``k`` options each."""
    return {"title": "Mineral collection survey", "questions": [question(i, k) for i in range(n)]}


def changed(quiz: dict[str, Any], i: int, **fields: Any) -> dict[str, Any]:
    """A deep copy of ``quiz`` with fields of question ``i`` replaced."""
    result = copy.deepcopy(quiz)
    result["questions"][i].update(fields)
    return result


def text(value: Any) -> str:
    """The JSON text of a value, as a model would send it."""
    return json.dumps(value, ensure_ascii=False)
