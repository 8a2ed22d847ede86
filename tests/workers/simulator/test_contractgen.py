"""The simulator writes any contract's outputs from its schema, with structural faults per unit."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from suture.contracts.contract import Contract
from suture.contracts.registry import get_contract
from suture.workers.simulator.contractgen import keep_invariants, write_generic_slice, write_output
from suture.workers.simulator.profiles import UnitFaultRates, get_profile
from suture.workers.simulator.prompt import Prompt, read_prompt
from tests.contract_packages import REPO

DOCUMENT = (REPO / "examples" / "photosynthesis.md").read_text()
NO_FAULTS = UnitFaultRates(0.0, 0.0, 0.0, 0.0)


def _prompt(extra: str = "", schema_name: str = "outline") -> Prompt:
    return read_prompt(
        [{"role": "user", "content": f"<document>\n{DOCUMENT}\n</document>{extra}"}], schema_name
    )


def _write(faults: UnitFaultRates, seed: int) -> tuple[Contract, Any]:
    contract = get_contract("outline", source=DOCUMENT)
    profile = dataclasses.replace(get_profile("realistic"), unit_faults=faults)
    traits = profile.traits("gpt-5-nano")
    output = write_output(contract.response_schema(), _prompt(), traits, profile, random.Random(seed))
    return contract, output


def test_without_faults_the_outline_written_from_its_schema_is_valid() -> None:
    for seed in range(20):
        contract, output = _write(NO_FAULTS, seed)
        verdict = contract.validate(output)
        assert verdict.ok, (seed, verdict.failures)
        assert 2 <= len(output["modules"]) <= 4


def test_each_unit_fault_shows_as_its_failure() -> None:
    expected = {
        UnitFaultRates(1.0, 0.0, 0.0, 0.0): "schema_missing",
        UnitFaultRates(0.0, 1.0, 0.0, 0.0): "duplicate_lesson_title",
        UnitFaultRates(0.0, 0.0, 1.0, 0.0): "objective_too_long",
        UnitFaultRates(0.0, 0.0, 0.0, 1.0): "quote_not_in_source",
    }
    for faults, code in expected.items():
        contract, output = _write(faults, 1)
        assert code in {f.code for f in contract.validate(output).failures}, code


def test_faults_scale_with_the_models_bias_and_perfect_writes_none() -> None:
    contract = get_contract("outline", source=DOCUMENT)
    perfect = dataclasses.replace(get_profile("perfect"), unit_faults=UnitFaultRates(1.0, 1.0, 1.0, 1.0))
    output = write_output(
        contract.response_schema(), _prompt(), perfect.traits("gpt-5-nano"), perfect, random.Random(0)
    )
    assert contract.validate(output).ok


def test_a_slice_keeps_the_invariants_its_prompt_lists() -> None:
    extra = (
        '\n<slice pointer="/cards/1">{}</slice>\n<invariants>\n- /cards/1/topic must stay exactly '
        '"ice"\n</invariants>'
    )
    prompt = _prompt(extra, "cards_slice")
    value = {"topic": "water", "front": "Q?", "back": "A"}
    assert keep_invariants(value, prompt)["topic"] == "ice"
    schema = {
        "type": "object",
        "properties": {
            "value": {
                "type": "object",
                "properties": {"topic": {"type": "string"}, "front": {"type": "string"}},
            }
        },
    }
    profile = get_profile("realistic")
    reply = write_generic_slice(
        schema, prompt, profile.traits("gpt-5-nano"), profile, random.Random(0), "low"
    )
    assert reply["value"]["topic"] == "ice" and set(reply["value"]) == {"topic", "front"}
