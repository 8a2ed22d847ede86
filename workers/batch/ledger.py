"""A batch's own record in ``--out``: ``ledger.jsonl``, what each section cost and whether a person touched
it.

The ledger decides what a rerun skips, whichever stack runs the batch (an embedded one whose Redis
is gone, a ``suture up``, a cluster): one append-only JSONL line per event, written through
``OutputFolder`` (no link followed) with ``suture.workers.jsonl`` (line breaks escaped), flushed
and synced as each event happens, so Ctrl-C or a crash loses at most the line being written (a
torn last line is ignored when read back). Events::

    finished      a job ended: key, section hash, job id, status, cost_usd, output_sha256
    interrupted   a job stopped by Ctrl-C: what it had cost so far, its calls in flight at their
                  estimated cost included (``estimated_usd``, ``calls_in_flight``: ``in_flight``), and,
                  on an embedded stack, where its engine state is saved (``partial``, see ``carry``)
    edited        quizzes.jsonl held a quiz other than the one recorded: the person's version,
                  its sha256 and its failures under the contract (it is kept, never regenerated)
    accepted      a person accepted the quiz (review page): kept as it is
    regenerated   targeted questions were regenerated (``suture resume --target``): cost, new sha256

The key of a section (``section_key``) is a hash of its text, the contract's complete parameters,
the policy and the contract's name: a rerun with the same rules finds its finished sections by it.
A quiz a person touched is found by its section's text alone, so a change of rules never replaces it.
The batch's cost is the sum of every event's ``cost_usd``; the part of it that is estimated, the sum of
each section's ``estimated_usd`` still standing: a ``finished`` event with ``estimate_settled`` (the job
went on in a store that outlived the stop, so its real cost replaced the estimate) sets it back to 0.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from suture.workers.jsonl import write_line
from suture.workers.output_folder import OutputFolder

LEDGER = "ledger.jsonl"
# Statuses after which a section is done: a rerun keeps it (failed or interrupted ones are retried).
DONE_STATUSES = ("delivered", "soft_delivered", "refused")
TOUCHED = ("edited", "accepted")


def section_key(contract: str, section_sha256: str, params: dict[str, Any], policy: str | None) -> str:
    """Same section text, contract parameters, policy and contract -> same key, wherever the file lives."""
    rules = json.dumps(params, sort_keys=True, separators=(",", ":"))
    raw = f"batch|{contract}|{section_sha256}|{rules}|{policy or ''}"
    return "batch-" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def quiz_sha256(quiz: Any) -> str:
    """A digest of a quiz's content (key order and spacing aside): changed digest = changed quiz."""
    canonical = json.dumps(quiz, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class Entry:
    """What the ledger says of one section: its latest job and whether a person touched its quiz."""

    key: str
    section_sha256: str
    job_id: str
    status: str
    source: dict[str, Any]
    output_sha256: str | None = None
    touched: str | None = None  # "edited" or "accepted"
    output: Any = None  # the person's version of an edited quiz (kept here too, never lost)
    cost_usd: float = 0.0  # every run of this section, summed
    partial: str | None = None  # an interrupted job's saved engine state (``carry``), relative to --out
    estimated_usd: float = 0.0  # the part of ``cost_usd`` estimated: calls in flight at a Ctrl-C


@dataclass
class LedgerState:
    """The ledger read back: the latest entry per key, touched quizzes by section, the batch's cost."""

    by_key: dict[str, Entry] = field(default_factory=dict)
    touched: dict[str, Entry] = field(default_factory=dict)  # section sha256 -> entry
    total_usd: float = 0.0
    torn_lines: int = 0

    @property
    def estimated_usd(self) -> float:
        """The part of ``total_usd`` that is an estimate (calls in flight at a Ctrl-C, never settled)."""
        return sum(entry.estimated_usd for entry in self.by_key.values())

    def done(self, key: str, section_sha256: str) -> Entry | None:
        """The entry that makes a section done: a quiz a person touched, else a finished job of this key."""
        touched = self.touched.get(section_sha256)
        if touched is not None:
            return touched
        entry = self.by_key.get(key)
        return entry if entry is not None and entry.status in DONE_STATUSES else None

    def by_job(self, job_id: str) -> Entry | None:
        """The entry of a job id (the latest section that ran it)."""
        for entry in self.by_key.values():
            if entry.job_id == job_id:
                return entry
        return None

    def fold(self, record: dict[str, Any]) -> None:
        """Apply one event to the state."""
        self.total_usd += float(record.get("cost_usd") or 0.0)
        key, event = str(record["key"]), record["event"]
        entry = self.by_key.get(key)
        if event in ("finished", "interrupted") or entry is None:
            before = entry.cost_usd if entry is not None else 0.0
            estimated = entry.estimated_usd if entry is not None else 0.0
            if record.get("estimate_settled"):
                estimated = 0.0
            entry = Entry(
                key=key,
                section_sha256=str(record.get("section_sha256")),
                job_id=str(record.get("job_id")),
                status=str(record.get("status")),
                source=dict(record.get("source") or {}),
                output_sha256=record.get("output_sha256"),
                cost_usd=before,
                partial=record.get("partial"),
                estimated_usd=estimated,
            )
            self.by_key[key] = entry
        entry.cost_usd += float(record.get("cost_usd") or 0.0)
        entry.estimated_usd += float(record.get("estimated_usd") or 0.0)
        if event in TOUCHED:
            entry.touched = "edited" if "edited" in (event, entry.touched) else "accepted"
            entry.output_sha256 = record.get("output_sha256", entry.output_sha256)
            if "output" in record:
                entry.output = record["output"]
            entry.status = str(record.get("status") or entry.status)
            self.touched[entry.section_sha256] = entry
        elif event == "regenerated":
            entry.output_sha256 = record.get("output_sha256")
            entry.status = str(record.get("status") or entry.status)


def read_ledger(out_dir: Path) -> LedgerState:
    """The ledger of ``out_dir`` (empty if there is none); lines that do not parse are counted, not fatal."""
    state = LedgerState()
    path = out_dir / LEDGER
    if path.is_symlink() or not path.is_file():
        return state
    with path.open(encoding="utf-8", newline="\n") as lines:
        for line in lines:
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or "key" not in record or "event" not in record:
                    raise ValueError("not a ledger record")
                state.fold(record)
            except (ValueError, TypeError, KeyError):
                state.torn_lines += 1  # a line cut by a crash while it was written
    return state


class LedgerWriter:
    """Appends events to ``ledger.jsonl``, each flushed and synced at once."""

    def __init__(self, out_dir: Path) -> None:
        self.stream: IO[str] = OutputFolder(out_dir).open(LEDGER, "a")

    def write(self, event: str, entry: dict[str, Any]) -> None:
        """Append one event (``entry`` holds key, section_sha256 and what the event records)."""
        write_line(self.stream, {"event": event, "at": round(time.time(), 3), **entry})
        self.stream.flush()
        with contextlib.suppress(OSError):
            os.fsync(self.stream.fileno())

    def close(self) -> None:
        """Close the stream (safe to call twice)."""
        self.stream.close()
