"""The outline contract: modules -> lessons -> objectives, each rule at its item, repaired per lesson."""

from __future__ import annotations

import copy

from suture.contracts.outline import EXAMPLE_SOURCE
from suture.contracts.registry import contract_names, get_contract


def test_the_outline_is_built_in_and_its_example_is_valid() -> None:
    assert "outline" in contract_names()
    contract = get_contract("outline", source=EXAMPLE_SOURCE)
    assert contract.validate(contract.canonical_example()).ok
    assert contract.default_policy == "default"


def test_each_rule_fails_at_its_item_and_is_repaired_at_its_lesson() -> None:
    contract = get_contract("outline", source=EXAMPLE_SOURCE)
    output = copy.deepcopy(contract.canonical_example())
    first = output["modules"][0]["lessons"]
    first[1]["title"] = first[0]["title"].upper()  # duplicate within the module
    first[0]["objectives"] = ["Learn " + "many words " * 3, "Explain " + "a " * 12]  # verb; too long
    output["modules"][1]["lessons"][0]["source_quote"] = "Plants dream of sunlight."
    output["modules"][1]["lessons"].pop()  # one lesson left
    failures = contract.validate(output).failures
    assert [(f.pointer, f.code) for f in failures] == [
        ("/modules/0/lessons/1/title", "duplicate_lesson_title"),
        ("/modules/0/lessons/0/objectives/0", "objective_verb"),
        ("/modules/0/lessons/0/objectives/1", "objective_too_long"),
        ("/modules/1/lessons/0/source_quote", "quote_not_in_source"),
        ("/modules/1/lessons", "too_few_lessons"),
    ]
    assert [contract.repair_target(f) for f in failures] == [
        "/modules/0/lessons/1",
        "/modules/0/lessons/0",
        "/modules/0/lessons/0",
        "/modules/1/lessons/0",
        "/modules/1/lessons",
    ]


def test_the_same_title_in_two_modules_is_no_duplicate() -> None:
    contract = get_contract("outline", source=EXAMPLE_SOURCE)
    output = copy.deepcopy(contract.canonical_example())
    output["modules"][1]["lessons"][0]["title"] = output["modules"][0]["lessons"][0]["title"]
    assert contract.validate(output).ok


def test_a_slice_prompt_carries_the_lessons_quote_as_its_excerpt() -> None:
    contract = get_contract("outline", source=EXAMPLE_SOURCE)
    excerpts = contract.source_excerpts(contract.canonical_example(), "/modules/1/lessons/0")
    assert excerpts is not None and "Calvin cycle fixes carbon dioxide" in excerpts[0]
