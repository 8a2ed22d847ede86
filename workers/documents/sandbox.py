"""One document read in a child process under memory, CPU and time limits, so a bomb costs seconds,
not gigabytes.

A parser does whatever a file says: a 72 KB PDF page can inflate to a content stream that takes 20 s
and a gigabyte to tokenise, a 1.5 MB .docx to 400 MB of XML. So no PDF or Office file is parsed in
the process that asked for it. ``ReaderProcess(path, limits, kind)`` starts ``reader_child.py``
(isolated from the working directory), which caps itself with ``setrlimit`` (``batch.reader``:
address space, CPU per step and per file) and streams its records back as JSON lines; this side
holds the wall-clock limit (``timeout_s``) and kills the child when the caller stops early or the
time is up. Whatever limit is hit, the file is refused as ``UnreadableDocument(reason="unreadable")``
naming the limit and its setting. Once the child ended, ``peak_rss_mb`` is its peak resident memory
and ``cpu_s`` the CPU seconds it used. ``pdf_sandbox`` and ``office_sandbox`` read their records.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from suture.config.limit_settings import ReaderLimits
from suture.workers.documents.errors import UnreadableDocument

CHILD = Path(__file__).with_name("reader_child.py")
# A page's or part's text is capped by the child at 1M characters; as escaped ASCII JSON that is at
# most ~6 MB.
MAX_LINE_BYTES = 8 * 1024 * 1024
# What the child reads for each kind of file, as messages name it.
KIND_NAMES = {"pdf": "PDF", "docx": "Word", "pptx": "PowerPoint", "odt": "OpenDocument"}


class ReaderProcess:
    """A confined child process reading one file, whose records come one at a time."""

    def __init__(self, path: Path, limits: ReaderLimits, kind: str, **options: Any) -> None:
        self.path, self.limits, self.kind = path, limits, kind
        self.peak_rss_mb: float | None = None
        self.cpu_s = 0.0
        self._step = "opening the file"
        request = {
            "path": str(path),
            "kind": kind,
            "memory_mb": limits.max_memory_mb,
            "page_cpu_s": limits.page_cpu_s,
            "cpu_s": limits.cpu_s,
            **options,
        }
        self._process = subprocess.Popen(
            [sys.executable, "-I", str(CHILD), json.dumps(request)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._deadline = time.monotonic() + limits.timeout_s
        self._buffer = b""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the child if it still runs and collect its peak memory (idempotent)."""
        process = self._process
        if process.returncode is not None:
            return
        if process.stdout is not None:
            process.stdout.close()
        with contextlib.suppress(ProcessLookupError):  # an exited child stays a zombie until reaped
            os.kill(process.pid, signal.SIGKILL)
        self._reap()

    def _reap(self) -> int:
        _, status, usage = os.wait4(self._process.pid, 0)
        self._process.returncode = os.waitstatus_to_exitcode(status)
        self.peak_rss_mb = usage.ru_maxrss / 1024
        self.cpu_s = usage.ru_utime + usage.ru_stime
        return self._process.returncode

    def _next(self) -> dict[str, Any]:
        """The child's next record; a refusal, a limit, a crash or the deadline raise UnreadableDocument."""
        line = self._line()
        if line is None:
            raise self._refusal(self._died())
        record: dict[str, Any] = json.loads(line)
        kind = record.get("t")
        if kind == "refused":
            self.close()
            raise UnreadableDocument(self.path, str(record["reason"]), str(record["detail"]))
        if kind == "over":
            self.close()
            raise self._refusal(self._over(str(record["limit"])))
        return record

    def _line(self) -> bytes | None:
        stdout = self._process.stdout
        assert stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left_s = self._deadline - time.monotonic()
                if left_s <= 0:
                    self.close()
                    raise self._refusal(
                        f"reading took more than {self.limits.timeout_s:g} s (batch.reader.timeout_s)"
                    )
                if not selector.select(left_s):
                    continue
                chunk = os.read(stdout.fileno(), 1 << 20)
                if not chunk:
                    return None
                self._buffer += chunk
                if len(self._buffer) > MAX_LINE_BYTES and b"\n" not in self._buffer:
                    self.close()
                    raise self._refusal(f"{self._step} holds more text than a page can")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _died(self) -> str:
        code = self._reap()
        if code in (-signal.SIGXCPU, -signal.SIGKILL) or self.cpu_s >= self.limits.cpu_s:
            return self._over("cpu")
        name = KIND_NAMES.get(self.kind, self.kind)
        return f"the {name} reader stopped at {self._step} (exit status {code}; out of memory?)"

    def _over(self, limit: str) -> str:
        if limit == "memory":
            return (
                f"{self._step} needs more than {self.limits.max_memory_mb} MB of memory "
                "(batch.reader.max_memory_mb)"
            )
        if self.cpu_s >= self.limits.cpu_s:
            return f"the file took more than {self.limits.cpu_s:g} s of CPU (batch.reader.cpu_s)"
        return f"{self._step} took more than {self.limits.page_cpu_s:g} s of CPU (batch.reader.page_cpu_s)"

    def _refusal(self, detail: str) -> UnreadableDocument:
        return UnreadableDocument(self.path, "unreadable", f"not read: {detail}")
