"""A test course (slides, bookmarked PDF, headed Word files, French text, Markdown) sectioned by its outline.

The documents are made here (python-pptx, fpdf2, python-docx) with the packaged section sizes, and the
sections' titles are checked as a teacher sees them: in ``--dry-run``, the review pages and the export
categories (GIFT's ``$CATEGORY``, from the title written into quizzes.jsonl).
"""

from __future__ import annotations

import json
from pathlib import Path

import docx
import pptx
from fpdf import FPDF
from odf.opendocument import OpenDocumentText
from odf.text import H, P

from suture.config.settings import BatchSettings
from suture.workers.documents import InputIssue, Section, iter_documents
from suture.workers.documents.section_titles import clean_title, joined_title
from suture.workers.exports import gift
from suture.workers.exports.bank import load_catalogue

LIMITS = BatchSettings()  # the packaged sizes: section_min_chars 1500, slide_min_chars 900
SENTENCE = "A tax equal to the marginal external cost makes the polluter pay for the harm it causes. "
FRENCH = "Le coût marginal croît avec la quantité produite jusqu'au point où l'entreprise s'arrête. "


def _sections(*paths: Path) -> list[Section]:
    items = list(iter_documents(paths, LIMITS))
    assert not [i for i in items if isinstance(i, InputIssue) and i.skipped]
    return [i for i in items if isinstance(i, Section)]


