"""An Office file (.docx, .pptx, .odt) measured as a zip, then read in a confined child process.

An Office file is a zip of XML parts, and its readers (python-docx, python-pptx, odfpy) unzip and
parse whole parts: a 1.5 MB .docx whose XML inflates to 400 MB of paragraphs held a reader for
minutes and 3.9 GB. So, before any parsing, ``check_package`` reads the zip's directory (sizes only,
nothing inflated) and refuses a file whose parts unzip to more than ``batch.reader.max_unzipped_mb``,
or holding a part that inflates to more than ``batch.reader.max_zip_ratio`` times its stored size.
Then ``office_units`` reads the file in a ``ReaderProcess`` (``sandbox``) under the same memory, CPU
and time limits as a PDF, which stop what the sizes let through (XML costly to parse for its size).
"""

from __future__ import annotations

import importlib
import itertools
import zipfile
from collections.abc import Iterator
from pathlib import Path

from suture.config.limit_settings import ReaderLimits
from suture.workers.documents.errors import UnreadableDocument
from suture.workers.documents.sandbox import ReaderProcess
from suture.workers.documents.section import Unit
from suture.workers.extras import requiring

# The reader of each Office suffix, run in the child: module and function, each yielding ``Unit``s.
OFFICE_READERS: dict[str, tuple[str, str]] = {
    ".docx": ("suture.workers.documents.office", "docx_units"),
    ".pptx": ("suture.workers.documents.office", "pptx_units"),
    ".odt": ("suture.workers.documents.odt", "odt_units"),
}
MIB = 1024 * 1024
# A part this small is never refused for its ratio: small XML parts (styles, numbering) can be very
# repetitive, and inflating one costs nothing (Apache POI's zip-bomb check has the same grace).
RATIO_GRACE_B = MIB


def check_package(path: Path, limits: ReaderLimits) -> None:
    """Refuse a zip whose parts unzip to too much in all, or one part inflating too far (sizes only).

    The sizes are those the zip's directory declares; Python's zipfile never inflates a part past its
    declared size, and the child's limits hold if the directory lies. A file that is not a zip is left
    to its reader, which says what it is.
    """
    if not zipfile.is_zipfile(path):
        return
    try:
        with zipfile.ZipFile(path) as package:
            parts = package.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        detail = f"not a readable zip package ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
        raise UnreadableDocument(path, "unreadable", detail) from exc
    total_b = sum(part.file_size for part in parts)
    if total_b > limits.max_unzipped_mb * MIB:
        raise UnreadableDocument(
            path,
            "unreadable",
            f"not read: its parts unzip to {total_b / MIB:,.0f} MB, more than "
            f"batch.reader.max_unzipped_mb={limits.max_unzipped_mb:g} (a zip bomb?)",
        )
    for part in parts:
        ratio = part.file_size / max(part.compress_size, 1)
        if part.file_size > RATIO_GRACE_B and ratio > limits.max_zip_ratio:
            raise UnreadableDocument(
                path,
                "unreadable",
                f"not read: its part {part.filename!r} unzips to {ratio:,.0f} times its stored size "
                f"({part.file_size / MIB:,.0f} MB), more than batch.reader.max_zip_ratio="
                f"{limits.max_zip_ratio:g} (a zip bomb?)",
            )


class SandboxedOffice(ReaderProcess):
    """An Office file whose text units come from a confined child process, one part at a time."""

    def __init__(self, path: Path, limits: ReaderLimits) -> None:
        suffix = path.suffix.lower()
        super().__init__(path, limits, suffix.removeprefix("."), reader=OFFICE_READERS[suffix])

    def units(self) -> Iterator[Unit]:
        """The file's units as its reader yields them; the child is stopped at the end."""
        try:
            for count in itertools.count(1):
                record = self._next()
                if record.get("t") == "end":
                    return
                self._step = f"part {count + 1}"  # the child reads on while this part is used
                yield Unit(
                    str(record["text"]),
                    page=record.get("page"),
                    breaks=bool(record.get("breaks")),
                    title=record.get("title"),
                    level=record.get("level"),
                )
        finally:
            self.close()


def office_units(path: Path, limits: ReaderLimits) -> Iterator[Unit]:
    """The units of a .docx, .pptx or .odt: checked as a zip, then read by a confined child.

    Its reader comes with the ``documents`` extra: imported here too (never called), so a missing one
    is named (``MissingExtra``) rather than refusing every Office file as unreadable.
    """
    suffix = path.suffix.lower()
    with requiring(f"reading {suffix} files", "documents"):
        importlib.import_module(OFFICE_READERS[suffix][0])
    check_package(path, limits)
    yield from SandboxedOffice(path, limits).units()
