"""OpenAI's Files, as the simulator keeps them: in memory, for the server's lifetime, within caps.

A ``FileStore`` holds uploaded batch input files and the output and error files batches write,
each as OpenAI's ``FileObject`` describes it (``id`` ``file-...``, ``bytes``, ``created_at``,
``expires_at``, ``filename``, ``purpose``, ``status``). Nothing is written to disk: a restarted
simulator has no files. Memory is bounded by ``FileLimits``: an upload over ``max_file_bytes`` is
refused (413), and an upload that would take the store past ``max_total_bytes`` or
``max_files`` is refused (400) until files are deleted. A batch's output and error files are
always stored (a finished batch never loses its results), so they may take the store past its
caps; new uploads then wait for deletes.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field

from suture.workers.simulator.errors import RequestRejected

BATCH_FILE_LIFETIME_S = 30 * 24 * 3600  # OpenAI: files with purpose batch expire after 30 days
UPLOAD_PURPOSES = ("batch",)  # the only purpose the simulator has a use for


@dataclass(frozen=True)
class FileLimits:
    """Caps on what the file store holds in memory."""

    max_file_bytes: int = 200 * 1024 * 1024  # OpenAI's cap for a batch input file
    max_total_bytes: int = 1024 * 1024 * 1024
    max_files: int = 10_000


@dataclass(frozen=True)
class StoredFile:
    """One file and its OpenAI metadata."""

    id: str
    filename: str
    purpose: str
    content: bytes = field(repr=False)
    created_at: int

    def object(self) -> dict[str, object]:
        """The ``FileObject`` OpenAI returns for it."""
        lifetime = BATCH_FILE_LIFETIME_S if self.purpose.startswith("batch") else None
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "expires_at": None if lifetime is None else self.created_at + lifetime,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
        }


class FileStore:
    """Files by id, newest last; thread-safe, bounded by ``limits`` for uploads."""

    def __init__(self, limits: FileLimits | None = None) -> None:
        self.limits = limits or FileLimits()
        self._files: dict[str, StoredFile] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FileStore(files={len(self._files)}, bytes={self._bytes}, limits={self.limits})"

    def upload(self, filename: str, purpose: str, content: bytes) -> StoredFile:
        """Store an uploaded file; raises ``RequestRejected`` for a purpose, name or size it refuses."""
        if purpose not in UPLOAD_PURPOSES:
            raise RequestRejected(
                400,
                None,
                f"The suture simulator accepts files with purpose 'batch' only, got {purpose!r}.",
                param="purpose",
            )
        if not filename.endswith(".jsonl"):
            raise RequestRejected(
                400, None, "Invalid file format for Batch API. Must be .jsonl", param="file"
            )
        if len(content) > self.limits.max_file_bytes:
            raise too_large(self.limits.max_file_bytes)
        return self._add(filename, purpose, content, capped=True)

    def write(self, filename: str, purpose: str, content: bytes) -> StoredFile:
        """Store a file the simulator made (a batch's output or errors), whatever the caps."""
        return self._add(filename, purpose, content, capped=False)

    def restore(self, stored: StoredFile) -> None:
        """Hold a file kept from an earlier run of the server (``batch_state``), under its own id."""
        with self._lock:
            if stored.id not in self._files:
                self._files[stored.id] = stored
                self._bytes += len(stored.content)

    def get(self, file_id: str) -> StoredFile:
        """The file with this id; raises ``RequestRejected`` 404 if there is none."""
        stored = self._files.get(file_id)
        if stored is None:
            raise RequestRejected(404, None, f"No such File object: {file_id}", param="id")
        return stored

    def delete(self, file_id: str) -> StoredFile:
        """Forget a file and free its bytes; raises ``RequestRejected`` 404 if there is none."""
        with self._lock:
            stored = self.get(file_id)
            del self._files[file_id]
            self._bytes -= len(stored.content)
        return stored

    def listing(self, purpose: str | None = None) -> list[StoredFile]:
        """Every file (of ``purpose``, if given), oldest first."""
        with self._lock:
            files = list(self._files.values())
        return [f for f in files if purpose is None or f.purpose == purpose]

    def snapshot(self) -> dict[str, int]:
        """How much the store holds now."""
        with self._lock:
            return {"files": len(self._files), "bytes": self._bytes}

    def _add(self, filename: str, purpose: str, content: bytes, *, capped: bool) -> StoredFile:
        stored = StoredFile(f"file-{secrets.token_hex(12)}", filename, purpose, content, int(time.time()))
        with self._lock:
            if capped and len(self._files) >= self.limits.max_files:
                raise RequestRejected(
                    400,
                    None,
                    f"The suture simulator holds its maximum of {self.limits.max_files} files; "
                    "delete some (DELETE /v1/files/{id}) first.",
                )
            if capped and self._bytes + len(content) > self.limits.max_total_bytes:
                raise RequestRejected(
                    400,
                    None,
                    f"The suture simulator's file storage is full ({self.limits.max_total_bytes} bytes); "
                    "delete some files (DELETE /v1/files/{id}) first.",
                )
            self._files[stored.id] = stored
            self._bytes += len(content)
        return stored


def too_large(max_bytes: int) -> RequestRejected:
    """The refusal of an upload bigger than ``max_bytes``."""
    return RequestRejected(
        413, None, f"The file is larger than the suture simulator's limit of {max_bytes} bytes.", param="file"
    )
