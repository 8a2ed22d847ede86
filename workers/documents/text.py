"""Is this text a document to work from? The checks every input passes, whichever way it came in.

``text_problem(text)`` names what makes a text unusable: empty, binary (NUL bytes, mostly control
or replacement characters), a file format's bytes passed as text (a PDF, a zip container such as
.docx, an image), or text decoded with the wrong encoding (replacement characters, U+FFFD). The
readers (``suture batch``, ``suture generate``, ``suture enqueue FILE``) skip such a file or section
with the reason; the producer (``enqueue``) refuses such an input before anything is stored.
Pure string checks: no I/O.
"""

from __future__ import annotations

import re

# Control characters other than tab, newline, carriage return and form feed mark a binary file.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
MAX_CONTROL_SHARE = 0.02
REPLACEMENT = "\ufffd"
# A decoder that met bytes it could not decode left U+FFFD; a few in a long text (a stray byte) are
# tolerated, more than one in a thousand characters means the text was decoded wrongly.
MAX_REPLACEMENT_SHARE = 0.001
SAMPLE_CHARS = 65536
# How file formats start (as text: a byte >= 0x80 may have become U+FFFD or its Latin-1 character).
SIGNATURES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"%PDF-"), "a PDF file"),
    (re.compile(r"PK\x03\x04"), "a zip container (.docx, .pptx, .xlsx, .odt, .epub, .zip)"),
    (re.compile(r"\{\\rtf"), "an RTF file"),
    (re.compile(r"[\x89\ufffd]PNG\r\n"), "a PNG image"),
    (re.compile(r"GIF8[79]a"), "a GIF image"),
    (re.compile(r"[\xff\ufffd].{1,6}(JFIF|Exif)", re.DOTALL), "a JPEG image"),
    (re.compile(r"\x7fELF"), "an executable"),
    (re.compile(r"[\xd0\ufffd][\xcf\ufffd]\x11[\xe0\ufffd]"), "an old Office file (.doc, .ppt, .xls)"),
)


def file_format(text: str) -> str | None:
    """The file format ``text`` starts like (bytes read as Latin-1 or UTF-8 text), else None."""
    start = text[:64].lstrip("\ufeff \t\r\n")[:16]
    return next((what for signature, what in SIGNATURES if signature.match(start)), None)


def text_problem(text: str) -> tuple[str, str] | None:
    """``(reason, detail)`` if ``text`` is no usable document, else None; reasons are stable codes:
    ``empty``, ``binary``, ``file_format``, ``undecodable``."""
    sample = text[:SAMPLE_CHARS]
    if not sample.strip():
        return "empty", "no text"
    start = sample.lstrip("\ufeff \t\r\n")[:16]
    for signature, what in SIGNATURES:
        if signature.match(start):
            return (
                "file_format",
                f"the text is {what}'s bytes, not its text; pass the file itself (.pdf is read)",
            )
    if "\x00" in sample:
        return "binary", "contains NUL characters: binary data, not text"
    if len(CONTROL.findall(sample)) / len(sample) > MAX_CONTROL_SHARE:
        return "binary", "mostly control characters: not text"
    replaced = sample.count(REPLACEMENT)
    if replaced and replaced / len(sample) > MAX_REPLACEMENT_SHARE:
        return "undecodable", (
            f"{replaced} replacement characters (U+FFFD) in {len(sample):,}: decoded with the wrong "
            "encoding; "
            "pass the raw bytes, which suture decodes (UTF-8, UTF-16 with a byte-order mark, else cp1252)"
        )
    return None
