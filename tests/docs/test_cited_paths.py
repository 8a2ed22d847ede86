"""Every repository path that README.md and docs/ cite exists, so a reader following one is not lost.

A path is cited as code (`workers/flow/job_flow.py`) or as a link target ([text](docs/operations.md));
a code span counts when it starts with one of the repository's top-level folders (``./suture.yaml`` is
the user's working directory, not the repository), a link counts relative to its document. ``path:line``
and ``path::test`` suffixes are dropped; a ``*`` or ``…`` marks a pattern, which is not a path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = ("contracts/", "tasks/", "workers/", "config/", "tests/", "docs/", "bench/", "examples/")
TOP_LEVEL += ("tools/", "suture/", ".ci/")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PATTERN_MARKS = ("*", "…", "{", "<", "$")
LINK_TARGET = re.compile(r"\]\(([^)\s#]+)")
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


def cited_paths(text: str, base: Path) -> set[str]:
    """The repository paths a Markdown text cites, relative to the repository root."""
    found: set[str] = set()
    for token in CODE_SPAN.findall(text):
        candidate = re.sub(r":\d+(-\d+)?$", "", token.strip().split("::")[0].split(" ")[0])
        if candidate.startswith(TOP_LEVEL) and not any(mark in candidate for mark in PATTERN_MARKS):
            found.add(candidate)
    for target in LINK_TARGET.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        # A link is relative to the document that holds it.
        resolved = (base / target).resolve()
        if resolved.is_relative_to(ROOT):
            found.add(resolved.relative_to(ROOT).as_posix())
    return found


def test_the_citation_reader_finds_code_spans_and_links() -> None:
    # Given a text citing a module, a test with its node id, a link and a pattern
    text = "see `workers/flow/job_flow.py:12`, `tests/x.py::test_y`, [ops](docs/operations.md), `docs/*.md`"

    # Then the three paths are found, without their suffixes, and the pattern is not
    assert cited_paths(text, ROOT) == {"workers/flow/job_flow.py", "tests/x.py", "docs/operations.md"}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_cited_path_exists(document: Path) -> None:
    # Given a document of the repository
    cited = cited_paths(document.read_text(encoding="utf-8"), document.parent)

    # Then every repository path it cites exists in the tree
    missing = sorted(path for path in cited if not (ROOT / path.rstrip("/")).exists())
    assert not missing, f"{document.name} cites paths that do not exist: {missing}"
