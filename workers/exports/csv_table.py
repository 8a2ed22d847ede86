"""CSV: one row per question, for a spreadsheet or an LMS's CSV import.

Columns: ``bank`` (document and section title), ``document``, ``section``, ``section_title``,
``source_pages``, ``question_number``, ``kind``, ``question``, ``option_a`` ... (as many as the
longest question needs), ``correct`` (letters, ``;``-separated for several), ``correct_text``,
``explanation``, ``source_quote``, ``status``, ``job_id``, ``simulated``. A cell that a
spreadsheet would run as a formula (starting with ``= + - @``, a tab or a carriage return) is
prefixed with ``'``, because documents and model output are untrusted; a number (``-0.47``,
``+3``, ``1.5e-3``, ``-12 %``) is no formula and is left alone. Options are in a seeded shuffled
order (``BankQuestion.shuffled``): an LMS importing CSV does not shuffle them itself.
"""

from __future__ import annotations

import csv
import io
import re
from string import ascii_lowercase, ascii_uppercase

from suture.workers.exports.bank import KINDS, Catalogue
from suture.workers.exports.formats import ExportFormat

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# A plain number a spreadsheet reads as a number, not a formula: sign, digits, decimals, exponent, percent.
_NUMBER = re.compile(r"^[+-]?(?:\d[\d ,]*(?:[.,]\d+)?|[.,]\d+)(?:[eE][+-]?\d+)?\s?%?$")


def safe_cell(value: object) -> str:
    """A cell's text, defused if a spreadsheet would take it for a formula (a number stays a number)."""
    text = str(value)
    if not text.startswith(_FORMULA_START) or _NUMBER.match(text):
        return text
    return f"'{text}"


def render(catalogue: Catalogue) -> bytes:
    """The whole CSV file (UTF-8 with a byte-order mark, which spreadsheets need to read UTF-8)."""
    width = max((len(q.options) for bank in catalogue.banks for q in bank.questions), default=0)
    options = [f"option_{ascii_lowercase[i]}" for i in range(width)]
    header = ["bank", "document", "section", "section_title", "source_pages", "question_number", "kind"]
    header += ["question", *options, "correct", "correct_text", "explanation", "source_quote"]
    header += ["status", "job_id", "simulated"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    for bank in catalogue.banks:
        for q in (question.shuffled() for question in bank.questions):
            row: list[object] = [bank.name, bank.document, bank.section, bank.section_name, bank.where()]
            row += [q.number, q.kind, q.stem, *q.options, *[""] * (width - len(q.options))]
            row += [
                ";".join(ascii_uppercase[i] for i in q.correct),
                ";".join(q.options[i] for i in q.correct),
            ]
            row += [q.explanation, q.source_quote, bank.status, bank.job_id, catalogue.simulated]
            writer.writerow([safe_cell(cell) for cell in row])
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


FORMAT = ExportFormat(
    name="csv",
    description="CSV, one row per question",
    suffix=".csv",
    kinds=frozenset(KINDS),
    render=render,
)
