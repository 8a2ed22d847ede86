"""Scanned PDFs read by OCR, when the tools are installed: ``ocrmypdf`` (the ``ocr`` extra) and Tesseract.

A PDF without any extractable text is copied through ``ocrmypdf --skip-text`` (which adds a text
layer to image-only pages and leaves pages with text alone) into a temporary folder, and the copy
is read instead. Without the tools the file is skipped, and the message names what to install.
A PDF with text on some pages only is read as it is; its note names the same tools.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

OCR_INSTALL = (
    "install the ocr extra (pip install 'suture[ocr]', which brings ocrmypdf) and Tesseract "
    "(apt install tesseract-ocr) to read image-only pages by OCR"
)


def missing_ocr_tools() -> list[str]:
    """The OCR programs not on PATH (empty: OCR can run)."""
    return [tool for tool in ("ocrmypdf", "tesseract") if shutil.which(tool) is None]


def ocr_copy(path: Path, folder: Path, timeout_s: float) -> Path | None:
    """``path`` with a text layer added by ocrmypdf, written in ``folder``; None if OCR failed."""
    target = folder / f"{path.stem}.ocr.pdf"
    try:
        subprocess.run(
            ["ocrmypdf", "--skip-text", "--quiet", str(path), str(target)],
            check=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return target if target.is_file() else None
