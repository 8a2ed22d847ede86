"""QTI 2.1 as a content package (Canvas New Quizzes, Blackboard): one item file per question, one test.

``imsmanifest.xml`` (IMS Content Packaging 1.1) lists every ``assessmentItem`` (type
``imsqti_item_xmlv2p1``) and one ``assessmentTest`` (``imsqti_test_xmlv2p1``) whose test part
holds one ``assessmentSection`` per bank, titled with the document and section. An item is a
``choiceInteraction``: ``single`` cardinality and one choice for a single answer or true/false,
``multiple`` cardinality and every right choice for multiple answers (scored all or nothing, as
the ``match_correct`` template does). The explanation and the source are a ``modalFeedback``
shown after every attempt (``FEEDBACK`` is set to ``general`` by the response processing).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from suture.workers.exports.bank import Bank, BankQuestion, Catalogue
from suture.workers.exports.feedback import SIMULATION_NOTICE, general_feedback
from suture.workers.exports.formats import ExportFormat, xml_bytes, zip_bytes

QTI_NS = "http://www.imsglobal.org/xsd/imsqti_v2p1"
CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"
TEST = "tests/banks.xml"


def render(catalogue: Catalogue) -> bytes:
    """The zip: manifest, the test, then one file per item."""
    files: dict[str, bytes] = {"imsmanifest.xml": _manifest(catalogue), TEST: xml_bytes(_test(catalogue))}
    for bank in catalogue.banks:
        for question in bank.questions:
            files[_href(question)] = xml_bytes(_item(bank, question))
    return zip_bytes(files)


def _href(question: BankQuestion) -> str:
    return f"items/{question.uid}.xml"


def _manifest(catalogue: Catalogue) -> bytes:
    manifest = ET.Element("manifest", identifier="suture_export", xmlns=CP_NS)
    ET.SubElement(ET.SubElement(manifest, "metadata"), "schema").text = "QTIv2.1 Package"
    ET.SubElement(manifest, "organizations")
    resources = ET.SubElement(manifest, "resources")
    test = ET.SubElement(resources, "resource", identifier="test", type="imsqti_test_xmlv2p1", href=TEST)
    ET.SubElement(test, "file", href=TEST)
    for bank in catalogue.banks:
        for question in bank.questions:
            ET.SubElement(test, "dependency", identifierref=question.uid)
            resource = ET.SubElement(
                resources,
                "resource",
                identifier=question.uid,
                type="imsqti_item_xmlv2p1",
                href=_href(question),
            )
            ET.SubElement(resource, "file", href=_href(question))
    return xml_bytes(manifest)


def _test(catalogue: Catalogue) -> ET.Element:
    test = ET.Element("assessmentTest", xmlns=QTI_NS, identifier="suture_banks", title="Question banks")
    if catalogue.simulated:
        test.append(ET.Comment(f" {SIMULATION_NOTICE} "))
    part = ET.SubElement(
        test, "testPart", identifier="banks", navigationMode="nonlinear", submissionMode="individual"
    )
    for bank in catalogue.banks:
        section = ET.SubElement(
            part, "assessmentSection", identifier=bank.uid, title=bank.name, visible="true"
        )
        for question in bank.questions:
            ET.SubElement(section, "assessmentItemRef", identifier=question.uid, href=f"../{_href(question)}")
    return test


def _item(bank: Bank, q: BankQuestion) -> ET.Element:
    title = f"{bank.name} Q{q.number:02d}"
    item = ET.Element(
        "assessmentItem", xmlns=QTI_NS, identifier=q.uid, title=title, adaptive="false", timeDependent="false"
    )
    choices = [f"{q.uid}_{i}" for i in range(len(q.options))]
    cardinality = "multiple" if q.kind == "multiple" else "single"
    declaration = ET.SubElement(
        item, "responseDeclaration", identifier="RESPONSE", cardinality=cardinality, baseType="identifier"
    )
    correct = ET.SubElement(declaration, "correctResponse")
    for i in q.correct:
        ET.SubElement(correct, "value").text = choices[i]
    _outcome(item, "SCORE", "float", "0")
    _outcome(item, "FEEDBACK", "identifier", None)
    body = ET.SubElement(item, "itemBody")
    interaction = ET.SubElement(
        body,
        "choiceInteraction",
        responseIdentifier="RESPONSE",
        shuffle="true",
        maxChoices="0" if q.kind == "multiple" else "1",
    )
    ET.SubElement(interaction, "prompt").text = q.stem
    for ident, option in zip(choices, q.options, strict=True):
        ET.SubElement(interaction, "simpleChoice", identifier=ident).text = option
    _processing(item)
    feedback = ET.SubElement(
        item, "modalFeedback", outcomeIdentifier="FEEDBACK", identifier="general", showHide="show"
    )
    for line in general_feedback(bank, q).splitlines():
        ET.SubElement(feedback, "p").text = line
    return item


def _outcome(item: ET.Element, name: str, base: str, default: str | None) -> None:
    outcome = ET.SubElement(item, "outcomeDeclaration", identifier=name, cardinality="single", baseType=base)
    if default is not None:
        ET.SubElement(ET.SubElement(outcome, "defaultValue"), "value").text = default


def _processing(item: ET.Element) -> None:
    """match_correct (1 if the response is the correct response, else 0), then show the feedback."""
    processing = ET.SubElement(item, "responseProcessing")
    condition = ET.SubElement(processing, "responseCondition")
    when = ET.SubElement(condition, "responseIf")
    match = ET.SubElement(when, "match")
    ET.SubElement(match, "variable", identifier="RESPONSE")
    ET.SubElement(match, "correct", identifier="RESPONSE")
    _set(when, "SCORE", "float", "1")
    _set(ET.SubElement(condition, "responseElse"), "SCORE", "float", "0")
    _set(processing, "FEEDBACK", "identifier", "general")


def _set(parent: ET.Element, name: str, base: str, value: str) -> None:
    setter = ET.SubElement(parent, "setOutcomeValue", identifier=name)
    ET.SubElement(setter, "baseValue", baseType=base).text = value


FORMAT = ExportFormat(
    name="qti21",
    description="QTI 2.1 content package (Canvas New Quizzes, Blackboard)",
    suffix=".zip",
    kinds=frozenset({"single", "multiple", "true_false"}),
    render=render,
)
