"""Contracts from entry points, the settings and files: discovery, clashes, broken ones, the CLI."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from suture.config.settings import Settings
from suture.contracts.errors import ContractDefinitionError
from suture.contracts.registry import REGISTRY, build_contract, contract_names
from suture.workers import contract_sources
from suture.workers.cli import main
from suture.workers.contract_sources import ContractSourceError, install_contracts
from tests.contract_packages import CARDS_YAML, docs_example, make_package

RAISING = """
from suture.contracts.registry import contract_class
Base = contract_class("outline")

class Raising(Base):
    name = "raising"

    def rule_failures(self, model, data):
        raise ZeroDivisionError("a bug in a rule")
"""


@pytest.fixture(autouse=True)
def clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty working directory, no user settings; the registry back to its built-ins afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SUTURE_CONFIG", raising=False)
    monkeypatch.delenv("SUTURE_CONTRACTS", raising=False)
    yield
    REGISTRY.use_extras([])
    contract_sources._installed.clear()
    for name in [m for m in sys.modules if m.startswith("usercontracts")]:
        del sys.modules[name]


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, points: dict[str, str], code: str = "") -> None:
    root = make_package(tmp_path / "site", "usercontracts", docs_example() + code, points)
    monkeypatch.syspath_prepend(str(root))


def _listing(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    code = main(["contracts", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_an_entry_point_and_a_settings_entry_are_listed_with_their_origins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _package(tmp_path, monkeypatch, {"glossary": "usercontracts:GlossaryContract"})
    (tmp_path / "cards.yaml").write_text(CARDS_YAML)
    (tmp_path / "suture.yaml").write_text("contracts:\n  cards: cards.yaml\n")
    code, rows = _listing(capsys)
    origins = {row["name"]: row["origin"] for row in rows}
    assert code == 0 and sorted(origins) == ["cards", "glossary", "outline", "quiz"]
    assert origins["glossary"].startswith("entry point glossary = usercontracts:GlossaryContract (package")
    assert origins["cards"] == "settings contracts.cards (cards.yaml)"
    assert origins["quiz"] == origins["outline"] == "built-in"


def test_a_name_given_by_two_sources_is_one_error_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _package(tmp_path, monkeypatch, {"glossary": "usercontracts:GlossaryContract"})
    with pytest.raises(ContractSourceError) as raised:
        install_contracts(Settings(contracts={"glossary": "elsewhere:Glossary"}))
    message = str(raised.value)
    assert "entry point glossary = usercontracts:GlossaryContract" in message
    assert "settings contracts.glossary" in message and "\n" not in message
    # ... and a built-in's name is taken too, as a one-line usage error of any command
    (tmp_path / "suture.yaml").write_text("contracts:\n  quiz: usercontracts:GlossaryContract\n")
    assert main(["contracts"]) == 2
    assert (
        "name already registered by built-in, and again by settings contracts.quiz" in capsys.readouterr().err
    )


def test_a_broken_contract_is_listed_as_such_and_refused_in_one_line_while_others_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    points = {
        "glossary": "usercontracts:GlossaryContract",
        "missing": "nowhere_at_all:X",
        "notone": "usercontracts:Glossary",
        "misnamed": "usercontracts:Term",
    }
    _package(tmp_path, monkeypatch, points)
    code, rows = _listing(capsys)
    broken = {row["name"]: row["problem"] for row in rows if not row["ok"]}
    assert code == 1 and sorted(broken) == ["misnamed", "missing", "notone"]
    assert "cannot load nowhere_at_all:X: ModuleNotFoundError" in broken["missing"]
    assert "is not a subclass of suture.Contract" in broken["notone"]
    # Using one is a one-line error naming it; the working one still validates
    (tmp_path / "out.json").write_text('{"title": "t", "terms": [{"term": "Cell", "definition": "A cell."}]}')
    assert main(["validate", "--contract", "missing", "out.json"]) == 2
    assert capsys.readouterr().err.startswith("suture: contract 'missing' is broken: cannot load")
    assert main(["validate", "--contract", "glossary", "out.json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["pointer"], f["code"]) for f in report["failures"]] == [
        ("/terms/0/definition", "term_in_definition")
    ]


def test_a_rule_that_raises_is_a_definition_error_naming_the_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch, {"raising": "usercontracts:Raising"}, RAISING)
    install_contracts(Settings())
    contract = build_contract("raising")
    with pytest.raises(
        ContractDefinitionError, match="contract 'raising' is broken: a rule raised ZeroDivisionError"
    ):
        contract.validate(contract.canonical_example())


def test_a_contract_file_by_path_validates_and_a_malformed_one_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cards.yaml").write_text(CARDS_YAML)
    output = {"title": "t", "cards": [{"topic": "a", "front": "Q?", "back": "A " * 25, "source_quote": "q"}]}
    (tmp_path / "out.json").write_text(json.dumps(output))
    assert main(["validate", "--contract", "cards.yaml", "out.json"]) == 1
    failures = json.loads(capsys.readouterr().out)["failures"]
    assert [(f["pointer"], f["code"]) for f in failures] == [("/cards/0/back", "max_words")]
    (tmp_path / "bad.yaml").write_text(CARDS_YAML.replace("max: 20", "most: 20"))
    assert main(["validate", "--contract", "bad.yaml", "out.json"]) == 2
    err = capsys.readouterr().err
    assert err == "suture: contract file bad.yaml: /rules/1/max: Field required\n"
    (tmp_path / "strict.json").write_text(
        json.dumps(
            {
                "name": "x",
                "title": "X",
                "instructions": "i",
                "unit": "/a/*",
                "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
            }
        )
    )
    assert main(["validate", "--contract", "strict.json", "out.json"]) == 2
    assert (
        "strict.json: /schema: OpenAI strict mode would refuse it: strict mode needs additionalProperties"
        in (capsys.readouterr().err)
    )


def test_queued_entry_points_refuse_a_contract_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "doc.txt").write_text("Some text. " * 50)
    assert main(["enqueue", "--contract", "cards.yaml", "doc.txt"]) == 2
    assert "add the file under `contracts:` in suture.yaml" in capsys.readouterr().err
    assert "cards" not in contract_names()
