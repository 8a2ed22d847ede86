"""Every JSONL line suture writes is one line for every reader, and parses back to the same record."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from suture.workers.jsonl import dumps_line

records = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(records)
def test_a_record_is_one_line_for_every_splitter_and_round_trips(record: object) -> None:
    line = dumps_line(record)
    assert line.endswith("\n")
    assert line.splitlines() == [line[:-1]]  # str.splitlines splits on U+0085, U+2028, U+2029 too
    assert json.loads(line) == record


def test_line_separators_are_escaped_and_other_text_kept_readable() -> None:
    line = dumps_line({"quote": "a\u0085b\u2028c\u2029d é ü"})
    assert line == '{"quote": "a\\u0085b\\u2028c\\u2029d é ü"}\n'
