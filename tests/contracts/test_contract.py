"""The failure channels of ``Contract.validate`` and the strict schemas, exercised through the quiz."""

from __future__ import annotations

import json
from typing import Any

import pytest

from suture.contracts.contract import decode
from suture.contracts.errors import ContractDefinitionError, PointerError
from suture.contracts.quiz import QuizContract
from tests.contracts.quizzes import make_quiz, source_document, text

QUIZ = make_quiz(15)
VALID = text(QUIZ)


@pytest.fixture
def contract() -> QuizContract:
    return QuizContract(questions=15, source=source_document(15))


def _only(contract: QuizContract, raw: Any, **kwargs: Any) -> tuple[str, str, str]:
    verdict = contract.validate(raw, **kwargs)
    assert not verdict.ok
    assert len(verdict.failures) == 1, verdict.failures
    failure = verdict.failures[0]
    return failure.kind, failure.code, failure.pointer


@pytest.mark.parametrize("raw", [VALID, VALID.encode(), b"\xef\xbb\xbf" + VALID.encode(), QUIZ])
def test_given_a_valid_quiz_as_text_bytes_or_data_when_validated_then_ok(
    contract: QuizContract, raw: Any
) -> None:
    verdict = contract.validate(raw)
    assert verdict.ok and verdict.failures == []
    assert verdict.output == QUIZ


@pytest.mark.parametrize(
    ("raw", "kind", "code"),
    [
        ("", "empty", "empty_output"),
        (" \n\t ", "empty", "empty_output"),
        (b"", "empty", "empty_output"),
        ("{}", "empty", "empty_output"),
        ("null", "empty", "empty_output"),
        ('{"title": "Quiz", "questions": []}', "empty", "empty_output"),
        (
            text(
                {
                    "title": " ",
                    "questions": [
                        {
                            "question": "",
                            "options": ["", " "],
                            "correct_answer_index": 0,
                            "correct_answer_text": "",
                            "explanation": "",
                            "source_quote": "",
                        }
                    ],
                }
            ),
            "empty",
            "empty_output",
        ),
        (VALID[: len(VALID) // 2], "truncated", "truncated_json"),
        (VALID[:-1], "truncated", "truncated_json"),
        ('{"title": "Qu', "truncated", "truncated_json"),
        ('{"title": tr', "truncated", "truncated_json"),
        ('{"title": "x", "questions": [', "truncated", "truncated_json"),
        (VALID + " trailing", "parse", "invalid_json"),
        ("{'title': 'single quotes'}", "parse", "invalid_json"),
        ('{"title": "x",, }', "parse", "invalid_json"),
        ("Here is your quiz: {}", "parse", "invalid_json"),
        ('{"title": NaN, "questions": []}', "parse", "non_finite_number"),
        ('{"title": -Infinity}', "parse", "non_finite_number"),
        (b'{"title": "\xff\xfe"}', "parse", "invalid_utf8"),
        ("[" * 100_000, "parse", "invalid_json"),
    ],
)
def test_given_unusable_text_when_validated_then_one_whole_output_failure(
    contract: QuizContract, raw: Any, kind: str, code: str
) -> None:
    assert _only(contract, raw) == (kind, code, "/")
    assert contract.validate(raw).output is None or kind == "empty"


def test_given_a_parse_error_when_validated_then_message_has_line_column_and_position(
    contract: QuizContract,
) -> None:
    message = contract.validate('{\n  "title": "x"\n  "questions": []\n}').failures[0].message
    assert "line 3, column 3 (character 19)" in message


@pytest.mark.parametrize(
    ("finish_reason", "kind", "code"),
    [("length", "truncated", "finish_length"), ("content_filter", "refusal", "content_filter")],
)
def test_given_a_finish_reason_when_validated_then_it_overrides_parsable_text(
    contract: QuizContract, finish_reason: str, kind: str, code: str
) -> None:
    assert _only(contract, VALID, finish_reason=finish_reason) == (kind, code, "/")
    assert contract.validate(VALID, finish_reason="stop").ok


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("[]", "schema_model_type"),
        (text([QUIZ]), "schema_model_type"),
        ('"a quiz"', "schema_model_type"),
        ("42", "schema_model_type"),
    ],
)
def test_given_json_that_is_not_an_object_when_validated_then_untargetable_schema_failure(
    contract: QuizContract, raw: str, code: str
) -> None:
    verdict = contract.validate(raw)
    assert [(f.kind, f.code, f.pointer, f.targetable) for f in verdict.failures] == [
        ("schema", code, "/", False)
    ]


def _broken(**fields: Any) -> dict[str, Any]:
    quiz = json.loads(VALID)
    question = quiz["questions"][3]
    for key, value in fields.items():
        if value is ...:
            del question[key]
        else:
            question[key] = value
    return quiz


