"""Why a document input cannot be used.

DocumentError
├── InputNotFound        a path given on the command line does not exist (a usage error)
└── UnreadableDocument   one file cannot be quizzed (empty, binary, encrypted, scanned, corrupt);
                         the batch records it as skipped with its reason and goes on
"""

from __future__ import annotations

from pathlib import Path


class DocumentError(Exception):
    """Base of the document errors."""


class InputNotFound(DocumentError):
    """A path named as input does not exist."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"input not found: {path}")
        self.path = path


class UnreadableDocument(DocumentError):
    """One file cannot be turned into quiz sections; ``reason`` is a stable code, ``detail`` says why."""

    def __init__(self, path: Path, reason: str, detail: str) -> None:
        super().__init__(f"{path}: {reason}: {detail}")
        self.path, self.reason, self.detail = path, reason, detail
