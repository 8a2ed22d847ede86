"""Helpers for tests of user contracts: a temporary package with entry points, a contract file.

``make_package(root, module, code, entry_points)`` writes ``root/module/__init__.py`` and a
``.dist-info`` with ``entry_points.txt`` beside it, so putting ``root`` on ``sys.path`` (or a worker's
PYTHONPATH) "installs" it for ``importlib.metadata`` without touching the environment.
"""

from __future__ import annotations

import re
from pathlib import Path

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
