"""User contracts through the CLI: the docs' example from an entry point, one from suture.yaml, a file.

Each is validated (``suture validate``) and generated inline (``suture generate --inline``) against the
built-in simulator (a simulation), whose structural faults are turned up so surgery has work to do.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from suture.contracts.registry import REGISTRY
from suture.workers import contract_sources
from suture.workers.cli import main
from tests.contract_packages import CARDS_YAML, REPO, docs_example, make_package

SETTINGS_CONTRACT = """
class TermsContract(GlossaryContract):
    name = "terms"
    title = "Terms"
"""
DOCUMENT = REPO / "examples" / "photosynthesis.md"


@pytest.fixture(autouse=True)
def user_contracts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The docs' package on sys.path (entry point `glossary`), suture.yaml naming `terms` and `cards`."""
    monkeypatch.chdir(tmp_path)
    for name in ("SUTURE_CONFIG", "SUTURE_CONTRACTS", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SUTURE_SIMULATOR__LATENCY_SCALE", "0")
    monkeypatch.setenv("SUTURE_SIMULATOR__UNIT_FAULTS__MISSING_FIELD", "0.6")
    monkeypatch.setenv("SUTURE_SIMULATOR__UNIT_FAULTS__OVERLONG", "0.3")
    root = make_package(
        tmp_path / "site",
        "docsglossary",
        docs_example() + SETTINGS_CONTRACT,
        {"glossary": "docsglossary:GlossaryContract"},
    )
    monkeypatch.syspath_prepend(str(root))
    (tmp_path / "cards.yaml").write_text(CARDS_YAML)
    (tmp_path / "suture.yaml").write_text(
        "contracts:\n  terms: docsglossary:TermsContract\n  cards: cards.yaml\n"
    )
    yield
    REGISTRY.use_extras([])
    contract_sources._installed.clear()
    sys.modules.pop("docsglossary", None)


def test_the_docs_example_is_at_most_about_40_lines() -> None:
    lines = [line for line in docs_example().splitlines() if line.strip()]
    assert len(lines) <= 42


@pytest.mark.parametrize(
    ("contract", "bad", "expected"),
    [
        (
            "glossary",
            {"title": "t", "terms": [{"term": "Cell", "definition": "A cell is small."}]},
            [("/terms/0/definition", "term_in_definition")],
        ),
        ("terms", {"title": "t", "terms": [{"term": "Cell"}]}, [("/terms/0/definition", "schema_missing")]),
        (
            "cards",
            {"title": "t", "cards": [{"topic": "x", "front": "Q?", "back": "A " * 30, "source_quote": "q"}]},
            [("/cards/0/back", "max_words")],
        ),
        ("cards.yaml", {"title": "t", "cards": []}, []),
    ],
)
def test_suture_validate_judges_each_user_contract(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    contract: str,
    bad: dict[str, Any],
    expected: list[Any],
) -> None:
    (tmp_path / "out.json").write_text(json.dumps(bad))
    code = main(["validate", "--contract", contract, "out.json"])
    report = json.loads(capsys.readouterr().out)
    assert [(f["pointer"], f["code"]) for f in report["failures"]] == expected
    assert code == (1 if expected else 0)


@pytest.mark.parametrize("contract", ["glossary", "terms", "cards", "cards.yaml"])
def test_suture_generate_inline_delivers_each_user_contract_with_surgery(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], contract: str
) -> None:
    code = main(["generate", "--inline", "--contract", contract, str(DOCUMENT), "--out", "result.json"])
    result = json.loads((tmp_path / "result.json").read_text())
    assert "SIMULATOR" in capsys.readouterr().err and result["simulated"] is True
    assert code == 0 and result["status"] == "delivered", result["reason"]
    assert result["contract"] == contract.removesuffix(".yaml")
    surgical = [a for a in result["attempts"] if a["mode"] == "surgical"]
    assert surgical, "the simulator's faults should have needed a surgical repair"
    for attempt in surgical:  # a patch touches only the units it targeted
        for op in attempt["patch"]:
            assert any(op["path"] == t or op["path"].startswith(t + "/") for t in attempt["targets"]), op
