"""Every export format, read back by an independent reader: same banks, questions, answers and sources."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from suture.workers.exports import FORMATS, ExportError, export, load_catalogue
from tests.workers.exports.banks import LINES, NASTY_OPTION, NASTY_STEM, batch_output, line, question
from tests.workers.exports.readers import (
    QTI21,
    manifest_resources,
    parse_gift,
    read_aiken,
    read_csv,
    read_html,
    read_moodle,
    read_qti21_item,
    read_zip,
    validate_qti12,
)

STEM = " ".join(NASTY_STEM.split())  # every export writes a text on one line
CELLS = "$course$/top/cells/1. Cells // membranes: an intro"  # "/" in a name is doubled, as in Moodle


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return batch_output(tmp_path / "out")


def _export(out: Path, fmt: str, **flags: bool) -> bytes:
    target = out.parent / f"export.{fmt}"
    export(out, fmt, target, **flags)
    return target.read_bytes()


def test_gift_reads_back_with_its_categories_answers_and_feedback(out: Path) -> None:
    # Given a batch output with a question full of GIFT's special characters, and the GIFT export
    items = parse_gift(_export(out, "gift").decode())
    # Then gift-pegjs reads one category per bank and every question, unescaped as written
    assert [i["title"] for i in items if i["type"] == "Category"] == [CELLS, "$course$/top/slides/Ribosomes"]
    questions = [i for i in items if i["type"] != "Category"]
    assert [q["type"] for q in questions] == ["MC", "MC", "MC", "TF", "MC"]
    nasty = questions[0]
    assert html.unescape(nasty["stem"]["text"]) == STEM and nasty["stem"]["format"] == "html"
    first = nasty["choices"][0]
    assert first["isCorrect"] and html.unescape(first["text"]["text"]) == NASTY_OPTION
    feedback = html.unescape(nasty["globalFeedback"]["text"])
    assert f"Because {NASTY_OPTION} is what the notes say." in feedback
    assert f"Source: cells.pdf, pp. 3-4: \u201cThe notes say {NASTY_OPTION}.\u201d" in feedback
    # ...multiple answers carry weights (a share each for the right ones), true/false its truth
    assert [c["weight"] for c in questions[2]["choices"]] == [50, -100, 50, -100]
    assert questions[3]["isTrue"] is True
    assert "slides.pptx, slide 5" in questions[4]["globalFeedback"]["text"]


def test_a_gift_reader_rejects_what_is_not_escaped() -> None:
    # The reader is a real parser: an unescaped brace in a stem is an error (so the test above can fail)
    with pytest.raises(ValueError):
        parse_gift("::q:: Is {this} escaped? {=yes ~no}\n")


def test_moodle_xml_reads_back_as_categories_with_their_questions(out: Path) -> None:
    questions = read_moodle(_export(out, "moodle"))
    assert [q["category"] for q in questions] == [CELLS] * 4 + ["$course$/top/slides/Ribosomes"]
    nasty = questions[0]
    assert (
        nasty["stem"] == STEM and nasty["single"] == "true" and nasty["answers"][0] == (100.0, NASTY_OPTION)
    )
    assert "Source: cells.pdf, pp. 3-4" in nasty["feedback"] and "Because" in nasty["feedback"]
    assert questions[2]["single"] == "false" and [g for g, _ in questions[2]["answers"]] == [
        50,
        -100,
        50,
        -100,
    ]
    assert questions[3]["type"] == "truefalse" and questions[3]["answers"] == [
        (100.0, "true"),
        (0.0, "false"),
    ]


def test_qti12_zip_is_valid_against_the_ims_dtd_with_an_assessment_per_bank(out: Path) -> None:
    files = read_zip(_export(out, "qti12"))
    resources = manifest_resources(files, "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1")
    assessments = [r for r in resources if r.get("type") == "imsqti_xmlv1p2"]
    assert len(assessments) == 2
    read = []
    for resource in assessments:
        (href,) = [f.get("href") for f in resource if f.tag.endswith("file")]
        root = validate_qti12(files[href])
        assessment = root.find("assessment")
        assert assessment is not None
        for item in assessment.iter("item"):
            labels = {
                f.findtext("fieldlabel"): f.findtext("fieldentry") for f in item.iter("qtimetadatafield")
            }
            stem = item.findtext("presentation/material/mattext") or ""  # HTML, as Canvas stores it
            right = [v.text for v in item.iter("varequal") if v.getparent().tag != "not"]
            options = {
                lab.get("ident"): lab.findtext("material/mattext") for lab in item.iter("response_label")
            }
            feedback = item.findtext("itemfeedback/flow_mat/material/mattext") or ""
            read.append(
                (
                    assessment.get("title"),
                    labels["question_type"],
                    stem,
                    [options[r] for r in right],
                    feedback,
                )
            )
    assert [r[0] for r in read] == ["cells - 1. Cells / membranes: an intro"] * 4 + ["slides - Ribosomes"]
    kinds = [r[1] for r in read]
    assert kinds == ["multiple_choice_question"] * 2 + [
        "multiple_answers_question",
        "true_false_question",
    ] + ["multiple_choice_question"]
    assert read[0][2] == f"<p>{html.escape(STEM, quote=False)}</p>"
    assert read[2][3] == ["<p>Nucleus</p>", "<p>Ribosome</p>"]
    assert "Source: cells.pdf, pp. 3-4" in read[0][4]


def test_qti12_validation_is_real() -> None:
    # The DTD rejects an item without its required ident (so the test above can fail)
    bad = (
        b"<questestinterop><item "
        b'title="x"><presentation><material><mattext>t</mattext></material></presentation></item></questestinterop>'
    )
    with pytest.raises(AssertionError):
        validate_qti12(bad)


def test_qti21_package_has_a_section_per_bank_and_valid_choice_items(out: Path) -> None:
    files = read_zip(_export(out, "qti21"))
    resources = manifest_resources(files, "http://www.imsglobal.org/xsd/imscp_v1p1")
    items = {r.get("identifier"): r.get("href") for r in resources if r.get("type") == "imsqti_item_xmlv2p1"}
    (test,) = [r.get("href") for r in resources if r.get("type") == "imsqti_test_xmlv2p1"]
    from lxml import etree

    root = etree.fromstring(files[test])
    sections = root.findall(f"{{{QTI21}}}testPart/{{{QTI21}}}assessmentSection")
    assert [s.get("title") for s in sections] == [
        "cells - 1. Cells / membranes: an intro",
        "slides - Ribosomes",
    ]
    refs = [ref.get("identifier") for s in sections for ref in s]
    assert sorted(refs) == sorted(items)  # every item is in exactly one section
    read = [read_qti21_item(files[items[ref]]) for ref in refs]
    assert (
        read[0]["prompt"] == STEM
        and read[0]["correct"] == [NASTY_OPTION]
        and read[0]["cardinality"] == "single"
    )
    assert read[2]["cardinality"] == "multiple" and read[2]["correct"] == ["Nucleus", "Ribosome"]
    assert read[3]["choices"] == ["True", "False"] and read[3]["correct"] == ["True"]
    assert "Source: slides.pptx, slide 5" in read[4]["feedback"]


def test_aiken_carries_single_answers_only_and_says_what_it_left_out(out: Path) -> None:
    target = out.parent / "banks.txt"
    catalogue = export(out, "aiken", target)
    questions = read_aiken(target.read_text())
    # Then a stem is what students read (no bank name), marked only because the batch was simulated
    assert len(questions) == 4 and questions[0]["stem"] == f"[SIMULATED] {STEM}"
    first = questions[0]
    assert (
        first["options"][ord(first["answer"]) - ord("A")] == NASTY_OPTION
    )  # options shuffled, answer follows
    assert sorted(first["options"]) == sorted([NASTY_OPTION, "Plain option", "Tab here", "Last: one"])
    assert questions[2]["options"] == ["True", "False"]
    assert catalogue.left_out == {
        "soft-delivered quiz (add --include-soft)": 1,
        "multiple question (the format cannot carry it)": 1,
    }


def test_aiken_defuses_lines_that_would_read_as_format_lines(out: Path) -> None:
    lines = [
        line("a.md", 1, "A", None, [question("x", ["B) looks like an option", "ANSWER: B", "c", "d"], 0)])
    ]
    folder = batch_output(out.parent / "odd", lines)
    questions = read_aiken(_export(folder, "aiken").decode())
    assert sorted(questions[0]["options"]) == sorted(["B) looks like an option", "ANSWER: B", "c", "d"])
    assert questions[0]["options"][ord(questions[0]["answer"]) - ord("A")] == "B) looks like an option"


def test_csv_has_a_row_per_question_with_formulas_defused(out: Path) -> None:
    rows = read_csv(_export(out, "csv"))
    assert len(rows) == 5 and rows[0]["question"] == STEM
    right = rows[0]["correct"].lower()
    assert rows[0][f"option_{right}"] == "'" + NASTY_OPTION and rows[0]["correct_text"] == "'" + NASTY_OPTION
    chosen = {rows[2][f"option_{letter.lower()}"] for letter in rows[2]["correct"].split(";")}
    assert chosen == {"Nucleus", "Ribosome"} and rows[2]["kind"] == "multiple"
    assert rows[0]["source_pages"] == "pp. 3-4" and rows[4]["source_pages"] == "slide 5"
    assert rows[0]["bank"] == "cells - 1. Cells / membranes: an intro" and rows[0]["simulated"] == "True"


def test_html_copy_shows_every_question_its_answer_and_source_escaped(out: Path) -> None:
    page = read_html(_export(out, "html", include_soft=True))
    assert "SIMULATION" in page.findtext(".//p[@class='sim']")
    banks = page.findall(".//section")
    assert [b.findtext("h2") for b in banks] == [
        "cells - 1. Cells / membranes: an intro",
        "slides - Ribosomes",
        "notes - Section 1",
    ]
    first = banks[0].find("ol/li")
    assert first is not None and first.findtext("p") == STEM  # markup in the stem is text, not tags
    assert first.find("ol/li[@class='right']").text_content() == NASTY_OPTION
    assert "soft-delivered" in banks[2].findtext("p")


def test_soft_delivered_quizzes_only_when_asked(out: Path) -> None:
    assert len(load_catalogue(out).banks) == 2
    catalogue = load_catalogue(out, include_soft=True)
    assert [b.status for b in catalogue.banks] == ["delivered", "delivered", "soft_delivered"]


def test_only_accepted_keeps_quizzes_a_person_marked_accepted(out: Path) -> None:
    catalogue = load_catalogue(out, only_accepted=True)
    assert [b.document for b in catalogue.banks] == ["course/cells.pdf"]
    assert catalogue.left_out["quiz not marked accepted"] == 1


def test_a_broken_hand_edit_is_left_out_with_its_line_and_the_rest_exported(out: Path) -> None:
    broken = dict(
        LINES[1], quiz={"questions": [{"question": "no options?"}, question("Fine?", ["a", "b"], 1)]}
    )
    folder = batch_output(out.parent / "edited", [LINES[0], broken])
    with (folder / "quizzes.jsonl").open("a") as file:
        file.write("{not json\n")
    catalogue = load_catalogue(folder)
    assert catalogue.questions == 5
    assert catalogue.left_out == {"unreadable question": 1, "unreadable line": 1}
    assert catalogue.problems == [
        "line 2, question 1: options must be a list of at least two texts",
        "quizzes.jsonl line 3: not a JSON object",
    ]


def test_nothing_to_export_is_an_error_and_writes_no_file(tmp_path: Path) -> None:
    folder = batch_output(tmp_path / "soft", [LINES[2]])
    with pytest.raises(ExportError, match="nothing to export \\(1 soft-delivered quiz"):
        export(folder, "gift", tmp_path / "x.gift")
    assert not (tmp_path / "x.gift").exists()


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_same_batch_exports_the_same_bytes(out: Path, fmt: str) -> None:
    # Stable identifiers and timestamps: a re-export updates an LMS's questions rather than duplicating them
    assert _export(out, fmt) == _export(out, fmt)


def test_unshuffled_formats_spread_the_answers_and_csv_leaves_numbers_alone(tmp_path: Path) -> None:
    # Given 40 questions whose correct answer is always the first option, one of them a negative number
    questions = [question(f"Elasticity of good {i}?", ["-0.47", "+1.2", "0.8", "=1+1"], 0) for i in range(40)]
    folder = batch_output(tmp_path / "out", [line("econ.md", 1, "Elasticity", None, questions)])
    # When exported to the formats no LMS shuffles
    aiken = read_aiken(_export(folder, "aiken").decode())
    rows = read_csv(_export(folder, "csv"))
    page = read_html(_export(folder, "html"))
    # Then the correct answers are spread over the positions (seeded: the same export, the same order)
    for letters in (
        [q["answer"] for q in aiken],
        [r["correct"] for r in rows],
        [
            "ABCD"[[li.get("class") for li in item.findall("ol/li")].index("right")]
            for item in page.findall(".//section/ol/li")
        ],
    ):
        counts = {letter: letters.count(letter) for letter in "ABCD"}
        assert len(letters) == 40 and max(counts.values()) <= 20 and min(counts.values()) >= 3, counts
    # ...and the CSV's formula guard defuses the formula, never a number
    assert all(r["correct_text"] == "-0.47" for r in rows)
    assert {r[f"option_{c}"] for r in rows for c in "abcd"} == {"-0.47", "+1.2", "0.8", "'=1+1"}
