"""The quiz contract's own example: a realistic, valid two-question quiz about a short passage.

It is example tier 1 (shown to the model as the shape to follow). Its quotes come from
``EXAMPLE_SOURCE``, so it also passes the quote rule when validated against that passage; against
any other document it is an illustration of the shape only. Numeric and unit answers give ten
plausible options per question, so the example stays valid for any ``options_per_question``
from 2 to 10, with options of similar length and the answers at different positions.
"""

from __future__ import annotations

from typing import Any

EXAMPLE_SOURCE = (
    "The International System of Units (SI) defines seven base units, from which all other units\n"
    "are derived. The ampere is the SI base unit of electric current, and the kelvin is the base\n"
    "unit of thermodynamic temperature."
)

_QUESTIONS: list[dict[str, Any]] = [
    {
        "question": "How many base units does the International System of Units define?",
        "correct": "Seven",
        "distractors": ["Five", "Six", "Eight", "Nine", "Ten", "Four", "Three", "Eleven", "Twelve"],
        "position": 2,
        "explanation": "The passage states that the SI defines seven base units.",
        "source_quote": "The International System of Units (SI) defines seven base units",
    },
    {
        "question": "Which SI base unit measures electric current?",
        "correct": "The ampere",
        "distractors": [
            "The volt",
            "The ohm",
            "The coulomb",
            "The watt",
            "The tesla",
            "The farad",
            "The henry",
            "The joule",
            "The siemens",
        ],
        "position": 1,
        "explanation": "The passage names the ampere as the SI base unit of electric current.",
        "source_quote": "The ampere is the SI base unit of electric current",
    },
]


def canonical_quiz(options_per_question: int) -> dict[str, Any]:
    """The example quiz with ``options_per_question`` options per question (2 to 10)."""
    return {"title": "SI base units", "questions": [_question(q, options_per_question) for q in _QUESTIONS]}


def _question(spec: dict[str, Any], k: int) -> dict[str, Any]:
    position = min(spec["position"], k - 1)
    options = list(spec["distractors"][: k - 1])
    options.insert(position, spec["correct"])
    return {
        "question": spec["question"],
        "options": options,
        "correct_answer_index": position,
        "correct_answer_text": spec["correct"],
        "explanation": spec["explanation"],
        "source_quote": spec["source_quote"],
    }