def _bookmarked_pdf(path: Path, *, cover: bool = False) -> Path:
    """Chapter 6: a long introduction, four bookmarked parts too short for a quiz each; a long chapter 7."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if cover:  # a title page with no bookmark: the outline starts on page 2
        pdf.add_page()
        pdf.multi_cell(0, 6, "Microeconomics, term 2. Lecture notes for the second half of the course.")
    pdf.add_page()
    for title, level, text in [
        ("6 Externalities", 0, SENTENCE * 20),
        ("6.1 Pigouvian taxes", 1, SENTENCE * 5),
        ("6.2 Subsidies", 1, SENTENCE * 5),
        ("6.3 Tradable permits", 1, SENTENCE * 5),
        ("6.4 The Coase theorem", 1, SENTENCE * 5),
        ("7 Public goods", 0, SENTENCE * 20),
    ]:
        pdf.start_section(title, level=level)
        pdf.set_font("Helvetica", "B", size=14)
        pdf.cell(text=title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def _deck(path: Path) -> Path:
    """Seven slides; 3-5 on supply shocks are too short for a quiz each, the others carry long speaker
    notes."""
    deck = pptx.Presentation()
    titles = [
        "Markets",
        "Demand",
        "Supply shocks",
        "Supply shocks (cont.)",
        "Supply shocks",
        "Elasticity",
        "Summary",
    ]
    for number, title in enumerate(titles, start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = f"Point {number} on {title.lower()}. " + SENTENCE * 3
        if number not in (3, 4, 5):
            slide.notes_slide.notes_text_frame.text = SENTENCE * 11
    deck.save(str(path))
    return path


def _word(path: Path, title: str, parts: list[tuple[str, int, str]]) -> Path:
    document = docx.Document()
    document.add_heading(title, level=0)
    for heading, level, text in parts:
        document.add_heading(heading, level=level)
        document.add_paragraph(text)
    document.save(str(path))
    return path


def test_a_bookmarked_pdf_gives_a_section_per_bookmark_and_joins_short_ones_under_their_chapter(
    tmp_path: Path,
) -> None:
    # Given a PDF whose chapter 6 has four bookmarked parts too short for a quiz each
    sections = _sections(_bookmarked_pdf(tmp_path / "externalities.pdf"))
    # Then the chapter's introduction, its parts (joined, named by their range and their chapter) and
    # chapter 7 are the sections
    assert [s.title for s in sections] == ["6 Externalities", "6.1\u20136.4 Externalities", "7 Public goods"]
    assert "6.1 Pigouvian taxes" in sections[1].text and "6.4 The Coase theorem" in sections[1].text


def test_a_pdf_whose_outline_starts_after_a_cover_page_is_never_named_by_its_pages(tmp_path: Path) -> None:
    sections = _sections(_bookmarked_pdf(tmp_path / "notes.pdf", cover=True))
    assert all(s.title and not s.title.startswith("Page") for s in sections)
    assert sections[0].page_start == 1 and "Microeconomics, term 2" in sections[0].text


def test_slides_are_one_section_each_and_short_ones_are_named_by_their_numbers(tmp_path: Path) -> None:
    sections = _sections(_deck(tmp_path / "supply.pptx"))
    assert [(s.title, s.page_start, s.page_end) for s in sections] == [
        ("Markets", 1, 1),
        ("Demand", 2, 2),
        ("Slides 3\u20135: Supply shocks", 3, 5),
        ("Elasticity", 6, 6),
        ("Summary", 7, 7),
    ]


def test_word_files_follow_their_headings_in_english_and_french(tmp_path: Path) -> None:
    # Given a headed .docx whose short subsections sit under one heading, and a French one
    english = _word(
        tmp_path / "market.docx",
        "Market failures",
        [
            ("Monopoly", 1, SENTENCE * 20),
            ("Information", 1, SENTENCE * 20),
            ("Adverse selection", 2, SENTENCE * 9),
            ("Moral hazard", 2, SENTENCE * 9),
        ],
    )
    french = _word(
        tmp_path / "cout.docx",
        "Coûts de production",
        [("Le coût marginal", 1, FRENCH * 20), ("Le coût moyen à long terme", 1, FRENCH * 20)],
    )
    sections = _sections(english, french)
    # Then the two short subsections are joined under their parent and named for all three headings
    assert [s.title for s in sections] == [
        "Monopoly",
        "Information",
        "Information: Adverse selection, Moral hazard",
        "Le coût marginal",
        "Le coût moyen à long terme",
    ]


def test_an_odt_follows_its_headings(tmp_path: Path) -> None:
    # Given a LibreOffice text: a title, a long part, and two short parts under one heading
    document = OpenDocumentText()
    for level, heading, text in [
        (1, "Coûts de production", FRENCH * 2),
        (2, "Le coût marginal", FRENCH * 20),
        (2, "Le coût fixe", FRENCH * 9),
        (2, "Le coût variable", FRENCH * 9),
    ]:
        document.text.addElement(H(outlinelevel=level, text=heading))
        document.text.addElement(P(text=text))
    path = tmp_path / "couts.odt"
    document.save(str(path))
    # Then its sections are its headings, the short ones joined and named under their parent
    assert [s.title for s in _sections(path)] == [
        "Le coût marginal",
        "Coûts de production: Le coût fixe, Le coût variable",
    ]


def test_markdown_titles_are_clean_text_and_become_the_export_categories(tmp_path: Path) -> None:
    # Given a Markdown chapter whose headings carry marks and a long heading
    long_heading = (
        "Why a **price ceiling** below the equilibrium creates shortages, queues and black "
        "markets in every market it touches"
    )
    chapter = tmp_path / "chapter.md"
    chapter.write_text(
        f"# [Price controls](http://example.org)\n\n{SENTENCE * 20}\n\n## {long_heading}\n\n{SENTENCE * 20}\n"
    )
    sections = _sections(chapter)
    titles = [s.title or "" for s in sections]
    assert titles[0] == "Price controls"
    assert "*" not in titles[1] and titles[1].endswith("\u2026") and len(titles[1]) <= 90
    assert long_heading.replace("**", "").startswith(titles[1].removesuffix("\u2026"))
    # When quizzes of these sections are exported, the categories are those titles
    out = tmp_path / "out"
    out.mkdir()
    question = {
        "question": "Who pays a Pigouvian tax?",
        "options": ["The polluter", "The state", "Neighbours", "Nobody"],
        "correct_answer_index": 0,
        "source_quote": "makes the polluter pay",
    }
    lines = [
        {
            "source": s.describe(),
            "job_id": f"j{s.index}",
            "status": "delivered",
            "quiz": {"questions": [question]},
        }
        for s in sections
    ]
    (out / "quizzes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    text = gift.render(load_catalogue(out)).decode()
    assert [line.split("/top/")[1] for line in text.splitlines() if line.startswith("$CATEGORY")] == [
        f"chapter/{title}" for title in titles
    ]


def test_titles_lose_markdown_marks_and_are_cut_at_a_word() -> None:
    assert clean_title("**Bold** and `code` and _em_ [link](http://x) ##") == "Bold and code and em link"
    assert clean_title("word " * 40, max_chars=30) == "word word word word word word\u2026"
    assert clean_title("  ") is None


def test_joined_titles_name_what_they_cover() -> None:
    assert joined_title(["6.1 Taxes", "6.4 Coase"], "6 Externalities", unit_name=None, pages=[]) == (
        "6.1\u20136.4 Externalities"
    )
    assert (
        joined_title(["Supply", None], None, unit_name="Slide", pages=[3, 4, 5]) == "Slides 3\u20135: Supply"
    )
    assert joined_title([None, "Intro"], None, unit_name=None, pages=[1, 2]) == "Intro"
    assert joined_title(["A", "B"], "Parent", unit_name=None, pages=[]) == "Parent: A, B"
