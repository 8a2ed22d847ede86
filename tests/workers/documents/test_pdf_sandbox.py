"""PDF bombs are refused as unreadable within seconds and a few hundred MB: the reader runs confined.

The bombs are made by the tests (tests/fixtures/bombs.py): a PDF whose ten pages each inflate to
70 MB of text operators, and a 72 KB one-page PDF whose content stream holds 37 million operators.
Unconfined, pypdf spends seconds and hundreds of MB on each page of them. "Within 10 s" is checked
as CPU seconds (the reader's, and the whole command's), which a busy machine does not stretch; the
wall clock is bounded by ``batch.reader.timeout_s`` (tested on its own below).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from suture.config.limit_settings import ReaderLimits
from suture.config.settings import BatchSettings
from suture.workers.documents import Section, iter_documents
from suture.workers.documents.errors import UnreadableDocument
from suture.workers.documents.pdf_sandbox import open_pdf
from tests.fixtures.bombs import dense_page_bomb, pdf_bomb, text_pdf
from tests.fixtures.processes import run_with_usage

ROOT = Path(__file__).resolve().parents[3]
MAX_CPU_S = 10.0
MAX_RSS_MB = 500.0
LESSON = "Photosynthesis turns light into sugar in the chloroplasts of green plant cells."


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bombs")
    return {
        "pages-inflate-to-70MB": pdf_bomb(folder / "inflating.pdf", pages=10, page_mb=70),
        "72KB-dense-page": dense_page_bomb(folder / "dense.pdf"),
    }


# Reads a PDF with the default limits in a process of its own (whose peak memory is its own and its
# reader's, not this test process's) and prints how it was refused.
READ_PDF = """
import json, sys
from pathlib import Path
from suture.config.limit_settings import ReaderLimits
from suture.workers.documents.errors import UnreadableDocument
from suture.workers.documents.pdf_sandbox import open_pdf
pdf = open_pdf(Path(sys.argv[1]), ReaderLimits(), outline=True)
try:
    with pdf:
        pdf.outline()
        list(pdf.units())
except UnreadableDocument as refused:
    print(json.dumps({"reason": refused.reason, "detail": refused.detail, "cpu_s": pdf.cpu_s}))
"""


@pytest.mark.parametrize("name", ["pages-inflate-to-70MB", "72KB-dense-page"])
def test_a_pdf_bomb_is_refused_as_unreadable_in_seconds_with_a_confined_reader(
    bombs: dict[str, Path], name: str, tmp_path: Path
) -> None:
    # Given a PDF bomb
    path = bombs[name]

    # When it is opened and read (in a process of its own, through the confined reader)
    code, usage = run_with_usage([sys.executable, "-c", READ_PDF, str(path)], tmp_path)

    # Then it is refused as unreadable, naming the limit it hit and its setting, within 10 s of CPU
    assert code == 0, (tmp_path / "stderr").read_text()
    refused = json.loads((tmp_path / "stdout").read_text())
    assert refused["reason"] == "unreadable"
    assert "batch.reader." in refused["detail"]
    assert refused["cpu_s"] < MAX_CPU_S
    # ...and neither the reading process nor its confined reader ever held 500 MB
    assert usage.ru_maxrss / 1024 < MAX_RSS_MB, usage.ru_maxrss / 1024


@pytest.mark.parametrize("name", ["pages-inflate-to-70MB", "72KB-dense-page"])
def test_suture_batch_skips_a_pdf_bomb_as_unreadable_and_stays_small(
    bombs: dict[str, Path], name: str, tmp_path: Path
) -> None:
    # Given a folder with a PDF bomb beside an ordinary document
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "bomb.pdf").write_bytes(bombs[name].read_bytes())
    (tmp_path / "docs" / "lesson.md").write_text(f"# Plants\n\n{LESSON * 3}\n", encoding="utf-8")

    # When `suture batch --dry-run` reads it, in a process of its own
    argv = [sys.executable, "-m", "suture", "batch", "docs", "--out", "out", "--dry-run"]
    code, usage = run_with_usage(argv, tmp_path)
    stdout, stderr = (tmp_path / "stdout").read_text(), (tmp_path / "stderr").read_text()

    # Then the bomb is skipped as unreadable, naming the limit, and the lesson is still planned
    assert code == 3, stderr
    assert "bomb.pdf: skipped: unreadable: not read:" in stderr
    assert "batch.reader." in stderr
    assert "lesson.md" in stdout
    # ...within 10 s of CPU (the command's and its reader's), and neither ever held 500 MB
    assert usage.ru_utime + usage.ru_stime < MAX_CPU_S
    assert usage.ru_maxrss / 1024 < MAX_RSS_MB
    assert "Traceback" not in stderr


def test_a_page_over_the_memory_limit_refuses_the_file_naming_the_setting(bombs: dict[str, Path]) -> None:
    # Given a reader allowed little memory and much CPU
    limits = ReaderLimits(max_memory_mb=160, page_cpu_s=60, cpu_s=60, timeout_s=60)

    # When a page inflating to 70 MB is read, Then the file is refused for its memory
    with (
        pytest.raises(UnreadableDocument) as refused,
        open_pdf(bombs["pages-inflate-to-70MB"], limits) as pdf,
    ):
        list(pdf.units())
    assert "page 1" in refused.value.detail
    assert "160 MB of memory (batch.reader.max_memory_mb)" in refused.value.detail


def test_a_reader_past_the_wall_clock_limit_is_stopped(bombs: dict[str, Path]) -> None:
    # Given a reader allowed much CPU but little time
    limits = ReaderLimits(page_cpu_s=60, cpu_s=60, timeout_s=1.0)

    # When a bomb is read, Then it is stopped at the deadline and the file refused, naming the setting
    started = time.monotonic()
    with pytest.raises(UnreadableDocument) as refused, open_pdf(bombs["72KB-dense-page"], limits) as pdf:
        list(pdf.units())
    assert time.monotonic() - started < 10  # the deadline works; 1 s plus start-up, on a busy machine
    assert "more than 1 s (batch.reader.timeout_s)" in refused.value.detail
    assert pdf._process.returncode is not None  # the child is gone, reaped


def test_an_ordinary_pdf_reads_page_by_page_and_its_reader_stops_with_the_caller(tmp_path: Path) -> None:
    # Given an ordinary three-page PDF
    path = text_pdf(tmp_path / "lesson.pdf", [f"Page {n}: {LESSON}" for n in (1, 2, 3)])

    # When only its first page is taken
    with open_pdf(path, ReaderLimits()) as pdf:
        first = next(iter(pdf.units()))
        assert pdf.page_count == 3

    # Then the page's text came through, and the reader process is gone
    assert first.page == 1 and LESSON in first.text
    assert pdf._process.returncode is not None
    # ...and a batch reads the whole document as before
    sections = [item for item in iter_documents([path], BatchSettings()) if isinstance(item, Section)]
    assert [section.page_start for section in sections] == [1] and LESSON in sections[0].text
