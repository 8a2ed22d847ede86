"""Helpers for tests of user contracts: a temporary package with entry points, a contract file.

``make_package(root, module, code, entry_points)`` writes ``root/module/__init__.py`` and a
``.dist-info`` with ``entry_points.txt`` beside it, so putting ``root`` on ``sys.path`` (or a worker's
PYTHONPATH) "installs" it for ``importlib.metadata`` without touching the environment. ``user_stack``
is a Celery stack whose one worker knows three user contracts: ``glossary`` (the docs' example, an entry
point), ``terms`` and ``raising`` (classes named in ``SUTURE_CONTRACTS``) and ``cards`` (a file), against
a simulator whose structural faults are turned up.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from suture.contracts.registry import REGISTRY
from suture.workers import contract_sources
from suture.workers.simulator.profiles import UnitFaultRates, get_profile
from tests.fixtures.workers import CeleryStack

REPO = Path(__file__).resolve().parents[1]
CARDS_YAML = """\
name: cards
title: Flashcards
instructions: |
  Write flashcards from the document: the front a short question, the back its answer.
unit: /cards/*
preserve: [topic]
schema:
  type: object
  additionalProperties: false
  required: [title, cards]
  properties:
    title: {type: string}
    cards:
      type: array
      description: 4 to 6 cards.
      items:
        type: object
        additionalProperties: false
        required: [topic, front, back, source_quote]
        properties:
          topic: {type: string}
          front: {type: string}
          back: {type: string, description: "The answer, at most 20 words."}
          source_quote: {type: string, description: "A verbatim snippet of the document."}
rules:
  - {rule: unique, at: /cards/*/front}
  - {rule: max_words, at: /cards/*/back, max: 20}
  - {rule: in_source, at: /cards/*/source_quote}
  - {rule: not_contains, at: /cards/*/front, other: back}
"""


def docs_example() -> str:
    """The Python contract of docs/contracts.md (its first ```python block)."""
    text = (REPO / "docs" / "contracts.md").read_text()
    match = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert match, "docs/contracts.md has no ```python block"
    return match.group(1)


def make_package(root: Path, module: str, code: str, entry_points: dict[str, str]) -> Path:
    """A package ``module`` under ``root`` with ``suture.contracts`` entry points; returns ``root``."""
    (root / module).mkdir(parents=True)
    (root / module / "__init__.py").write_text(code)
    info = root / f"{module}_pkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}-pkg\nVersion: 0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[suture.contracts]\n{lines}")
    return root


EXTRA = """
class TermsContract(GlossaryContract):
    name = "terms"
    title = "Terms"


class RaisingContract(GlossaryContract):
    name = "raising"

    def rule_failures(self, model, data):
        raise ZeroDivisionError("a bug in a rule")
"""
DOCUMENT = (REPO / "examples" / "photosynthesis.md").read_text()


@pytest.fixture
def user_stack(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    celery_stack: Callable[..., CeleryStack],
    simulator: Callable[..., str],
) -> Iterator[CeleryStack]:
    root = make_package(
        tmp_path / "site", "jobglossary", docs_example() + EXTRA, {"glossary": "jobglossary:GlossaryContract"}
    )
    monkeypatch.syspath_prepend(str(root))  # the producer side (this process) finds them too
    (tmp_path / "cards.yaml").write_text(CARDS_YAML)
    contracts = {
        "terms": "jobglossary:TermsContract",
        "raising": "jobglossary:RaisingContract",
        "cards": str(tmp_path / "cards.yaml"),
    }
    faults = UnitFaultRates(missing_field=0.5, duplicate=0.0, overlong=0.5, unquoted=0.0)
    model_url = simulator(dataclasses.replace(get_profile("realistic"), unit_faults=faults))
    stack = celery_stack(model_url, PYTHONPATH=f"{root}:{REPO}", SUTURE_CONTRACTS=json.dumps(contracts))
    stack.start_worker(concurrency=8)
    yield stack
    REGISTRY.use_extras([])
    contract_sources._installed.clear()
    sys.modules.pop("jobglossary", None)
