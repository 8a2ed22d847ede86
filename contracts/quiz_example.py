"""The quiz contract's own example: a realistic, valid two-question quiz about a short passage.

It is example tier 1 (shown to the model as the shape to follow). Its quotes come from
``EXAMPLE_SOURCE``, so it also passes the quote rule when validated against that passage; against
any other document it is an illustration of the shape only. Numeric and unit answers give ten
plausible options per question, so the example stays valid for any ``options_per_question``
from 2 to 10, with options of similar length and the answers at different positions. A quiz of other
kinds (``question_kinds``) shows them in turn: a multiple-answer question and a true/false one about
the same passage (true/false options in the quiz's language).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from suture.contracts.language import TRUE_FALSE

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


_MULTIPLE: list[dict[str, Any]] = [
    {
        "question": "Which of these are SI base units?",
        "correct": ["The ampere", "The kelvin"],
        "distractors": [
            "The volt",
            "The ohm",
            "The watt",
            "The joule",
            "The tesla",
            "The farad",
            "The henry",
            "The siemens",
        ],
        "explanation": "The passage names the ampere and the kelvin as SI base units.",
        "source_quote": "The ampere is the SI base unit of electric current, and the kelvin is the base",
    },
    {
        "question": "Which quantities does the passage give an SI base unit for?",
        "correct": ["Electric current", "Temperature"],
        "distractors": [
            "Pressure",
            "Energy",
            "Power",
            "Voltage",
            "Resistance",
            "Frequency",
            "Force",
            "Charge",
        ],
        "explanation": "The ampere measures electric current and the kelvin thermodynamic temperature.",
        "source_quote": "The ampere is the SI base unit of electric current",
    },
]
_TRUE_FALSE: list[dict[str, Any]] = [
    {
        "question": "Is the kelvin the SI base unit of thermodynamic temperature?",
        "true": True,
        "explanation": "The passage names the kelvin as the base unit of thermodynamic temperature.",
        "source_quote": "the kelvin is the base\nunit of thermodynamic temperature",
    },
    {
        "question": "Does the International System of Units define nine base units?",
        "true": False,
        "explanation": "The passage states that the SI defines seven base units, not nine.",
        "source_quote": "The International System of Units (SI) defines seven base units",
    },
]


def canonical_quiz(
    options_per_question: int, kinds: Sequence[str] = ("single",), language: str = "en"
) -> dict[str, Any]:
    """The example quiz with ``options_per_question`` options per question (2 to 10), of ``kinds`` in turn."""
    questions = []
    for i, spec in enumerate(_QUESTIONS):
        kind = kinds[i % len(kinds)]
        if kind == "multiple" and options_per_question >= 3:
            questions.append(_multiple(_MULTIPLE[i], options_per_question))
        elif kind == "true_false":
            questions.append(_true_false(_TRUE_FALSE[i], language))
        else:
            questions.append(_question(spec, options_per_question))
    return {"title": "SI base units", "questions": questions}


def _question(spec: dict[str, Any], k: int) -> dict[str, Any]:
    position = min(spec["position"], k - 1)
    options = list(spec["distractors"][: k - 1])
    options.insert(position, spec["correct"])
    return {
        "kind": "single",
        "question": spec["question"],
        "options": options,
        "correct_answer_index": position,
        "correct_answer_text": spec["correct"],
        "correct_answer_indices": None,
        "explanation": spec["explanation"],
        "source_quote": spec["source_quote"],
    }


def _multiple(spec: dict[str, Any], k: int) -> dict[str, Any]:
    first, second = spec["correct"]
    options = [first, *spec["distractors"][: k - 2]]
    options.insert(min(2, k - 1), second)
    return {
        "kind": "multiple",
        "question": spec["question"],
        "options": options,
        "correct_answer_index": 0,
        "correct_answer_text": first,
        "correct_answer_indices": sorted([0, options.index(second)]),
        "explanation": spec["explanation"],
        "source_quote": spec["source_quote"],
    }


def _true_false(spec: dict[str, Any], language: str) -> dict[str, Any]:
    pair = list(TRUE_FALSE.get(language, TRUE_FALSE["en"]))
    index = 0 if spec["true"] else 1
    return {
        "kind": "true_false",
        "question": spec["question"],
        "options": pair,
        "correct_answer_index": index,
        "correct_answer_text": pair[index],
        "correct_answer_indices": None,
        "explanation": spec["explanation"],
        "source_quote": spec["source_quote"],
    }