@pytest.mark.parametrize(
    ("quiz", "code", "pointer"),
    [
        (_broken(explanation=...), "schema_missing", "/questions/3/explanation"),
        (_broken(options="A, B, C, D"), "schema_list_type", "/questions/3/options"),
        (_broken(options=["a", 2, "c", "d"]), "schema_string_type", "/questions/3/options/1"),
        (_broken(correct_answer_index="1"), "schema_int_type", "/questions/3/correct_answer_index"),
        (_broken(correct_answer_index=1.0), "schema_int_type", "/questions/3/correct_answer_index"),
        (_broken(correct_answer_index=True), "schema_int_type", "/questions/3/correct_answer_index"),
        (_broken(difficulty="easy"), "schema_extra_forbidden", "/questions/3/difficulty"),
        ({"title": "T", "questions": {"0": QUIZ["questions"][0]}}, "schema_list_type", "/questions"),
        ({"title": "T", "questions": [[]]}, "schema_model_type", "/questions/0"),
        ({"questions": QUIZ["questions"]}, "schema_missing", "/title"),
    ],
)
def test_given_schema_errors_when_validated_then_pointer_comes_from_pydantic_loc(
    contract: QuizContract, quiz: dict[str, Any], code: str, pointer: str
) -> None:
    verdict = contract.validate(text(quiz))
    assert [(f.kind, f.code, f.pointer) for f in verdict.failures] == [("schema", code, pointer)]
    assert verdict.failures[0].targetable == (pointer != "/")
    assert pointer in verdict.failures[0].message
    assert verdict.output == quiz


def test_given_a_key_with_slash_and_tilde_when_forbidden_then_pointer_is_escaped(
    contract: QuizContract,
) -> None:
    verdict = contract.validate(text(_broken(**{"a/b~c": 1})))
    assert [f.pointer for f in verdict.failures] == ["/questions/3/a~1b~0c"]


@pytest.mark.parametrize(
    ("raw", "pointers"),
    [
        (VALID.replace('"title": ', '"title": "first", "title": ', 1), ["/title"]),
        (
            VALID.replace('"explanation": ', '"explanation": "x", "explanation": ', 2),
            ["/questions/0/explanation", "/questions/1/explanation"],
        ),
    ],
)
def test_given_duplicate_keys_when_validated_then_duplicate_key_failures_at_each_key(
    contract: QuizContract, raw: str, pointers: list[str]
) -> None:
    verdict = contract.validate(raw)
    assert [(f.kind, f.code, f.pointer) for f in verdict.failures] == [
        ("schema", "duplicate_key", p) for p in pointers
    ]


def test_given_decode_of_duplicate_in_root_object_then_last_value_wins() -> None:
    data, failures = decode('{"a": 1, "a": 2}')
    assert data == {"a": 2}
    assert [f.pointer for f in failures] == ["/a"]


def test_given_unicode_text_when_validated_then_ok_and_preserved(contract: QuizContract) -> None:
    quiz = json.loads(VALID)
    quiz["title"] = "Minéraux — 鉱物 ✓"
    verdict = contract.validate(json.dumps(quiz, ensure_ascii=False).encode())
    assert verdict.ok and verdict.output["title"] == "Minéraux — 鉱物 ✓"


def _walk_objects(schema: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found += _walk_objects(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _walk_objects(value)
    return found


ALLOWED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "description",
    "enum",
    "const",
    "anyOf",
}


def _keywords(schema: Any) -> set[str]:
    if isinstance(schema, list):
        return set().union(*(_keywords(s) for s in schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        found |= (
            set().union(*(_keywords(v) for v in value.values())) if key == "properties" else _keywords(value)
        )
    return found


@pytest.mark.parametrize(
    "schema_of",
    [
        lambda c: c.response_schema(),
        lambda c: c.slice_schema(QUIZ, "/questions/3"),
        lambda c: c.slice_schema(QUIZ, "/questions/3/options"),
        lambda c: c.slice_schema(QUIZ, "/title"),
    ],
)
def test_given_a_schema_when_built_then_it_is_openai_strict(contract: QuizContract, schema_of: Any) -> None:
    schema = schema_of(contract)
    assert schema["type"] == "object"
    for obj in _walk_objects(schema):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert _keywords(schema) <= ALLOWED
    assert "$ref" not in json.dumps(schema)


@pytest.mark.parametrize(
    ("pointer", "value_type"),
    [
        ("/questions/3", "object"),
        ("/questions/3/options", "array"),
        ("/questions/3/options/2", "string"),
        ("/questions/0/correct_answer_index", "integer"),
        ("/title", "string"),
    ],
)
def test_given_a_slice_pointer_when_slice_schema_then_value_has_the_sub_schema(
    contract: QuizContract, pointer: str, value_type: str
) -> None:
    schema = contract.slice_schema(QUIZ, pointer)
    assert schema["required"] == ["value"]
    assert schema["properties"]["value"]["type"] == value_type


@pytest.mark.parametrize("pointer", ["/questions/x", "/nope", "/title/0", "bad"])
def test_given_a_pointer_outside_the_schema_when_slice_schema_then_pointer_error(
    contract: QuizContract, pointer: str
) -> None:
    with pytest.raises(PointerError):
        contract.slice_schema(QUIZ, pointer)


def test_given_a_recursive_model_when_schema_built_then_contract_definition_error() -> None:
    from pydantic import BaseModel

    class Node(BaseModel):
        children: list[Node]

    class TreeContract(QuizContract):
        name = "tree"
        output_model = Node  # type: ignore[assignment]

    with pytest.raises(ContractDefinitionError, match="recursive"):
        TreeContract().response_schema()
