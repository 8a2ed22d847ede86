"""GIFT, Moodle's plain-text question format: one ``$CATEGORY`` per bank, general feedback after ``####``.

Texts are written as ``[html]`` (escaped HTML), then GIFT-escaped: ``~ = # { } :`` and the
backslash get a backslash, and every text is one line (a blank line would end a question).
Category paths are ``$course$/top/<document>/<section title>``, with ``/`` in a name doubled as
Moodle does. Single answer: ``=right ~wrong``; multiple answers: ``~%50%right ~%-100%wrong``
(each right one worth an equal share); true/false: ``{TRUE}`` / ``{FALSE}``.
"""

from __future__ import annotations

from html import escape

from suture.workers.exports.bank import KINDS, Bank, BankQuestion, Catalogue, one_line
from suture.workers.exports.feedback import SIMULATION_NOTICE, general_feedback_html
from suture.workers.exports.formats import ExportFormat, category_path, share_percent

_SPECIAL = str.maketrans({c: f"\\{c}" for c in "\\~=#{}:"})


def gift_escape(text: str) -> str:
    """A text safe inside GIFT: one line, special characters escaped with a backslash."""
    return one_line(text).translate(_SPECIAL)


def _html(text: str) -> str:
    return gift_escape(escape(one_line(text), quote=False))


def render(catalogue: Catalogue) -> bytes:
    """The whole GIFT file."""
    lines = ["// Question banks exported by suture: one category per section of each document."]
    if catalogue.simulated:
        lines.append(f"// {SIMULATION_NOTICE}")
    for bank in catalogue.banks:
        lines += ["", f"$CATEGORY: {one_line(category_path(bank))}", ""]
        for question in bank.questions:
            lines += [_question(bank, question), ""]
    return ("\n".join(lines).rstrip() + "\n").encode("utf-8")


def _question(bank: Bank, q: BankQuestion) -> str:
    name = gift_escape(f"{bank.document_name} {bank.section} Q{q.number:02d}")
    feedback = gift_escape(general_feedback_html(bank, q))
    head = f"::{name}::[html]{_html(q.stem)} {{"
    if q.kind == "true_false":
        return f"{head}{'TRUE' if q.is_true else 'FALSE'}####{feedback}}}"
    if q.kind == "multiple":
        right = share_percent(len(q.correct))
        answers = [f"~%{right if i in q.correct else '-100'}%{_html(o)}" for i, o in enumerate(q.options)]
    else:
        answers = [f"{'=' if i in q.correct else '~'}{_html(o)}" for i, o in enumerate(q.options)]
    return "\n".join([head, *(f"\t{a}" for a in answers), f"\t####{feedback}", "}"])


FORMAT = ExportFormat(
    name="gift",
    description="GIFT (Moodle's text format)",
    suffix=".gift",
    kinds=frozenset(KINDS),
    render=render,
)
