"""Quote lookup in a source document: whitespace and typographic quotes folded, positions mapped back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from suture.contracts.source import SourceText, fold

words = st.sampled_from(["ab", "cd", "ef", "a", "b", "\u201cq\u201d", "é"])
separators = st.sampled_from([" ", "  ", "\n", "\t "])


@st.composite
def document_and_quote(draw: st.DrawFn) -> tuple[str, str]:
    tokens = draw(st.lists(words, min_size=1, max_size=12))
    text = "".join(token + draw(separators) for token in tokens)
    start = draw(st.integers(0, len(text) - 1))
    end = draw(st.integers(start + 1, len(text)))
    quote = draw(st.sampled_from([text[start:end], "ab cd ef", "cd a b", "zz"]))
    return text, quote


@given(document_and_quote())
def test_property_find_agrees_with_a_plain_search_of_the_folded_text(case: tuple[str, str]) -> None:
    text, quote = case
    source = SourceText(text)
    span = source.find(quote)
    plain = source.folded.find(fold(quote)) if fold(quote) else -1
    assert (span is None) == (plain < 0)
    if span is not None:
        assert fold(text[span[0] : span[1]]) == fold(quote)


@pytest.mark.parametrize(
    ("text", "quote", "found"),
    [
        ("The core\n  is made of iron.", "core is made", "core\n  is made"),
        ("He said \u201cyes\u201d twice.", 'said "yes" twice', "said \u201cyes\u201d twice"),
        ("A long\u2014dash here.", "long-dash", "long\u2014dash"),
    ],
)
def test_given_a_quote_with_folded_differences_when_found_then_original_text_is_returned(
    text: str, quote: str, found: str
) -> None:
    span = SourceText(text).find(quote)
    assert span is not None and text[span[0] : span[1]] == found


@pytest.mark.parametrize("quote", ["", "   ", "absent words here"])
def test_given_a_blank_or_absent_quote_when_found_then_none(quote: str) -> None:
    assert SourceText("some words here").find(quote) is None
    assert SourceText("some words here").excerpt(quote, 10) is None
