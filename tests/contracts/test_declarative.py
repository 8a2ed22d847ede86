"""Declarative contracts: a definition checked at load (pointer + problem), and each rule of the
vocabulary."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from suture.contracts.declarative import DefinitionProblem, contract_from_definition
from tests.contract_packages import CARDS_YAML

SOURCE = "Water boils at one hundred degrees at sea level. Ice melts at zero degrees in normal air."


def cards() -> dict[str, Any]:
    return dict(yaml.safe_load(CARDS_YAML))


def card(
    front: str, back: str, quote: str = "Ice melts at zero degrees", topic: str = "ice"
) -> dict[str, str]:
    return {"topic": topic, "front": front, "back": back, "source_quote": quote}


def codes(
    definition: dict[str, Any], output: dict[str, Any], source: str | None = SOURCE
) -> list[tuple[str, str]]:
    verdict = contract_from_definition(definition)(source=source).validate(output)
    return [(f.pointer, f.code) for f in verdict.failures]


def test_a_valid_output_passes_and_the_schema_is_the_declared_one() -> None:
    contract = contract_from_definition(cards())(source=SOURCE)
    output = {
        "title": "t",
        "cards": [card("When does ice melt?", "At zero."), card("Boiling point?", "100.")],
    }
    assert contract.validate(output).ok
    assert contract.response_schema()["properties"]["cards"]["items"]["required"] == [
        "topic",
        "front",
        "back",
        "source_quote",
    ]
    assert (contract.name, contract.title, contract.default_policy) == ("cards", "Flashcards", "default")


def test_each_failure_points_at_the_offending_item_and_repairs_at_its_unit() -> None:
    output = {
        "title": "t",
        "cards": [
            card("When does ice melt?", "At zero."),
            card("when does  ICE melt?", "At zero degrees."),  # duplicate front (folded)
            card("Boiling?", " ".join(["word"] * 21)),  # back too long
            card("Why 100?", "Because.", quote="not in the document at all"),
            card("Is it At zero?", "At zero"),  # the front gives the back away
        ],
    }
    found = codes(cards(), output)
    assert found == [
        ("/cards/1/front", "unique"),
        ("/cards/2/back", "max_words"),
        ("/cards/3/source_quote", "in_source"),
        ("/cards/4/front", "not_contains"),
    ]
    contract = contract_from_definition(cards())(source=SOURCE)
    failures = contract.validate(output).failures
    assert [contract.repair_target(f) for f in failures] == ["/cards/1", "/cards/2", "/cards/3", "/cards/4"]
    assert contract.slice_invariants(output, "/cards/2") == ["/cards/2/topic"]


def test_unique_groups_by_all_but_the_last_wildcard() -> None:
    definition = cards() | {"rules": [{"rule": "unique", "at": "/groups/*/items/*", "code": "dup"}]}
    definition["schema"] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["groups"],
        "properties": {
            "groups": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["items"],
                    "properties": {"items": {"type": "array", "items": {"type": "string"}}},
                },
            }
        },
    }
    definition["unit"] = "/groups/*"
    definition["preserve"] = []
    output = {"groups": [{"items": ["a", "b", "a"]}, {"items": ["a"]}]}
    assert codes(definition, output) == [("/groups/0/items/2", "dup")]


@pytest.mark.parametrize(
    ("rule", "values", "expected"),
    [
        ({"rule": "min_words", "at": "/cards/*/back", "min": 2}, ["one", "two words"], ["/cards/0/back"]),
        (
            {"rule": "regex", "at": "/cards/*/front", "pattern": r"\?$"},
            ["Why?", "Because"],
            ["/cards/1/front"],
        ),
        ({"rule": "length_balance", "at": "/cards", "ratio": 2.0}, ["x", "x"], []),
        ({"rule": "min_items", "at": "/cards", "min": 3}, ["a", "b"], ["/cards"]),
        ({"rule": "max_items", "at": "/cards", "max": 1}, ["a", "b"], ["/cards"]),
    ],
)
def test_the_other_rules(rule: dict[str, Any], values: list[str], expected: list[str]) -> None:
    definition = cards() | {"rules": [rule]}
    output = {"title": "t", "cards": [card(v if "front" in rule["at"] else "Q?", v) for v in values]}
    assert [p for p, _ in codes(definition, output)] == expected


def test_length_balance_points_at_the_item_over_the_ratio() -> None:
    definition = cards() | {"rules": [{"rule": "length_balance", "at": "/cards/*/front", "ratio": 1.5}]}
    definition["schema"] = copy.deepcopy(definition["schema"])
    front = {"type": "array", "items": {"type": "string"}}
    definition["schema"]["properties"]["cards"]["items"]["properties"]["front"] = front
    output = {"title": "t", "cards": [card(["aa", "bb", "a much longer option"], "x")]}
    assert codes(definition, output) == [("/cards/0/front/2", "length_balance")]


def test_in_source_is_skipped_without_a_source() -> None:
    output = {"title": "t", "cards": [card("Q?", "A", quote="nowhere")]}
    assert codes(cards(), output, source=None) == []


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        ({"rules": [{"rule": "max_words", "at": "/cards/*/back"}]}, "/rules/0/max", "Field required"),
        (
            {"rules": [{"rule": "regex", "at": "/x", "pattern": "("}]},
            "/rules/0/pattern",
            "not a regular expression",
        ),
        ({"unit": "/cards"}, "/unit", "pattern with a '*'"),
        ({"preserve": ["/cards/0/topic"]}, "/preserve", "relative to the unit"),
        ({"colour": "red"}, "/colour", "Extra inputs are not permitted"),
        ({"name": "Bad Name"}, "/name", "String should match pattern"),
    ],
)
def test_a_malformed_definition_names_the_key_and_the_problem(
    change: dict[str, Any], where: str, problem: str
) -> None:
    with pytest.raises(DefinitionProblem) as raised:
        contract_from_definition(cards() | change)
    assert raised.value.pointer == where and problem in raised.value.problem


@pytest.mark.parametrize(
    ("schema_change", "where", "reason"),
    [
        ({"additionalProperties": True}, "/schema", "additionalProperties: false"),
        ({"required": ["title"]}, "/schema", "every property required"),
        (
            {"properties": {"title": {"type": "string", "minLength": 3}, "cards": {"type": "string"}}},
            "/schema/properties/title",
            "'minLength' is not supported",
        ),
        ({"type": "array"}, "/schema", "root must be an object"),
    ],
)
def test_a_schema_strict_mode_would_refuse_is_refused_with_the_reason(
    schema_change: dict[str, Any], where: str, reason: str
) -> None:
    definition = cards()
    definition["schema"] = definition["schema"] | schema_change
    with pytest.raises(DefinitionProblem) as raised:
        contract_from_definition(definition)
    assert raised.value.pointer == where and "strict mode would refuse it" in raised.value.problem
    assert reason in raised.value.problem


def test_an_example_that_breaks_the_schema_is_refused_at_its_path() -> None:
    with pytest.raises(DefinitionProblem) as raised:
        contract_from_definition(cards() | {"example": {"title": "t", "cards": [{"topic": "x"}]}})
    assert raised.value.pointer.startswith("/example/cards/0/")


def test_a_declarative_contract_takes_no_parameters() -> None:
    from suture.contracts.errors import ContractParamsError

    with pytest.raises(ContractParamsError, match="'questions'"):
        contract_from_definition(cards()).resolve_params({"questions": 3}, None)
