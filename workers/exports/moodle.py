"""Moodle XML: a category question per bank, then its questions, written with ElementTree.

Category paths are ``$course$/top/<document>/<section title>`` (Moodle creates what is missing on
import). Single answer: ``multichoice`` with ``single`` true and one answer at 100 %; multiple
answers: ``single`` false, each right answer an equal share and each wrong one -100 % (Moodle
keeps a question's grade at 0 or more); true/false: ``truefalse``. The explanation and the source
are the general feedback. Texts are HTML (escaped), as Moodle stores them; ``idnumber`` is stable
across exports of the same batch.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from suture.workers.exports.bank import Bank, BankQuestion, Catalogue
from suture.workers.exports.feedback import SIMULATION_NOTICE, general_feedback_html, paragraph
from suture.workers.exports.formats import ExportFormat, category_path, share_percent, xml_bytes


def render(catalogue: Catalogue) -> bytes:
    """The whole Moodle XML file."""
    quiz = ET.Element("quiz")
    quiz.append(ET.Comment(" Question banks exported by suture: one category per section of each document. "))
    if catalogue.simulated:
        quiz.append(ET.Comment(f" {SIMULATION_NOTICE} "))
    for bank in catalogue.banks:
        quiz.append(_category(bank))
        for question in bank.questions:
            quiz.append(_question(bank, question))
    return xml_bytes(quiz)


def _category(bank: Bank) -> ET.Element:
    element = ET.Element("question", type="category")
    _text(ET.SubElement(element, "category"), category_path(bank))
    where = f"{bank.document}, {bank.where()}"
    _text(
        ET.SubElement(element, "info", format="html"),
        paragraph(f"Questions on {bank.section_name} ({where})."),
    )
    return element


def _question(bank: Bank, q: BankQuestion) -> ET.Element:
    element = ET.Element("question", type="truefalse" if q.kind == "true_false" else "multichoice")
    _text(ET.SubElement(element, "name"), f"{bank.document_name} {bank.section} Q{q.number:02d}")
    _text(ET.SubElement(element, "questiontext", format="html"), paragraph(q.stem))
    _text(ET.SubElement(element, "generalfeedback", format="html"), general_feedback_html(bank, q))
    for tag, value in (("defaultgrade", "1"), ("penalty", "1" if q.kind == "true_false" else "0.3333333")):
        ET.SubElement(element, tag).text = value
    ET.SubElement(element, "hidden").text = "0"
    ET.SubElement(element, "idnumber").text = q.uid
    if q.kind == "true_false":
        for value, is_right in (("true", q.is_true), ("false", not q.is_true)):
            _answer(element, "100" if is_right else "0", value, html=False)
        return element
    ET.SubElement(element, "single").text = "false" if q.kind == "multiple" else "true"
    ET.SubElement(element, "shuffleanswers").text = "true"
    ET.SubElement(element, "answernumbering").text = "abc"
    right = share_percent(len(q.correct)) if q.kind == "multiple" else "100"
    wrong = "-100" if q.kind == "multiple" else "0"
    for i, option in enumerate(q.options):
        _answer(element, right if i in q.correct else wrong, paragraph(option), html=True)
    return element


def _answer(parent: ET.Element, fraction: str, text: str, *, html: bool) -> None:
    answer = ET.SubElement(
        parent, "answer", fraction=fraction, format="html" if html else "moodle_auto_format"
    )
    _text(answer, text)
    _text(ET.SubElement(answer, "feedback", format="html"), "")


def _text(parent: ET.Element, value: str) -> None:
    ET.SubElement(parent, "text").text = value


FORMAT = ExportFormat(
    name="moodle",
    description="Moodle XML",
    suffix=".xml",
    kinds=frozenset({"single", "multiple", "true_false"}),
    render=render,
)
