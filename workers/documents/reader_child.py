"""The process that reads one document under resource limits, and the reader calls it makes.

Run as a file (``python -I reader_child.py REQUEST``, see ``sandbox``), isolated from the working
directory (``-I``). It first caps itself: address space ``memory_mb`` and CPU ``cpu_s`` for the
whole file (``setrlimit``; the kernel ends the process past them), no core file, no file written,
and ``page_cpu_s`` of CPU for each step (opening, the outline, each page or part: past it, the
``SIGXCPU`` the kernel sends ends the step). A PDF is read with pypdf alone (nothing of suture); an
Office file of ``kind`` ``docx``, ``pptx`` or ``odt`` with suture's own readers (python-docx,
python-pptx, odfpy), imported after the limits are set. It writes ASCII JSON lines on stdout, read
by its parent:

    {"t": "open", "pages": N, "notes": [...]}           the PDF opened (decrypted with "" if needed)
    {"t": "outline", "marks": [[page, title, depth], ...]}  bookmarks of the two top levels (if asked)
    {"t": "page", "n": k, "text": "...", "note": ...}    page k's text ("" and a note if unreadable)
    {"t": "unit", "text": "...", "page": ..., "breaks": ..., "title": ..., "level": ...}
                                                         an Office file's next text unit (a part)
    {"t": "refused", "reason": R, "detail": D}           the file cannot be read (R: a stable code)
    {"t": "over", "limit": "cpu" | "memory"}             the current step ran out of CPU or memory
    {"t": "end"}

A page pypdf cannot parse is skipped with a note, as before; a step over the CPU budget or out of
memory refuses the whole file (a bomb, not a sloppy page). An Office file's parts are the units its
reader yields (a heading's paragraphs, at most 200 at a time; a slide), each a step.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
import resource
import signal
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pypdf import PdfReader
from pypdf.errors import DependencyError, PyPdfError

# pypdf raises many exception types on malformed files; all of them mean "this part is unreadable".
PDF_ERRORS = (PyPdfError, ValueError, LookupError, TypeError, AttributeError, OSError, RecursionError)
MAX_PAGE_CHARS = 1_000_000  # more text than a page can hold: a generated page, not a document's


class OverBudget(Exception):
    """The current step used its CPU seconds (SIGPROF), or the file its own (SIGXCPU)."""


class Refused(Exception):
    """The file cannot be read: ``reason`` is a stable code, ``detail`` says why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def confine(memory_mb: int, cpu_s: float) -> None:
    """Cap this process: address space, total CPU, no core file, no file of any size written."""
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    hard = math.ceil(cpu_s) + 1  # past the hard limit the kernel sends SIGKILL
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(cpu_s), hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    signal.signal(signal.SIGXCPU, _over_budget)
    signal.signal(signal.SIGPROF, _over_budget)


def _over_budget(signum: int, frame: Any) -> None:
    raise OverBudget


