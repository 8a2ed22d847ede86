"""What every export says after a question: the explanation, then the source page and quote.

``general_feedback`` is plain text, ``general_feedback_html`` the same as HTML (every string from
the quiz escaped: documents and model output are untrusted). ``paragraph`` wraps one plain text as
an HTML paragraph, for formats whose texts are HTML.
"""

from __future__ import annotations

from html import escape

from suture.workers.exports.bank import Bank, BankQuestion

SIMULATION_NOTICE = "SIMULATION: these questions were written by the suture simulator, not a real model."


def general_feedback(bank: Bank, question: BankQuestion) -> str:
    """``<explanation>`` then ``Source: <file>, p. 3: "<quote>"``, on two lines."""
    lines = [question.explanation] if question.explanation else []
    if question.source_quote:
        lines.append(bank.source_line(question))
    return "\n".join(lines)


def general_feedback_html(bank: Bank, question: BankQuestion) -> str:
    """The general feedback as HTML paragraphs."""
    return "".join(paragraph(line) for line in general_feedback(bank, question).splitlines())


def paragraph(text: str) -> str:
    """One plain text as an escaped HTML paragraph."""
    return f"<p>{escape(text, quote=False)}</p>"
