"""QTI 1.2 as Canvas Classic Quizzes imports it: a zip with a manifest and one assessment per bank.

Layout (as Canvas exports it, and text2qti writes it): ``imsmanifest.xml`` (IMS Content Packaging
1.1) lists, per bank, an ``imsqti_xmlv1p2`` resource ``<id>/<id>.xml`` (a ``questestinterop`` with
one ``assessment`` named after the bank, its questions in one section) depending on
``<id>/assessment_meta.xml`` (Canvas's quiz settings). Canvas makes a question bank of each
assessment it imports. Question types: ``multiple_choice_question`` (``rcardinality="Single"``),
``multiple_answers_question`` (``Multiple``; all right options and no wrong one scores) and
``true_false_question``. The explanation and the source are the general feedback (``general_fb``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from suture.workers.exports.bank import Bank, BankQuestion, Catalogue
from suture.workers.exports.feedback import SIMULATION_NOTICE, general_feedback_html, paragraph
from suture.workers.exports.formats import ExportFormat, xml_bytes, zip_bytes

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
CANVAS_NS = "http://canvas.instructure.com/xsd/cccv1p0"
_TYPES = {
    "single": "multiple_choice_question",
    "multiple": "multiple_answers_question",
    "true_false": "true_false_question",
}


def render(catalogue: Catalogue) -> bytes:
    """The zip: manifest first, then each bank's assessment and its Canvas settings."""
    files: dict[str, bytes] = {"imsmanifest.xml": _manifest(catalogue)}
    for bank in catalogue.banks:
        files[f"{bank.uid}/{bank.uid}.xml"] = xml_bytes(_assessment(bank, catalogue.simulated))
        files[f"{bank.uid}/assessment_meta.xml"] = xml_bytes(_meta(bank))
    return zip_bytes(files)


def _manifest(catalogue: Catalogue) -> bytes:
    manifest = ET.Element("manifest", identifier="suture_export", xmlns=CP_NS)
    metadata = ET.SubElement(manifest, "metadata")
    ET.SubElement(metadata, "schema").text = "IMS Content"
    ET.SubElement(metadata, "schemaversion").text = "1.1.3"
    ET.SubElement(manifest, "organizations")
    resources = ET.SubElement(manifest, "resources")
    for bank in catalogue.banks:
        resource = ET.SubElement(resources, "resource", identifier=bank.uid, type="imsqti_xmlv1p2")
        ET.SubElement(resource, "file", href=f"{bank.uid}/{bank.uid}.xml")
        ET.SubElement(resource, "dependency", identifierref=f"{bank.uid}_meta")
        meta = ET.SubElement(
            resources,
            "resource",
            identifier=f"{bank.uid}_meta",
            type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
            href=f"{bank.uid}/assessment_meta.xml",
        )
        ET.SubElement(meta, "file", href=f"{bank.uid}/assessment_meta.xml")
    return xml_bytes(manifest)


def _meta(bank: Bank) -> ET.Element:
    quiz = ET.Element("quiz", identifier=bank.uid, xmlns=CANVAS_NS)
    fields = {
        "title": bank.name,
        "description": paragraph(f"{bank.document}, {bank.where()}"),
        "shuffle_answers": "true",
        "quiz_type": "practice_quiz",
        "points_possible": str(len(bank.questions)),
        "available": "false",
    }
    for tag, value in fields.items():
        ET.SubElement(quiz, tag).text = value
    return quiz


def _assessment(bank: Bank, simulated: bool) -> ET.Element:
    root = ET.Element("questestinterop", xmlns=QTI_NS)
    if simulated:
        ET.SubElement(root, "qticomment").text = SIMULATION_NOTICE
    assessment = ET.SubElement(root, "assessment", ident=bank.uid, title=bank.name)
    _fields(assessment, {"cc_maxattempts": "1"})
    section = ET.SubElement(assessment, "section", ident="root_section")
    for question in bank.questions:
        section.append(_item(bank, question))
    return root


def _item(bank: Bank, q: BankQuestion) -> ET.Element:
    item = ET.Element("item", ident=q.uid, title=f"Q{q.number:02d}")
    choices = [f"{q.uid}_{i}" for i in range(len(q.options))]
    meta = ET.SubElement(item, "itemmetadata")
    _fields(
        meta,
        {"question_type": _TYPES[q.kind], "points_possible": "1", "original_answer_ids": ",".join(choices)},
    )
    presentation = ET.SubElement(item, "presentation")
    _material(presentation, paragraph(q.stem))
    cardinality = "Multiple" if q.kind == "multiple" else "Single"
    response = ET.SubElement(presentation, "response_lid", ident="response1", rcardinality=cardinality)
    render_choice = ET.SubElement(response, "render_choice")
    for ident, option in zip(choices, q.options, strict=True):
        _material(ET.SubElement(render_choice, "response_label", ident=ident), paragraph(option))
    _processing(item, q, choices)
    feedback = ET.SubElement(item, "itemfeedback", ident="general_fb")
    _material(ET.SubElement(feedback, "flow_mat"), general_feedback_html(bank, q))
    return item


def _processing(item: ET.Element, q: BankQuestion, choices: list[str]) -> None:
    processing = ET.SubElement(item, "resprocessing")
    outcomes = ET.SubElement(processing, "outcomes")
    ET.SubElement(outcomes, "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
    always = ET.SubElement(processing, "respcondition", attrib={"continue": "Yes"})
    ET.SubElement(ET.SubElement(always, "conditionvar"), "other")
    ET.SubElement(always, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")
    scored = ET.SubElement(processing, "respcondition", attrib={"continue": "No"})
    condition = ET.SubElement(scored, "conditionvar")
    if q.kind == "multiple":
        condition = ET.SubElement(condition, "and")
    for i, ident in enumerate(choices):
        if i in q.correct:
            ET.SubElement(condition, "varequal", respident="response1").text = ident
        elif q.kind == "multiple":
            ET.SubElement(ET.SubElement(condition, "not"), "varequal", respident="response1").text = ident
    ET.SubElement(scored, "setvar", action="Set", varname="SCORE").text = "100"


def _material(parent: ET.Element, html: str) -> None:
    ET.SubElement(ET.SubElement(parent, "material"), "mattext", texttype="text/html").text = html


def _fields(parent: ET.Element, fields: dict[str, str]) -> None:
    metadata = ET.SubElement(parent, "qtimetadata")
    for label, entry in fields.items():
        field = ET.SubElement(metadata, "qtimetadatafield")
        ET.SubElement(field, "fieldlabel").text = label
        ET.SubElement(field, "fieldentry").text = entry


FORMAT = ExportFormat(
    name="qti12",
    description="QTI 1.2 zip (Canvas Classic Quizzes)",
    suffix=".zip",
    kinds=frozenset({"single", "multiple", "true_false"}),
    render=render,
)
