"""Question banks for an LMS, from a batch's output: Moodle XML, GIFT, QTI 1.2 / 2.1, Aiken, CSV, HTML.

``export(out, fmt, target, include_soft=..., only_accepted=...)`` reads ``quizzes.jsonl`` of a
batch's output folder into banks (``bank.load_catalogue``: one bank per quiz, i.e. per section of
a document, named after the document and the section title), writes them in one format through
its module's ``render`` and returns the catalogue (what was written, what was left out and why).
Every format carries the explanation as general feedback and the source page and quote with it,
where the format has feedback at all (Aiken has none). One module per format; ``FORMATS`` is the
registry. Texts are escaped for their format: GIFT's special characters, XML through ElementTree,
HTML through ``html.escape``, CSV cells defused against spreadsheet formulas.

Errors::

    ExportError     no quizzes.jsonl where given, or nothing left to export (str() is one line)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from suture.workers.exports import aiken, csv_table, gift, html_copy, moodle, qti12, qti21
from suture.workers.exports.bank import Catalogue, ExportError, load_catalogue
from suture.workers.exports.formats import ExportFormat

FORMATS: dict[str, ExportFormat] = {
    module.FORMAT.name: module.FORMAT for module in (moodle, gift, qti12, qti21, aiken, csv_table, html_copy)
}

__all__ = ["FORMATS", "Catalogue", "ExportError", "ExportFormat", "export", "load_catalogue"]


def export(
    out: Path, fmt: str, target: Path, *, include_soft: bool = False, only_accepted: bool = False
) -> Catalogue:
    """Write the banks of batch output ``out`` to ``target`` in format ``fmt``; returns what was written."""
    spec = FORMATS[fmt]
    catalogue = load_catalogue(out, include_soft=include_soft, only_accepted=only_accepted, kinds=spec.kinds)
    if catalogue.questions == 0:
        left = ", ".join(f"{n} {why}" for why, n in catalogue.left_out.items()) or "the batch has no quiz"
        raise ExportError(f"nothing to export ({left})")
    _write_atomically(target, spec.render(catalogue))
    return catalogue


def _write_atomically(target: Path, data: bytes) -> None:
    """Write to a temporary file beside the target, then rename: never a half-written export."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(name, 0o644)  # mkstemp's 0600 would hide the export from the web server or LMS uploader
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
