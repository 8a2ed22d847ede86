"""Aiken, Moodle's simplest format: the question on one line, lettered options, ``ANSWER: B``.

Aiken has no categories, no feedback, no comments and no escaping, and only single-answer questions
(a true/false question is written as one with the options True and False). So the file holds every
bank one after another, each question's text as students will read it (the bank is named only by
the order), and the explanation and source are not carried (use Moodle XML or GIFT for those). A
question or option line that would read as a format line (``B) ...``, ``ANSWER: ...``) is prefixed
with ``- ``. Options are in a seeded shuffled order (Moodle does not shuffle an Aiken import's
answers for a question bank). With no place for a comment, a simulated export says so in each
question's text ("[SIMULATED] ..."): questions the simulator wrote must not reach students unmarked.
"""

from __future__ import annotations

import re
from string import ascii_uppercase

from suture.workers.exports.bank import Catalogue, one_line
from suture.workers.exports.formats import ExportFormat

MAX_OPTIONS = len(ascii_uppercase)
SIMULATED_MARK = "[SIMULATED] "
_FORMAT_LINE = re.compile(r"^(?:[A-Z][.)]\s|ANSWER\s*:)", re.IGNORECASE)


def _line(text: str) -> str:
    text = one_line(text)
    return f"- {text}" if _FORMAT_LINE.match(text) else text


def render(catalogue: Catalogue) -> bytes:
    """The whole Aiken file."""
    blocks = []
    for bank in catalogue.banks:
        for q in (question.shuffled() for question in bank.questions):
            if len(q.options) > MAX_OPTIONS:
                continue  # cannot be lettered; counted by the loader's kinds check in practice
            lines = [_line(f"{SIMULATED_MARK}{q.stem}" if catalogue.simulated else q.stem)]
            lines += [f"{ascii_uppercase[i]}. {one_line(o)}" for i, o in enumerate(q.options)]
            lines.append(f"ANSWER: {ascii_uppercase[q.correct[0]]}")
            blocks.append("\n".join(lines))
    return ("\n\n".join(blocks) + "\n").encode("utf-8")


FORMAT = ExportFormat(
    name="aiken",
    description="Aiken (single-answer questions only; no categories or feedback)",
    suffix=".txt",
    kinds=frozenset({"single", "true_false"}),
    render=render,
)