def step_budget(seconds: float) -> None:
    """Let the next step use ``seconds`` of CPU from now (never past the whole file's limit)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    wanted = math.ceil(used.ru_utime + used.ru_stime + seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (min(wanted, hard - 1), hard))


def open_reader(path: str) -> tuple[PdfReader, list[str]]:
    """The opened PDF and notes on how; ``Refused`` if it is encrypted, empty or corrupt."""
    notes: list[str] = []
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            notes.append(_decrypt(reader))
        if len(reader.pages) == 0:
            raise Refused("empty", "PDF has no pages")
    except PDF_ERRORS as exc:
        raise Refused("unreadable", f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    return reader, notes


def _decrypt(reader: PdfReader) -> str:
    """Open a PDF encrypted with an empty user password (common for "no copy" PDFs); refuse others."""
    try:
        opened = reader.decrypt("")
    except DependencyError as exc:
        raise Refused("encrypted", f"encrypted PDF; cannot decrypt here ({exc})") from None
    if not opened:
        raise Refused("encrypted", "encrypted PDF with a password; decrypt it first")
    return "encrypted PDF opened with an empty password"


def outline(reader: PdfReader) -> list[list[Any]]:
    """``[page, title, depth]`` of the bookmarks of the two top outline levels (1-based pages, depth 0, 1)."""
    return list(_marks(reader, reader.outline, depth=0))


def _marks(reader: PdfReader, nodes: Any, depth: int) -> Iterator[list[Any]]:
    for node in nodes:
        if isinstance(node, list):
            if depth < 1:
                yield from _marks(reader, node, depth + 1)
            continue
        page = reader.get_destination_page_number(node)
        title = " ".join(str(node.title or "").split())
        if title and page is not None and page >= 0:
            yield [page + 1, title, depth]


def page_record(reader: PdfReader, number: int) -> dict[str, Any]:
    """Page ``number``'s text, or an empty text and a note when pypdf cannot parse it."""
    try:
        text = reader.pages[number - 1].extract_text() or ""
    except PDF_ERRORS as exc:
        return {
            "t": "page",
            "n": number,
            "text": "",
            "note": f"page {number} unreadable ({type(exc).__name__}); skipped",
        }
    if len(text) > MAX_PAGE_CHARS:
        note = f"page {number} has {len(text):,} characters of text, more than a page holds; skipped"
        return {"t": "page", "n": number, "text": "", "note": note}
    return {"t": "page", "n": number, "text": text}


def run_pdf(request: dict[str, Any]) -> None:
    """Read the PDF the request names, one step per budget, writing records as they are ready."""
    reader, notes = open_reader(request["path"])
    emit({"t": "open", "pages": len(reader.pages), "notes": notes})
    if request.get("outline"):
        step_budget(request["page_cpu_s"])
        try:
            emit({"t": "outline", "marks": outline(reader)})
        except PDF_ERRORS as exc:
            emit({"t": "outline", "marks": [], "note": f"outline unreadable ({type(exc).__name__})"})
    for number in range(1, len(reader.pages) + 1):
        step_budget(request["page_cpu_s"])
        emit(page_record(reader, number))
    emit({"t": "end"})


def run_office(request: dict[str, Any]) -> None:
    """Read the Office file the request names with suture's reader of its kind, one step per unit."""
    module_name, function = request["reader"]  # office_sandbox.OFFICE_READERS
    reader = getattr(importlib.import_module(module_name), function)
    unreadable = importlib.import_module("suture.workers.documents.errors").UnreadableDocument
    try:
        for unit in reader(Path(request["path"])):
            for record in unit_records(unit):
                emit(record)
            step_budget(request["page_cpu_s"])
    except unreadable as exc:
        raise Refused(exc.reason, exc.detail) from None
    emit({"t": "end"})


def unit_records(unit: Any) -> Iterator[dict[str, Any]]:
    """A unit as records of at most ``MAX_PAGE_CHARS`` each (one JSON line stays a few MB at most)."""
    text = unit.text
    head = {"page": unit.page, "breaks": unit.breaks, "title": unit.title, "level": unit.level}
    for start in range(0, max(len(text), 1), MAX_PAGE_CHARS):
        yield {"t": "unit", "text": text[start : start + MAX_PAGE_CHARS], **head}
        head = {"page": unit.page, "breaks": False, "title": None, "level": None}  # the rest continues it


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")  # ASCII: no character a line reader splits on
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    request = json.loads(argv[1])
    confine(request["memory_mb"], request["cpu_s"])
    logging.disable(logging.CRITICAL)  # the readers' complaints about sloppy files are not ours to print
    warnings.simplefilter("ignore")
    try:
        step_budget(request["page_cpu_s"])  # opening is a step too (a bomb in the page tree)
        if request["kind"] == "pdf":
            run_pdf(request)
        else:
            run_office(request)
    except Refused as exc:
        emit({"t": "refused", "reason": exc.reason, "detail": exc.detail})
    except OverBudget:
        emit({"t": "over", "limit": "cpu"})
    except MemoryError:
        emit({"t": "over", "limit": "memory"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
