"""Property fuzzing of the surgery primitives and the prompt builders, beyond tests/contracts and tests/tasks.

Already covered there (not repeated): splice-then-get round trip, merge of an unchanged slice,
format/parse inversion, retry-prompt byte determinism and key-order independence. Added here:
arbitrary (hostile) pointers only ever raise ``PointerError``; a splice touches nothing outside
its target; merging disjoint slices is order-free and equals successive splices; a preserve
merge never lets a preserved value change and accounts for every slice; prompt builders never
raise on odd values and never leak a secret after redaction.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suture.contracts.errors import PointerError
from suture.contracts.failure import Failure
from suture.contracts.pointer import expand, format_pointer, get, is_prefix, merge, parse_pointer, splice
from suture.contracts.preserve import merge_with_preserve
from suture.tasks.prompts import (
    SliceParts,
    canonical_json,
    redact_messages,
    retry_messages,
    slice_messages,
)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

keys = st.text(alphabet=st.sampled_from("ab/~0 1é"), max_size=3)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=15,
)
hostile_pointers = st.one_of(
    st.text(max_size=12),
    st.lists(
        st.sampled_from(["", "0", "01", "-", "~", "~0", "~1", "~2", "a", "9999", "-1", " 1"]), max_size=4
    ).map(lambda parts: "/" + "/".join(parts)),
)


def all_pointers(doc: Any, prefix: tuple[str, ...] = ()) -> list[str]:
    found = [format_pointer(list(prefix))]
    children: Any = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for key, child in children:
        found += all_pointers(child, (*prefix, str(key)))
    return found


@st.composite
def doc_and_pointers(draw: st.DrawFn, count: int = 2) -> tuple[Any, list[str]]:
    doc = draw(json_values)
    pointers = all_pointers(doc)
    return doc, draw(st.lists(st.sampled_from(pointers), min_size=1, max_size=count))


@FUZZ
@given(json_values, hostile_pointers, json_values)
def test_any_pointer_either_works_or_raises_pointer_error(doc: Any, pointer: str, value: Any) -> None:
    # Given any document and any string as a pointer (model-chosen pointers are untrusted)
    before = copy.deepcopy(doc)
    for operation in (
        lambda: parse_pointer(pointer),
        lambda: get(doc, pointer),
        lambda: splice(doc, pointer, value),
        lambda: merge(doc, {pointer: value}),
        lambda: expand(doc, pointer),
    ):
        # When used / Then it works or raises PointerError carrying the pointer, nothing else
        try:
            operation()
        except PointerError as exc:
            assert str(exc)
    assert doc == before


@FUZZ
@given(doc_and_pointers(count=1), json_values)
def test_splice_changes_nothing_outside_its_target(case: tuple[Any, list[str]], value: Any) -> None:
    # Given a document and a pointer in it
    doc, (target,) = case
    # When a value is spliced there
    result = splice(doc, target, value)
    # Then every pointer that is neither the target's ancestor nor inside it still holds its value
    for pointer in all_pointers(doc):
        if not is_prefix(pointer, target) and not is_prefix(target, pointer):
            assert get(result, pointer) == get(doc, pointer)


@FUZZ
@given(doc_and_pointers(count=3), st.lists(json_values, min_size=3, max_size=3))
def test_merging_disjoint_slices_is_order_free_and_equals_successive_splices(
    case: tuple[Any, list[str]], values: list[Any]
) -> None:
    # Given slices at pointers none of which contains another
    doc, pointers = case
    disjoint: list[str] = []
    for pointer in pointers:
        if all(not is_prefix(p, pointer) and not is_prefix(pointer, p) for p in disjoint):
            disjoint.append(pointer)
    slices = dict(zip(disjoint, values, strict=False))
    # When merged in either order / Then the results agree with splicing one by one
    forward = merge(doc, slices)
    backward = merge(doc, dict(reversed(list(slices.items()))))
    stepwise = doc
    for pointer, value in slices.items():
        stepwise = splice(stepwise, pointer, value)
    assert forward == backward == stepwise


@st.composite
def quiz_and_slices(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    n = draw(st.integers(min_value=1, max_value=4))
    questions = [
        {
            "question": draw(st.text(max_size=5)),
            "options": draw(st.lists(st.text(max_size=3), min_size=1, max_size=4)),
            "correct_answer_index": draw(st.integers(0, 3)),
            "correct_answer_text": draw(st.text(max_size=3)),
        }
        for _ in range(n)
    ]
    quiz = {"title": "t", "questions": questions}
    targets = draw(st.lists(st.integers(0, n - 1), unique=True, min_size=1, max_size=n))
    slices = {}
    for i in targets:
        replacement = copy.deepcopy(questions[i])
        if draw(st.booleans()):
            replacement["correct_answer_index"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            replacement["options"] = draw(st.lists(st.text(max_size=3), min_size=1, max_size=4))
        if draw(st.booleans()):
            del replacement["correct_answer_text"]
        slices[f"/questions/{i}"] = replacement
    return quiz, slices


@FUZZ
@given(
    quiz_and_slices(),
    st.sampled_from(
        [
            ["correct_answer_index"],
            ["correct_answer_index", "correct_answer_text"],
            ["/questions/*/options"],
            [],
        ]
    ),
)
def test_preserve_merge_never_changes_a_preserved_value_and_accounts_for_every_slice(
    case: tuple[dict[str, Any], dict[str, Any]], preserve: list[str]
) -> None:
    # Given a quiz and surgical replies that may break its invariants
    previous, slices = case
    before = copy.deepcopy(previous)
    # When merged under preserve
    outcome = merge_with_preserve(previous, slices, preserve)
    # Then each slice is applied or rolled back, the output is exactly the applied ones spliced in...
    assert sorted(outcome.applied + outcome.rolled_back) == sorted(slices)
    assert outcome.output == merge(previous, {p: slices[p] for p in outcome.applied})
    assert previous == before
    # ...no preserved value that existed changed, and every rollback is explained by a failure
    for pointer in slices:
        for pattern in preserve:
            guarded = pattern if pattern.startswith("/") else f"{pointer}/{pattern}"
            for found in expand(previous, guarded):
                assert json.dumps(get(outcome.output, found)) == json.dumps(get(previous, found))
    assert bool(outcome.rolled_back) == bool(outcome.failures)
    assert all(f.kind == "preserve" for f in outcome.failures)


odd_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: model output parsed elsewhere may carry them
    | st.text()
    | st.binary(max_size=8)
    | st.sets(st.integers(), max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), children, max_size=3)
    ),
    max_leaves=12,
)
failures = st.lists(
    st.builds(
        Failure,
        kind=st.sampled_from(["schema", "rule", "preserve"]),
        pointer=st.sampled_from(["/", "/questions/0", "/questions/0/options", "/a~1b"]),
        code=st.text(min_size=1, max_size=8),
        message=st.text(max_size=30),
    ),
    max_size=4,
)
secrets = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=6, max_size=16), max_size=3
)


@FUZZ
@given(odd_values, failures, st.text(max_size=40), secrets)
def test_prompt_builders_never_raise_and_redaction_removes_every_secret(
    output: Any, found: list[Failure], source: str, hidden: list[str]
) -> None:
    # Given odd previous outputs / slices, failures, a source that may embed secrets
    text = source + " ".join(hidden)
    # When the retry and slice prompts are built and redacted
    retry = retry_messages("system " + " ".join(hidden), text, output, found)
    parts = SliceParts("/questions/0", output, (text,), text, "", output, found, [text])
    sliced = slice_messages("sys", parts)
    for messages in (retry, sliced):
        redacted = redact_messages(messages, hidden)
        # Then every failure is listed, and no secret survives anywhere
        joined = "\n".join(m["content"] for m in redacted)
        for failure in found:
            assert f"[{failure.code}]" in joined or any(s in failure.code for s in hidden)
        assert not any(secret in joined for secret in hidden)


@FUZZ
@given(json_values)
def test_previous_output_block_parses_back_to_the_output(output: Any) -> None:
    # Given a JSON output / When shown in a retry prompt / Then the block is that output, exactly
    content = retry_messages("s", "doc", output, [])[1]["content"]
    block = content.split("<previous_output>\n", 1)[1].split("\n</previous_output>", 1)[0]
    assert json.loads(block) == output
    assert block == canonical_json(output)
