"""Sections that follow a document's own structure: Word headings, slides, PDF bookmarks and headings."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
import pptx
import pytest
from fpdf import FPDF
from pptx.util import Inches

from suture.config.settings import BatchSettings
from suture.workers.documents import (
    InputIssue,
    Section,
    UnreadableDocument,
    document_text,
    iter_documents,
)
from suture.workers.documents.pdf_structure import Mark, structured_units

# Every heading opens its own section, so the tests see each boundary.
EACH_HEADING = BatchSettings(section_min_chars=0, slide_min_chars=0, min_document_chars=20)
MITOCHONDRIA = (
    "Mitochondria make most of the cell's ATP by oxidative phosphorylation on their inner membrane."
)
NUCLEUS = "The nucleus holds the chromosomes and is wrapped in a double membrane with pores."
RIBOSOMES = "Ribosomes translate messenger RNA into proteins, in the cytoplasm or on the rough reticulum."


def _read(*inputs: Path, limits: BatchSettings = EACH_HEADING) -> tuple[list[Section], list[InputIssue]]:
    items = list(iter_documents(inputs, limits))
    return [i for i in items if isinstance(i, Section)], [i for i in items if isinstance(i, InputIssue)]


def _word_file(path: Path) -> Path:
    document = docx.Document()
    document.add_heading("Cell biology", level=0)
    document.add_paragraph("An overview of the parts of a cell.")
    document.add_heading("Mitochondria", level=1)
    document.add_paragraph(MITOCHONDRIA)
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {
        (0, 0): "organelle",
        (0, 1): "role",
        (1, 0): "mitochondrion",
        (1, 1): "energy",
    }.items():
        table.cell(r, c).text = text
    document.add_heading("The nucleus", level=2)
    document.add_paragraph(NUCLEUS)
    document.save(str(path))
    return path


def _slide_deck(path: Path) -> Path:
    deck = pptx.Presentation()
    for title, body, notes in [
        ("Mitochondria", MITOCHONDRIA, "Stress the inner membrane."),
        ("The nucleus", NUCLEUS, ""),
        ("Ribosomes", RIBOSOMES, ""),
    ]:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    blank = deck.slides.add_slide(deck.slide_layouts[6])  # no title placeholder: a loose text box
    blank.shapes.add_textbox(
        Inches(1), Inches(1), Inches(6), Inches(1)
    ).text_frame.text = "Questions and answers."
    deck.save(str(path))
    return path


def test_a_word_file_is_cut_at_its_headings(tmp_path: Path) -> None:
    # Given a .docx with a title, two headings and a table
    # When it is read
    sections, issues = _read(_word_file(tmp_path / "cells.docx"))
    # Then each heading opens a section titled by it, in order, tables included as text
    assert issues == []
    assert [s.title for s in sections] == ["Cell biology", "Mitochondria", "The nucleus"]
    assert MITOCHONDRIA in sections[1].text and "mitochondrion | energy" in sections[1].text
    assert sections[2].text == f"The nucleus\n{NUCLEUS}"
    assert all(s.page_start is None for s in sections)


def test_a_slide_deck_gives_a_section_per_slide_titled_by_the_slide(tmp_path: Path) -> None:
    # Given a .pptx of four slides (speaker notes on one, no title on the last)
    sections, issues = _read(_slide_deck(tmp_path / "cells.pptx"))
    # Then every slide is a section titled by its slide title, its number standing for the page
    assert issues == []
    assert [(s.title, s.page_start) for s in sections] == [
        ("Mitochondria", 1),
        ("The nucleus", 2),
        ("Ribosomes", 3),
        (None, 4),
    ]
    assert "Stress the inner membrane." in sections[0].text and sections[3].text == "Questions and answers."


def test_short_slides_share_a_quiz_named_for_the_slides_it_covers(tmp_path: Path) -> None:
    # With the packaged sizes, slides too short for a quiz share one, named by their numbers and titles
    sections, _ = _read(_slide_deck(tmp_path / "cells.pptx"), limits=BatchSettings(min_document_chars=20))
    assert [(s.title, s.page_start, s.page_end) for s in sections] == [
        ("Slides 1\u20134: Mitochondria, The nucleus, Ribosomes", 1, 4)
    ]


@pytest.mark.parametrize(
    ("name", "content", "detail"),
    [
        ("old.docx", b"\xd0\xcf\x11\xe0 an OLE2 .doc renamed", "not a zip package"),
        ("fake.pptx", None, "not a readable PowerPoint file"),
        ("fake.docx", None, "not a readable Word file"),
    ],
)
def test_an_office_file_that_cannot_be_opened_is_skipped_with_a_reason(
    tmp_path: Path, name: str, content: bytes | None, detail: str
) -> None:
    path = tmp_path / name
    if content is None:  # a real zip without the Office parts
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("hello.txt", "not an office document")
    else:
        path.write_bytes(content)
    sections, issues = _read(path)
    assert sections == []
    assert [(i.reason, i.skipped) for i in issues] == [("unreadable", True)] and detail in issues[0].detail


def _pdf(path: Path, pages: list[list[tuple[str, str, int | None]]], *, running_header: str = "") -> Path:
    """A PDF of pages, each a list of (heading, text, outline level or None for no bookmark)."""
    pdf = FPDF()
    for blocks in pages:
        pdf.add_page()
        if running_header:
            pdf.set_font("Helvetica", size=9)
            pdf.cell(text=running_header, new_x="LMARGIN", new_y="NEXT")
        for heading, text, level in blocks:
            if heading:
                if level is not None:
                    pdf.start_section(heading, level=level)
                pdf.set_font("Helvetica", "B", size=14)
                pdf.cell(text=heading, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", size=11)
            pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def test_a_pdf_with_bookmarks_is_cut_at_them_even_mid_page(tmp_path: Path) -> None:
    # Given a PDF whose outline points at three chapters, two of them on the same page
    path = _pdf(
        tmp_path / "outlined.pdf",
        [
            [("Chapter 1: Mitochondria", MITOCHONDRIA * 3, 0)],
            [("Chapter 2: The nucleus", NUCLEUS * 2, 0), ("Chapter 3: Ribosomes", RIBOSOMES * 2, 0)],
        ],
    )
    # When it is read
    sections, issues = _read(path)
    # Then each bookmark opens a section titled by it, with its pages; text is split where it begins
    assert issues == []
    assert [(s.title, s.page_start, s.page_end) for s in sections] == [
        ("Chapter 1: Mitochondria", 1, 1),
        ("Chapter 2: The nucleus", 2, 2),
        ("Chapter 3: Ribosomes", 2, 2),
    ]
    assert "Ribosomes translate" not in sections[1].text and sections[2].text.startswith("Chapter 3")


def test_a_pdf_without_bookmarks_is_cut_at_headings_in_its_text(tmp_path: Path) -> None:
    # Given lecture notes with numbered headings, no outline, and a running header on every page
    path = _pdf(
        tmp_path / "notes.pdf",
        [
            [("1. Mitochondria", MITOCHONDRIA * 3, None), ("2. The nucleus", NUCLEUS * 2, None)],
            [("3. Ribosomes", RIBOSOMES * 3, None)],
        ],
        running_header="BIO 101 lecture notes",
    )
    sections, _ = _read(path)
    # Then the headings name the sections and the running header names none
    assert [s.title for s in sections] == ["1. Mitochondria", "2. The nucleus", "3. Ribosomes"]


def test_the_sample_pdf_gets_its_numbered_headings_as_titles() -> None:
    sections, _ = _read(
        Path(__file__).parents[3] / "examples" / "plate_tectonics.pdf", limits=BatchSettings()
    )
    assert [s.title for s in sections] == [
        "1\u20132 From continental drift to plate tectonics, The layers of the Earth",
        "3\u20134 Divergent boundaries, Convergent boundaries",
        "5\u20137 Transform boundaries, What drives the plates, Evidence and measurement today",
    ]


def test_a_pdf_with_no_headings_is_cut_at_pages_titled_by_them(tmp_path: Path) -> None:
    # Given pages of running text only
    body = "the cell is the unit of life and every organism is made of cells, " * 30
    path = _pdf(tmp_path / "plain.pdf", [[("", body, None)] for _ in range(4)])
    sections, _ = _read(path, limits=BatchSettings(section_min_chars=3000))
    # Then sections are page pairs, named by their pages
    assert [s.title for s in sections] == ["Pages 1-2", "Pages 3-4"]


def test_structured_units_prefer_the_outline_and_fall_back_to_the_page_top() -> None:
    pages = [(1, "Intro line\nMore text."), (2, "No such title here.\nText.")]
    units = list(structured_units(pages, [Mark(1, "Intro line"), Mark(2, "Missing title")]))
    assert [(u.page, u.title, u.breaks) for u in units] == [
        (1, "Intro line", True),
        (2, "Missing title", True),
    ]


@pytest.mark.parametrize("maker", [_word_file, _slide_deck])
def test_document_text_reads_office_files_like_a_batch(tmp_path: Path, maker: object) -> None:
    path = maker(tmp_path / ("doc.docx" if maker is _word_file else "doc.pptx"))  # type: ignore[operator]
    assert MITOCHONDRIA in document_text(path, BatchSettings())


def test_document_text_refuses_what_a_batch_would_skip(tmp_path: Path) -> None:
    bad = tmp_path / "notes.epub"
    bad.write_bytes(b"PK not really")
    with pytest.raises(UnreadableDocument, match="unsupported"):
        document_text(bad, BatchSettings())


def test_a_folder_lists_every_file_it_does_not_quiz(tmp_path: Path) -> None:
    # Given a course folder with a Word file, a deck, and an e-book suture cannot read
    _word_file(tmp_path / "a.docx")
    _slide_deck(tmp_path / "b.pptx")
    (tmp_path / "c.epub").write_bytes(b"PK\x03\x04 epub")
    (tmp_path / ".hidden.md").write_text("# Hidden\n\nnot a course document")
    sections, issues = _read(tmp_path)
    # Then both Office files are quizzed in name order, and the other file is listed as skipped
    assert [Path(s.source).name for s in sections][:1] == ["a.docx"] and Path(
        sections[-1].source
    ).name == "b.pptx"
    assert [(Path(i.source).name, i.reason) for i in issues] == [("c.epub", "unsupported")]
