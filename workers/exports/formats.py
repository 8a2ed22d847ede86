"""The export formats: what each is called, writes, and can carry; and helpers several of them share."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

from suture.workers.exports.bank import Bank, Catalogue

# Moodle accepts only these answer grades (percent); a share of 100 / n is written as the nearest one.
MOODLE_GRADES = (
    100,
    90,
    83.33333,
    80,
    75,
    70,
    66.66667,
    60,
    50,
    40,
    33.33333,
    30,
    25,
    20,
    16.66667,
    14.28571,
    12.5,
    11.11111,
    10,
    5,
    0,
)


@dataclass(frozen=True)
class ExportFormat:
    """One format: its ``--format`` name, a description, its usual file suffix, the question kinds it
    can carry, and ``render(catalogue) -> bytes``."""

    name: str
    description: str
    suffix: str
    kinds: frozenset[str]
    render: Callable[[Catalogue], bytes]


def category_path(bank: Bank) -> str:
    """A Moodle category path for a bank, ``/`` in names doubled as Moodle escapes them."""
    parts = [bank.document_name, bank.section_name]
    return "$course$/top/" + "/".join(part.replace("/", "//") for part in parts)


def share_percent(correct: int) -> str:
    """Each correct option's grade in a multiple-answer question, from Moodle's list of grades."""
    share = 100 / max(1, correct)
    best = min(MOODLE_GRADES, key=lambda grade: abs(grade - share))
    return f"{best:g}"


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A zip of ``{path: content}``, in that order, with fixed timestamps (the same export, the same
    bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():
            info = zipfile.ZipInfo(path, date_time=(2000, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


def xml_bytes(root: ET.Element) -> bytes:
    """An ElementTree element as an indented UTF-8 document with its declaration."""
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
