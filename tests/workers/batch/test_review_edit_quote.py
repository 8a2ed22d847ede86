"""An edited question's source quote, re-checked against its section when the edit changes the answer."""

from __future__ import annotations

from suture.workers.batch.review_edits import supporting_quote

SECTION = (
    "A tax on pollution makes the polluter pay for the harm. Tradable permits cap the total emitted. "
    "The Coase theorem says bargaining can reach the efficient outcome."
)


def _question(answer: str, quote: str) -> dict[str, object]:
    return {"kind": "single", "correct_answer_text": answer, "source_quote": quote}


def test_a_quote_naming_the_new_answer_is_kept() -> None:
    quote = "Tradable permits cap the total emitted."
    assert supporting_quote(_question("Tradable permits", quote), SECTION) == quote


def test_a_quote_about_something_else_is_replaced_by_a_sentence_naming_the_answer() -> None:
    old = "A tax on pollution makes the polluter pay for the harm."
    assert supporting_quote(_question("Coase theorem", old), SECTION) == (
        "The Coase theorem says bargaining can reach the efficient outcome."
    )


def test_an_answer_the_section_never_names_clears_the_quote() -> None:
    old = "A tax on pollution makes the polluter pay for the harm."
    assert supporting_quote(_question("Cap and dividend", old), SECTION) == ""


def test_a_quote_naming_most_of_a_longer_answer_is_kept() -> None:
    quote = "Plants take in carbon dioxide through their leaves."
    answer = "Carbon dioxide, taken in through the leaves"
    assert supporting_quote(_question(answer, quote), SECTION) == quote
