"""The outline contract: a course outline of a document, modules -> lessons -> objectives.

A second built-in of a different shape from the quiz, stated declaratively (``declarative``), so the
built-in and a user's contract file run the same code. Rules (codes stable):

======================  ================================  ============================================
code                    pointer                           fails when
======================  ================================  ============================================
duplicate_lesson_title  /modules/i/lessons/j/title        it repeats an earlier lesson's of its module
objective_verb          /modules/i/lessons/j/objectives/k  it does not start with a verb of ``VERBS``
objective_too_long      /modules/i/lessons/j/objectives/k  it has more than 12 words
quote_not_in_source     /modules/i/lessons/j/source_quote  it is not quoted from the source document
too_few_lessons         /modules/i/lessons                fewer than 2 lessons in the module
======================  ================================  ============================================

The surgical unit is the lesson: a failure inside one regenerates that lesson only.
"""

from __future__ import annotations

from typing import Any

from suture.contracts.declarative import contract_from_definition

VERBS = (
    "Explain",
    "Describe",
    "Identify",
    "Compare",
    "Apply",
    "Analyse",
    "Evaluate",
    "List",
    "Define",
    "Summarise",
    "Distinguish",
    "Outline",
)
MAX_OBJECTIVE_WORDS = 12
MIN_LESSONS = 2
EXAMPLE_SOURCE = (
    "Photosynthesis turns light into chemical energy. Chlorophyll absorbs mostly red and blue light. "
    "The Calvin cycle fixes carbon dioxide into sugars. Stomata open to let carbon dioxide in."
)


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _array(items: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": items, "description": description}


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_OBJECTIVE = _text(
    f"A learning objective of at most {MAX_OBJECTIVE_WORDS} words that starts with one of: {', '.join(VERBS)}"
)
_LESSON = _object(
    title=_text("The lesson's title, distinct from the other lessons of its module."),
    objectives=_array(_OBJECTIVE, "2 to 3 learning objectives."),
    source_quote=_text("A verbatim snippet of the document this lesson teaches."),
)
_MODULE = _object(
    title=_text("The module's title."),
    lessons=_array(_LESSON, "2 to 4 lessons."),
)
SCHEMA = _object(
    title=_text("A short title for the course."),
    modules=_array(_MODULE, "2 to 4 modules."),
)
LESSON = "/modules/*/lessons/*"
DEFINITION: dict[str, Any] = {
    "name": "outline",
    "title": "Course outline",
    "instructions": (
        "Write a course outline of the document: 2 to 4 modules, each of 2 to 4 lessons whose titles are "
        "distinct within the module. Each lesson has 2 or 3 learning objectives of at most "
        f"{MAX_OBJECTIVE_WORDS} "
        f"words, each starting with one of these verbs: {', '.join(VERBS)}; and a source_quote copied "
        "verbatim from the document (the passage the lesson teaches)."
    ),
    "schema": SCHEMA,
    "unit": LESSON,
    "preserve": [],
    "rules": [
        {"rule": "unique", "at": f"{LESSON}/title", "code": "duplicate_lesson_title"},
        {
            "rule": "regex",
            "at": f"{LESSON}/objectives/*",
            "pattern": rf"^({'|'.join(VERBS)})\b",
            "code": "objective_verb",
        },
        {
            "rule": "max_words",
            "at": f"{LESSON}/objectives/*",
            "max": MAX_OBJECTIVE_WORDS,
            "code": "objective_too_long",
        },
        {"rule": "in_source", "at": f"{LESSON}/source_quote", "code": "quote_not_in_source"},
        {"rule": "min_items", "at": "/modules/*/lessons", "min": MIN_LESSONS, "code": "too_few_lessons"},
    ],
    "example": {
        "title": "Photosynthesis",
        "modules": [
            {
                "title": "Capturing light",
                "lessons": [
                    {
                        "title": "Light into energy",
                        "objectives": ["Explain how light becomes chemical energy"],
                        "source_quote": "Photosynthesis turns light into chemical energy.",
                    },
                    {
                        "title": "Chlorophyll",
                        "objectives": ["Identify the light colours chlorophyll absorbs"],
                        "source_quote": "Chlorophyll absorbs mostly red and blue light.",
                    },
                ],
            },
            {
                "title": "Making sugar",
                "lessons": [
                    {
                        "title": "The Calvin cycle",
                        "objectives": ["Describe how the Calvin cycle fixes carbon"],
                        "source_quote": "The Calvin cycle fixes carbon dioxide into sugars.",
                    },
                    {
                        "title": "Stomata",
                        "objectives": ["Explain why stomata open"],
                        "source_quote": "Stomata open to let carbon dioxide in.",
                    },
                ],
            },
        ],
    },
}

OutlineContract = contract_from_definition(DEFINITION)
