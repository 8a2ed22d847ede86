"""Reading course documents into quiz sections, and refusing bad inputs with a clear reason."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from fpdf import FPDF

from suture.config.settings import BatchSettings
from suture.workers.documents import InputIssue, InputNotFound, Section, iter_documents
from suture.workers.documents.ocr import missing_ocr_tools
from suture.workers.documents.packing import pack_sections
from suture.workers.documents.section import Unit, split_text

DATA = Path(__file__).parents[2] / "data" / "documents"
EXAMPLES = Path(__file__).parents[3] / "examples"
LIMITS = BatchSettings()


def _run(*inputs: Path, limits: BatchSettings = LIMITS) -> tuple[list[Section], list[InputIssue]]:
    items = list(iter_documents(inputs, limits))
    return [i for i in items if isinstance(i, Section)], [i for i in items if isinstance(i, InputIssue)]


@pytest.mark.parametrize(
    ("name", "reason", "words"),
    [
        ("empty.txt", "empty", "empty"),
        ("blank.md", "empty", "empty"),
        ("scanned.pdf", "no_text", "OCR"),
        ("encrypted.pdf", "encrypted", "password"),
        ("corrupt.pdf", "unreadable", "not a readable PDF"),
        ("binary.txt", "binary", "binary"),
        ("slides.pptx", "unreadable", "not a PowerPoint file"),
        ("make_documents.py", "unsupported", "'.py' is not one of"),
    ],
)
def test_a_bad_file_is_skipped_with_its_reason(name: str, reason: str, words: str) -> None:
    # Given one unusable file named explicitly
    # When it is read
    sections, issues = _run(DATA / name)
    # Then it yields no section, and one skip line that names the file and says why
    assert sections == []
    assert [(i.reason, i.skipped) for i in issues] == [(reason, True)]
    assert name in str(issues[0]) and words in issues[0].detail


def test_a_folder_with_bad_files_goes_on_with_the_good_ones(capfd: pytest.CaptureFixture[str]) -> None:
    # Given the folder of bad and odd inputs
    sections, issues = _run(DATA)
    # Then nothing leaks to the terminal (pypdf's own complaints stay out of the user's way)
    assert capfd.readouterr().err == ""
    # Then the readable documents are sectioned and every other file is reported, none raising
    assert sorted(Path(s.source).name for s in sections) == [
        "glaciers.md",
        "injection.md",
        "latin1_notes.txt",
    ]
    skipped = {Path(i.source).name: i.reason for i in issues if i.skipped}
    assert skipped == {
        "binary.txt": "binary",
        "blank.md": "empty",
        "corrupt.pdf": "unreadable",
        "empty.txt": "empty",
        "encrypted.pdf": "encrypted",
        "glaciers_copy.md": "duplicate",
        "scanned.pdf": "no_text",
        "slides.pptx": "unreadable",
        "make_documents.py": "unsupported",
    }


def test_non_utf8_text_is_decoded_with_a_note() -> None:
    sections, issues = _run(DATA / "latin1_notes.txt")
    assert "Révolution française" in sections[0].text
    assert [(i.reason, i.skipped) for i in issues] == [("encoding", False)]
    assert "cp1252" in issues[0].detail


def test_a_prompt_injection_is_just_content() -> None:
    sections, _ = _run(DATA / "injection.md")
    assert "Ignore all previous instructions" in sections[0].text


def test_the_examples_are_sectioned_with_their_sources() -> None:
    # Given the sample course documents (markdown, text and a PDF)
    sections, issues = _run(EXAMPLES)
    # Then each section is bounded, knows its file, and PDF sections know their pages
    assert issues == []
    assert {Path(s.source).suffix for s in sections} == {".md", ".txt", ".pdf"}
    assert all(len(s.text) <= LIMITS.section_max_chars for s in sections)
    pdf = [s for s in sections if s.source.endswith(".pdf")]
    assert [s.page_start for s in pdf] == sorted(s.page_start or 0 for s in pdf)
    assert all(s.describe()["pages"] for s in pdf)
    titled = [s.title for s in sections if s.source.endswith("photosynthesis.md")]
    assert titled == [
        "Where it happens: the chloroplast",
        "The light-dependent reactions, The Calvin cycle",
        "Photorespiration and its workarounds, Factors that limit the rate",
    ]


@pytest.mark.skipif(not missing_ocr_tools(), reason="OCR tools installed: the scan is read, not skipped")
def test_a_scan_without_the_ocr_tools_names_what_to_install() -> None:
    _, issues = _run(DATA / "scanned.pdf")
    assert "suture[ocr]" in issues[0].detail and "ocrmypdf" in issues[0].detail
    assert "Tesseract" in issues[0].detail


def test_a_missing_input_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound, match="input not found"):
        _run(tmp_path / "nope")


def _long_pdf(path: Path, pages: int) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for n in range(pages):
        pdf.add_page()
        # Wrapped here, written line by line: fpdf's multi_cell measures each line a character at a
        # time, and took 8 of the test's 8.5 s for 500 pages (100 characters stay within the page).
        for line in textwrap.wrap(f"Page {n + 1}. " + "Rivers carry sediment to the sea. " * 30, 100):
            pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def test_a_500_page_document_is_sectioned_and_bounded(tmp_path: Path) -> None:
    # Given a 500-page PDF and a cap of 20 sections per document
    _long_pdf(tmp_path / "huge.pdf", 500)
    limits = BatchSettings(section_max_chars=3000, section_min_chars=500, max_sections_per_document=20)
    # When it is read
    sections, issues = _run(tmp_path / "huge.pdf", limits=limits)
    # Then it yields exactly the cap, with page ranges, and one line says which pages were left out
    assert len(sections) == 20
    assert sections[0].page_start == 1 and sections[-1].page_end is not None
    (truncated,) = issues
    assert truncated.reason == "truncated" and not truncated.skipped
    assert f"pages {sections[-1].page_end + 1}-500 of 500" in truncated.detail


def test_duplicates_are_found_by_content_not_name(tmp_path: Path) -> None:
    shutil.copy(DATA / "glaciers.md", tmp_path / "a.md")
    shutil.copy(DATA / "glaciers.md", tmp_path / "b.txt")
    sections, issues = _run(tmp_path)
    assert len(sections) == 1
    assert [i.reason for i in issues] == ["duplicate"]


@pytest.mark.parametrize("max_chars", [50, 200, 1000])
def test_split_text_never_exceeds_the_size_and_keeps_every_word(max_chars: int) -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "word " * (i * 40) + "end." for i in range(1, 6)) + "x" * 3000
    pieces = split_text(text, max_chars)
    assert all(0 < len(p) <= max_chars for p in pieces)
    assert "".join(pieces).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


def test_a_short_heading_is_joined_to_its_neighbour_and_named_for_both() -> None:
    units = [Unit("a" * 100, breaks=True, title="A"), Unit("b" * 100, breaks=True, title="B")]
    small = list(pack_sections("f.md", units, max_chars=1000, min_chars=500))
    large = list(pack_sections("f.md", units, max_chars=1000, min_chars=50))
    assert [s.title for s in small] == ["A, B"]
    assert [s.title for s in large] == ["A", "B"]
