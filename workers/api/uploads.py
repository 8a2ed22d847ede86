"""Documents uploaded as ``multipart/form-data``: read by the same readers and limits as ``suture batch``.

The upload is spooled to a private temporary file named only by its suffix (the client's file name
never becomes a path), read whole (``documents.read_document``), then removed. A file that cannot
be quizzed (empty, binary, encrypted, scanned, corrupt, unsupported) is a 422 on the field ``file``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path, PurePath
from typing import Any

from suture.config.settings import BatchSettings
from suture.workers.api.problems import ProblemError
from suture.workers.documents import SUFFIXES, read_document
from suture.workers.documents.errors import UnreadableDocument


def upload_text(upload: Any, limits: BatchSettings) -> str:
    """The text of an uploaded document (a Starlette ``UploadFile``); raises ProblemError(422)."""
    name = PurePath(str(getattr(upload, "filename", "") or "")).name
    suffix = PurePath(name).suffix.lower()
    if suffix not in SUFFIXES:
        shown = suffix or name or "(no file name)"
        raise ProblemError(
            422, "unreadable-document", f"{shown!r} is not .pdf, .md, .markdown or .txt", field="file"
        )
    with tempfile.TemporaryDirectory(prefix="suture-upload-") as folder:
        path = Path(folder) / f"document{suffix}"
        with path.open("wb") as out:
            shutil.copyfileobj(upload.file, out)
        try:
            return read_document(path, limits)
        except UnreadableDocument as exc:
            raise ProblemError(
                422, "unreadable-document", f"{name}: {exc.reason}: {exc.detail}", field="file"
            ) from None
