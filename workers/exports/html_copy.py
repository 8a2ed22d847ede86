"""A printable review copy: every bank with its questions, the right answers marked, and the sources.

One self-contained HTML page (inline CSS; each bank starts a new printed page), options in a seeded
shuffled order (a printed copy is not shuffled by any LMS). Every string from
the quizzes is escaped: documents and model output are untrusted.
"""

from __future__ import annotations

from html import escape
from string import ascii_uppercase

from suture.workers.exports.bank import KINDS, Bank, BankQuestion, Catalogue
from suture.workers.exports.feedback import SIMULATION_NOTICE
from suture.workers.exports.formats import ExportFormat

_CSS = """
body{font:15px/1.45 Georgia,serif;max-width:46em;margin:2em auto;padding:0 1em;color:#111}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #999;margin-top:2em}
.sim{background:#fff3cd;border:2px solid #e0a800;padding:.6em 1em;font-weight:600}
ol.options{list-style:upper-alpha}li.right{font-weight:700}li.right::after{content:"  \\2714"}
.why{color:#333;margin:.3em 0 0}.src{color:#555;font-size:.9em;margin:.2em 0 1.2em}
.kind{color:#666;font-size:.85em}@media print{section.bank{break-before:page}.sim{border-width:1px}}
"""


def render(catalogue: Catalogue) -> bytes:
    """The whole page."""
    parts = ["<!doctype html><html lang=en><head><meta charset=utf-8>", "<title>Question banks</title>"]
    parts.append(f"<style>{_CSS}</style></head><body>")
    if catalogue.simulated:
        parts.append(f"<p class=sim>{escape(SIMULATION_NOTICE)}</p>")
    parts.append(f"<h1>Question banks ({len(catalogue.banks)} banks, {catalogue.questions} questions)</h1>")
    parts += [_bank(bank) for bank in catalogue.banks]
    parts.append("</body></html>")
    return "\n".join(parts).encode("utf-8")


def _bank(bank: Bank) -> str:
    status = " (soft-delivered: to review)" if bank.status == "soft_delivered" else ""
    head = (
        f"<h2>{escape(bank.name)}</h2><p class=src>{escape(bank.document)}, "
        f"{escape(bank.where())}{status}</p>"
    )
    items = "".join(_question(bank, q.shuffled()) for q in bank.questions)  # print: seeded order
    return f"<section class=bank id={escape(bank.uid)}>{head}<ol class=questions>{items}</ol></section>"


def _question(bank: Bank, q: BankQuestion) -> str:
    kinds = {"multiple": "several answers", "true_false": "true or false"}
    kind = f" <span class=kind>({kinds[q.kind]})</span>" if q.kind in kinds else ""
    options = "".join(
        f"<li class={'right' if i in q.correct else 'wrong'}>{escape(option)}</li>"
        for i, option in enumerate(q.options)
    )
    letters = ", ".join(ascii_uppercase[i] for i in q.correct)
    why = f"<p class=why><b>Answer {letters}.</b> {escape(q.explanation)}</p>"
    source = f"<p class=src>{escape(bank.source_line(q))}</p>" if q.source_quote else ""
    return f"<li><p>{escape(q.stem)}{kind}</p><ol class=options>{options}</ol>{why}{source}</li>"


FORMAT = ExportFormat(
    name="html",
    description="a printable review copy (HTML)",
    suffix=".html",
    kinds=frozenset(KINDS),
    render=render,
)
