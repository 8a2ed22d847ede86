"""Office bombs are refused as unreadable within seconds and a few hundred MB; the other files are read.

Issue 33: a 1.46 MB .docx whose XML inflates to 400 MB of paragraphs held `batch --dry-run` for
over 240 s and 3.9 GB, and the good .docx after it was never read; a 1 GB text node peaked at
2.19 GB. The bombs here are made by the tests (tests/fixtures/bombs.py): a ~1.7 MB .docx inflating
to 400 MB of paragraphs, and a ~1 MB .docx and .pptx each holding a 1 GB text node. Two defences
are shown: the zip's declared sizes refuse them before anything is parsed (``check_package``), and
with those checks set out of the way the confined reader's own limits still stop them. "Within
10 s" is checked as wall-clock time where the time is bounded (the size check, a reader whose
``timeout_s`` is 9 s) and as CPU seconds for a whole command, which a busy machine does not stretch.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import docx
import pytest

from suture.config.limit_settings import ReaderLimits
from suture.config.settings import BatchSettings
from suture.workers.documents import Section, iter_documents
from suture.workers.documents.errors import UnreadableDocument
from suture.workers.documents.office import docx_units
from suture.workers.documents.office_sandbox import SandboxedOffice, check_package, office_units
from suture.workers.documents.section import BLOCKS_PER_UNIT
from tests.fixtures.bombs import (
    docx_paragraph_bomb,
    docx_table_bomb,
    docx_text_node_bomb,
    pptx_text_node_bomb,
)
from tests.fixtures.processes import run_with_usage

MAX_S = 10.0
MAX_RSS_MB = 600.0
BOMBS = ["paragraphs-400MB.docx", "text-node-1GB.docx", "text-node-1GB.pptx"]
# The zip checks out of the way, and a reader deadline that keeps a whole refusal under 10 s.
NO_ZIP_CHECKS = ReaderLimits(max_unzipped_mb=1_000_000, max_zip_ratio=1_000_000, timeout_s=9)
LESSON = "Glaciers carve U-shaped valleys as they flow downhill under their own weight. "


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("office-bombs")
    return {
        "paragraphs-400MB.docx": docx_paragraph_bomb(folder / "paragraphs.docx", inflated_mb=400),
        "text-node-1GB.docx": docx_text_node_bomb(folder / "node.docx", inflated_mb=1024),
        "text-node-1GB.pptx": pptx_text_node_bomb(folder / "node.pptx", inflated_mb=1024),
    }


def _good_docx(path: Path, paragraphs: int = 4) -> Path:
    document = docx.Document()
    document.add_heading("Glaciers", 1)
    for _ in range(paragraphs):
        document.add_paragraph(LESSON * 3)
    document.save(str(path))
    return path


def test_the_bombs_are_small_files_that_inflate_to_hundreds_of_mb(bombs: dict[str, Path]) -> None:
    # The bombs are what the issue describes: about a megabyte each, 400 MB or 1 GB of XML inside
    sizes_mb = {name: path.stat().st_size / 2**20 for name, path in bombs.items()}
    assert all(size < 2 for size in sizes_mb.values()), sizes_mb


@pytest.mark.parametrize("name", BOMBS)
def test_an_office_bomb_is_refused_from_its_zip_sizes_before_anything_is_parsed(
    bombs: dict[str, Path], name: str
) -> None:
    # Given an Office bomb and the default limits
    started = time.monotonic()

    # When its units are asked for
    with pytest.raises(UnreadableDocument) as refused:
        list(office_units(bombs[name], ReaderLimits()))

    # Then it is refused as unreadable from the sizes its zip declares, naming the setting, at once
    assert refused.value.reason == "unreadable"
    assert "batch.reader.max_unzipped_mb=200 (a zip bomb?)" in refused.value.detail
    assert time.monotonic() - started < MAX_S


def test_a_part_inflating_past_the_ratio_limit_is_refused_even_when_the_total_is_small(
    tmp_path: Path,
) -> None:
    # Given a .docx whose document.xml inflates to 20 MB only, at a ratio of about 240
    path = docx_paragraph_bomb(tmp_path / "small-bomb.docx", inflated_mb=20)

    # When it is checked, Then it is refused for its ratio, naming the part and the setting
    with pytest.raises(UnreadableDocument) as refused:
        check_package(path, ReaderLimits())
    assert "part 'word/document.xml' unzips to" in refused.value.detail
    assert "batch.reader.max_zip_ratio=100" in refused.value.detail
    # ...and it passes with a higher ratio limit (the size check alone lets 20 MB through)
    check_package(path, ReaderLimits(max_zip_ratio=1000))


@pytest.mark.parametrize("name", BOMBS)
def test_a_bomb_past_the_zip_checks_is_stopped_by_the_confined_readers_limits(
    bombs: dict[str, Path], name: str
) -> None:
    # Given an Office bomb, and the zip checks set so high that it passes them
    started = time.monotonic()

    # When it is read by the confined reader
    with (
        pytest.raises(UnreadableDocument) as refused,
        SandboxedOffice(bombs[name], NO_ZIP_CHECKS) as reader,
    ):
        list(reader.units())

    # Then the reader's own limits refuse it as unreadable, naming the limit, within 10 s
    assert refused.value.reason == "unreadable"
    assert "batch.reader." in refused.value.detail
    assert time.monotonic() - started < MAX_S
    assert reader.cpu_s < MAX_S
    # ...and the process that read it never held 600 MB
    assert reader.peak_rss_mb is not None and reader.peak_rss_mb < MAX_RSS_MB, reader.peak_rss_mb
    assert reader._process.returncode is not None  # the child is gone, reaped


def test_a_table_too_slow_to_read_is_stopped_by_the_cpu_budget_of_a_step(tmp_path: Path) -> None:
    # Given a 78 KB .docx of one 200,000-cell table (8 s of CPU to read in-process), its zip ratio
    # let through: small enough to hold, too slow to read
    path = docx_table_bomb(tmp_path / "table.docx", rows=10_000, columns=20)
    limits = ReaderLimits(max_zip_ratio=1_000_000)

    # When it is read by the confined reader
    with pytest.raises(UnreadableDocument) as refused, SandboxedOffice(path, limits) as reader:
        list(reader.units())

    # Then the step's CPU budget refuses it, naming the setting, within 10 s of CPU and 600 MB
    assert refused.value.reason == "unreadable"
    assert "took more than 2 s of CPU (batch.reader.page_cpu_s)" in refused.value.detail
    assert reader.cpu_s < MAX_S
    assert reader.peak_rss_mb is not None and reader.peak_rss_mb < MAX_RSS_MB, reader.peak_rss_mb


def test_a_part_longer_than_a_record_comes_through_whole(tmp_path: Path) -> None:
    # Given a Word file whose one paragraph holds 1.5 million characters (more than one record carries)
    document = docx.Document()
    document.add_paragraph(LESSON * 20_000)
    path = tmp_path / "long.docx"
    document.save(str(path))

    # When it is read by the confined reader (its highly repetitive XML let through)
    units = list(office_units(path, ReaderLimits(max_zip_ratio=1_000_000)))

    # Then the text arrives whole, in a unit and the ones that continue it
    assert "".join(u.text for u in units) == (LESSON * 20_000).strip()
    assert len(units) == 2 and not units[1].breaks and units[1].title is None


def test_an_ordinary_word_file_reads_in_the_child_as_in_process(tmp_path: Path) -> None:
    # Given a Word file with a heading and a long run of paragraphs (more than one unit's worth)
    path = _good_docx(tmp_path / "lesson.docx", paragraphs=BLOCKS_PER_UNIT * 2 + 50)

    # When it is read by the confined reader, and by its reader in this process
    confined = list(office_units(path, ReaderLimits()))
    direct = list(docx_units(path))

    # Then the units are the same: the heading opens the first, the long run continues in others
    assert confined == direct
    assert [(u.title, u.breaks) for u in confined] == [("Glaciers", True), (None, False), (None, False)]
    # ...and a batch reads it into sections of the heading, every paragraph quizzed
    sections = [item for item in iter_documents([path], BatchSettings()) if isinstance(item, Section)]
    assert sections and all(s.title and s.title.startswith("Glaciers") for s in sections)
    assert sum(s.text.count(LESSON.strip()) for s in sections) == (BLOCKS_PER_UNIT * 2 + 50) * 3


def _dry_run(
    folder: Path, cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, float, str, str, float]:
    """``suture batch --dry-run`` on ``folder`` in a process of its own: exit code, CPU seconds
    (command and reaped children), stdout, stderr, peak RSS in MB of the command and its children."""
    argv = [sys.executable, "-m", "suture", "batch", str(folder), "--out", "out", "--dry-run"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    code, usage = run_with_usage(argv, cwd, env=base | (env or {}))
    cpu_s = usage.ru_utime + usage.ru_stime
    return code, cpu_s, (cwd / "stdout").read_text(), (cwd / "stderr").read_text(), usage.ru_maxrss / 1024


@pytest.mark.integration
def test_suture_batch_skips_office_bombs_and_still_reads_the_good_document(
    bombs: dict[str, Path], tmp_path: Path
) -> None:
    # Given a course folder with the three bombs and a good .docx after them
    course = tmp_path / "course"
    course.mkdir()
    for name, path in bombs.items():
        (course / f"a-{name}").write_bytes(path.read_bytes())
    _good_docx(course / "z-lesson.docx")

    # When `suture batch --dry-run` reads it, in a process of its own
    code, cpu_s, stdout, stderr, peak_mb = _dry_run(course, tmp_path)

    # Then each bomb is skipped as unreadable with a clear reason, and the good document is planned
    assert code == 3, stderr
    for name in bombs:
        assert f"a-{name}: skipped: unreadable: not read: its parts unzip to" in stderr, stderr
    assert "z-lesson.docx: 1 section(s)" in stdout, stdout
    assert "Traceback" not in stderr
    # ...within 10 s of CPU for the whole command (the bombs are never parsed), never holding 600 MB
    assert cpu_s < MAX_S
    assert peak_mb < MAX_RSS_MB, peak_mb


@pytest.mark.integration
@pytest.mark.parametrize("name", BOMBS)
def test_with_the_zip_checks_off_the_confined_reader_still_stops_each_bomb_in_a_batch(
    bombs: dict[str, Path], name: str, tmp_path: Path
) -> None:
    # Given a course folder with one bomb and a good .docx after it, and zip checks that let it pass
    course = tmp_path / "course"
    course.mkdir()
    (course / f"a-{name}").write_bytes(bombs[name].read_bytes())
    _good_docx(course / "z-lesson.docx")
    env = {
        "SUTURE_BATCH__READER__MAX_UNZIPPED_MB": str(NO_ZIP_CHECKS.max_unzipped_mb),
        "SUTURE_BATCH__READER__MAX_ZIP_RATIO": str(NO_ZIP_CHECKS.max_zip_ratio),
    }

    # When `suture batch --dry-run` reads it
    code, cpu_s, stdout, stderr, peak_mb = _dry_run(course, tmp_path, env)

    # Then the bomb is skipped as unreadable by the reader's limits (naming one), the lesson is planned
    assert code == 3, stderr
    assert f"a-{name}: skipped: unreadable: not read:" in stderr, stderr
    assert "(batch.reader." in stderr and "zip bomb" not in stderr, stderr
    assert "z-lesson.docx: 1 section(s)" in stdout, stdout
    # ...within 10 s of CPU (the command's and its reader's), and neither ever held 600 MB
    assert cpu_s < MAX_S
    assert peak_mb < MAX_RSS_MB, peak_mb
