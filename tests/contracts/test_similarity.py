"""Shared-word similarity: exact and near repeats, found without comparing every pair."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suture.contracts.similarity import jaccard, repeats, words


def test_words_fold_case_and_drop_punctuation_and_blanks() -> None:
    assert words("Which _____ is THE cell's   powerhouse?") == frozenset(
        {"which", "is", "the", "cell", "s", "powerhouse"}
    )


def test_a_blank_text_never_repeats() -> None:
    assert repeats(["", "  ?! ", ""], 0.5) == []


def test_each_repeat_names_its_first_earlier_match() -> None:
    found = repeats(["a b c d", "x y z", "a b c d", "d c b a e"], 0.8)
    assert [(r.later, r.earlier, r.exact) for r in found] == [(2, 0, True), (3, 0, False)]


@pytest.mark.parametrize("threshold", [0.0, -1, 1.01])
def test_a_threshold_outside_0_1_is_a_programmer_error(threshold: float) -> None:
    with pytest.raises(ValueError, match="threshold"):
        repeats(["a"], threshold)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from("abcdefghij"), min_size=0, max_size=7).map(" ".join), max_size=12
    ),
    threshold=st.sampled_from([0.3, 0.5, 0.6, 0.75, 0.85, 1.0]),
)
def test_prefix_filtering_finds_exactly_what_comparing_every_pair_finds(
    texts: list[str], threshold: float
) -> None:
    # Given any short texts over a small vocabulary (many overlaps), When repeats are found
    found = {(r.later, r.earlier) for r in repeats(texts, threshold)}
    # Then they are the first earlier match of a brute-force comparison of every pair
    expected = set()
    sets = [words(t) for t in texts]
    for j, i in itertools.product(range(len(texts)), range(len(texts))):
        similar = i < j and sets[j] and jaccard(sets[i], sets[j]) >= threshold - 1e-9
        if similar and not any(later == j for later, _ in expected):
            expected.add((j, i))
    assert found == expected
