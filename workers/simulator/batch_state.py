"""The simulator's files and batches kept in a file across its restarts, as a provider keeps them.

Off by default (state lives in memory for the server's lifetime). Given a path (the embedded stack of
``suture batch --batch-api`` gives one in ``--out/store/``), the server loads it when it starts and
writes it when it stops: every file (content base64) and every batch object. A batch that had not ended
when the server stopped starts again from ``validating`` (its lines are answered again, its delay counts
again), so a rerun that polls its id finds it running, then ended, like a real provider's. A file that
does not parse is ignored (the simulator starts empty) and a write that fails is logged: neither stops
the server.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any

from suture.workers.simulator.batch_registry import BatchRegistry
from suture.workers.simulator.batches import TERMINAL, Batch
from suture.workers.simulator.files import FileStore, StoredFile

log = logging.getLogger(__name__)
FIELDS: tuple[str, ...] = ("id", "input_file_id", "metadata", "created_at", "status", "times", "model")
FIELDS += ("output_file_id", "error_file_id", "errors")


def save(path: Path, files: FileStore, batches: BatchRegistry) -> None:
    """Write every file and batch to ``path`` (atomically: a new file renamed over the old one)."""
    data = {
        "files": [
            {
                "id": f.id,
                "filename": f.filename,
                "purpose": f.purpose,
                "created_at": f.created_at,
                "content": base64.b64encode(f.content).decode("ascii"),
            }
            for f in files.listing()
        ],
        "batches": [
            {name: getattr(b, name) for name in FIELDS} | {"counts": b.counts, "usage": b.usage}
            for b in reversed(batches.listing())
        ],
    }
    temporary = path.with_name(path.name + ".tmp")
    try:
        temporary.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        log.warning("simulator: cannot keep its batches in %s: %s", path, exc)


def load(path: Path, files: FileStore, batches: BatchRegistry) -> int:
    """Restore what ``save`` wrote (batches that had not ended run again); returns how many batches."""
    if path.is_symlink() or not path.is_file():
        return 0
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        stored = [
            StoredFile(f["id"], f["filename"], f["purpose"], base64.b64decode(f["content"]), f["created_at"])
            for f in data["files"]
        ]
        restored = [_batch(b) for b in data["batches"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("simulator: ignoring unreadable batch state %s: %s", path, exc)
        return 0
    for each in stored:
        files.restore(each)
    for batch in restored:
        batches.restore(batch, rerun=batch.status not in TERMINAL)
    return len(restored)


def _batch(raw: dict[str, Any]) -> Batch:
    batch = Batch(
        id=str(raw["id"]),
        input_file_id=str(raw["input_file_id"]),
        metadata=raw.get("metadata"),
        created_at=int(raw["created_at"]),
    )
    for name in FIELDS[4:]:
        setattr(batch, name, raw.get(name))
    batch.times = dict(raw.get("times") or {})
    batch.counts, batch.usage = Counter(raw.get("counts") or {}), Counter(raw.get("usage") or {})
    if batch.status not in TERMINAL:  # stopped mid-run: it runs again from the start
        batch.status, batch.counts = "validating", Counter()
        with contextlib.suppress(KeyError):
            del batch.times["in_progress_at"]
    return batch
