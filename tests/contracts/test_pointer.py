"""RFC 6901 pointers: parse/format, get, splice, merge, expand, join, parent, and their errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from suture.contracts.errors import PointerError
from suture.contracts.pointer import (
    exists,
    expand,
    format_pointer,
    get,
    join,
    merge,
    parent,
    parse_pointer,
    splice,
)

DOC: dict[str, Any] = {
    "questions": [{"options": ["a", "b"], "meta": {"a/b": 1, "m~n": 2, "": 3, "é ✓": 4}}],
    "title": "T",
    "01": "key that looks like an index",
}


@pytest.mark.parametrize(
    ("pointer", "tokens"),
    [
        ("", []),
        ("/", [""]),
        ("/questions/0/options", ["questions", "0", "options"]),
        ("/a~1b", ["a/b"]),
        ("/m~0n", ["m~n"]),
        ("/~01", ["~1"]),  # RFC order: ~1 is decoded before ~0, so "~01" is "~1", not "/"
        ("/é ✓", ["é ✓"]),
    ],
)
def test_given_a_pointer_when_parsed_then_tokens_are_unescaped_and_format_round_trips(
    pointer: str, tokens: list[str]
) -> None:
    assert parse_pointer(pointer) == tokens
    assert format_pointer(tokens) == pointer


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", DOC),
        ("/title", "T"),
        ("/questions/0/options/1", "b"),
        ("/questions/0/meta/a~1b", 1),
        ("/questions/0/meta/m~0n", 2),
        ("/questions/0/meta/", 3),
        ("/questions/0/meta/é ✓", 4),
        ("/01", "key that looks like an index"),
    ],
)
def test_given_nested_and_escaped_pointers_when_get_then_the_value_is_found(
    pointer: str, expected: Any
) -> None:
    assert get(DOC, pointer) == expected
    assert exists(DOC, pointer)


@pytest.mark.parametrize(
    ("pointer", "reason"),
    [
        ("title", "start with '/'"),
        ("/missing", "does not exist"),
        ("/questions/1", "out of range"),
        ("/questions/01", "not a list index"),
        ("/questions/-1", "not a list index"),
        ("/questions/-", "past the end"),
        ("/questions/x", "not a list index"),
        ("/title/0", "cannot step into a str"),
        ("/questions/0/meta/~2", "invalid escape"),
    ],
)
def test_given_a_bad_pointer_when_get_then_pointer_error_names_it(pointer: str, reason: str) -> None:
    with pytest.raises(PointerError) as caught:
        get(DOC, pointer)
    assert caught.value.pointer == pointer
    assert reason in str(caught.value)
    assert pointer in str(caught.value)
    assert not exists(DOC, pointer)


def test_given_a_non_string_pointer_when_parsed_then_pointer_error() -> None:
    with pytest.raises(PointerError, match="must be a string"):
        parse_pointer(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pointer", "value"),
    [
        ("/questions/0/options/1", "B"),
        ("/questions/0/meta/a~1b", {"deep": [1, 2]}),
        ("/questions/0/meta/new key", None),  # a missing key in an existing object may be added
        ("/title", ["now", "a", "list"]),
        ("", {"replaced": True}),
    ],
)
def test_given_a_document_when_spliced_then_only_the_target_changes_and_input_is_untouched(
    pointer: str, value: Any
) -> None:
    before = copy.deepcopy(DOC)
    result = splice(DOC, pointer, value)
    assert get(result, pointer) == value
    assert before == DOC
    if exists(DOC, pointer):  # putting the old value back restores the document: nothing else changed
        assert splice(result, pointer, get(DOC, pointer)) == DOC
    else:
        del get(result, parent(pointer))[parse_pointer(pointer)[-1]]
        assert result == DOC


@pytest.mark.parametrize(
    "pointer", ["/questions/5", "/questions/-", "/nope/deeper", "/title/x", "/questions/0/options/01"]
)
def test_given_a_pointer_that_cannot_be_spliced_when_splice_then_pointer_error(pointer: str) -> None:
    with pytest.raises(PointerError) as caught:
        splice(DOC, pointer, 1)
    assert caught.value.pointer == pointer


def test_given_spliced_value_when_caller_mutates_it_later_then_result_is_unaffected() -> None:
    value = {"x": [1]}
    result = splice(DOC, "/title", value)
    value["x"].append(2)
    assert result["title"] == {"x": [1]}


def test_given_several_slices_when_merged_then_each_lands_and_input_is_untouched() -> None:
    before = copy.deepcopy(DOC)
    result = merge(DOC, {"/title": "U", "/questions/0/options/0": "A", "/questions/0/meta/m~0n": 9})
    assert (result["title"], result["questions"][0]["options"], result["questions"][0]["meta"]["m~n"]) == (
        "U",
        ["A", "b"],
        9,
    )
    assert before == DOC


@pytest.mark.parametrize(
    "slices",
    [
        {"/questions/0": {}, "/questions/0/options": []},
        {"/questions/0/options/1": "x", "/questions": []},
        {"": {}, "/title": "x"},
    ],
)
def test_given_overlapping_slices_when_merged_then_pointer_error(slices: dict[str, Any]) -> None:
    with pytest.raises(PointerError, match="overlaps"):
        merge(DOC, slices)


def test_given_no_slices_when_merged_then_document_is_returned_unchanged() -> None:
    assert merge(DOC, {}) is DOC


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [("/questions/0/options", "/questions/0"), ("/title", ""), ("/a~1b/c", "/a~1b")],
)
def test_given_a_pointer_when_parent_then_the_container_pointer(pointer: str, expected: str) -> None:
    assert parent(pointer) == expected


def test_given_the_whole_document_when_parent_then_pointer_error() -> None:
    with pytest.raises(PointerError, match="no parent"):
        parent("")


@pytest.mark.parametrize(
    ("base", "relative", "expected"),
    [
        ("/questions/3", "correct_answer_index", "/questions/3/correct_answer_index"),
        ("/questions/3", "options/2", "/questions/3/options/2"),
        ("/questions/3", "", "/questions/3"),
        ("/questions/3", "/title", "/title"),
        ("", "title", "/title"),
    ],
)
def test_given_base_and_relative_when_joined_then_resolved(base: str, relative: str, expected: str) -> None:
    assert join(base, relative) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("/questions/*/options/*", ["/questions/0/options/0", "/questions/0/options/1"]),
        ("/questions/*/meta/a~1b", ["/questions/0/meta/a~1b"]),
        ("/*", ["/questions", "/title", "/01"]),
        ("/title", ["/title"]),
        ("/missing", []),
        ("/title/*", []),
        ("/questions/*/nope", []),
    ],
)
def test_given_a_wildcard_pattern_when_expanded_then_existing_matches_in_document_order(
    pattern: str, expected: list[str]
) -> None:
    assert expand(DOC, pattern) == expected


# --- properties -------------------------------------------------------------------------------

keys = st.text(alphabet=st.sampled_from(["a", "b", "/", "~", "0", "1", "é", " ", "-"]), max_size=4)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)


def _all_pointers(doc: Any, prefix: list[str] | None = None) -> list[str]:
    prefix = prefix or []
    found = [format_pointer(prefix)]
    if isinstance(doc, dict):
        for key, child in doc.items():
            found += _all_pointers(child, [*prefix, key])
    elif isinstance(doc, list):
        for index, child in enumerate(doc):
            found += _all_pointers(child, [*prefix, str(index)])
    return found


@st.composite
def doc_and_pointer(draw: st.DrawFn) -> tuple[Any, str]:
    doc = draw(json_values)
    return doc, draw(st.sampled_from(_all_pointers(doc)))


@given(doc_and_pointer(), json_values)
def test_property_splice_then_get_round_trips_and_never_mutates(case: tuple[Any, str], value: Any) -> None:
    doc, pointer = case
    before = copy.deepcopy(doc)
    result = splice(doc, pointer, value)
    assert get(result, pointer) == value
    assert doc == before


@given(doc_and_pointer())
def test_property_merging_a_slice_equal_to_the_current_value_is_the_identity(case: tuple[Any, str]) -> None:
    doc, pointer = case
    assert merge(doc, {pointer: copy.deepcopy(get(doc, pointer))}) == doc


@given(doc_and_pointer())
def test_property_format_inverts_parse(case: tuple[Any, str]) -> None:
    _, pointer = case
    assert format_pointer(parse_pointer(pointer)) == pointer
