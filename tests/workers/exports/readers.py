"""Independent readers for every export format, none of them sharing code with the writers.

* GIFT: ``gift-pegjs`` (the PEG grammar of the GIFT format that Moodle's tooling uses), installed
  from the npm registry with npm into a cache folder on first use, run with node.
* QTI 1.2: the IMS QTI 1.2.1 ASI DTD (``ims_qtiasiv1p2p1.dtd``), taken from the PyPI sdist of
  pyslet (no package ships the XSD), downloaded with pip into the cache folder; validated with lxml.
* Moodle XML and QTI 2.1: no package ships their schemas, so lxml parses them and checks their
  structure against the published format descriptions (Moodle's "Moodle XML format" page, IMS QTI
  2.1 and IMS Content Packaging 1.1), written here from those documents.
* Aiken: a reader written from Moodle's "Aiken format" page. CSV: the csv module. HTML: lxml.html.

A reader that cannot be installed fails the test with the reason; nothing is skipped.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from lxml import etree, html

GIFT_PEGJS = "gift-pegjs@1.0.2"
PYSLET = "pyslet==0.7.20170805"
DTD_MEMBER = "pyslet-0.7.20170805/unittests/data_imsqtiv1p2p1/ims_qtiasiv1p2p1.dtd"
SAFE_XML = etree.XMLParser(no_network=True, resolve_entities=False)
_NODE_PARSE = (
    "const {parse}=require('gift-pegjs');let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{"
    "try{process.stdout.write(JSON.stringify(parse(s)))}catch(e){console.error(e.message);process.exit(2)}})"
)


def cache_dir() -> Path:
    """Where installed readers are kept between runs ($SUTURE_TEST_CACHE, else ~/.cache/suture-tests)."""
    root = Path(os.environ.get("SUTURE_TEST_CACHE") or Path.home() / ".cache" / "suture-tests")
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def _locked(name: str) -> Iterator[Path]:
    """One installer at a time (other test runs on this machine share the cache)."""
    folder = cache_dir() / name
    folder.mkdir(exist_ok=True)
    with (cache_dir() / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder


def _gift_folder() -> Path:
    with _locked("npm-gift") as folder:
        if not (folder / "node_modules" / "gift-pegjs" / "package.json").is_file():
            npm = shutil.which("npm")
            if npm is None or shutil.which("node") is None:
                pytest.fail("the GIFT reader needs node and npm (Debian: apt-get install nodejs npm)")
            run = subprocess.run(
                [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(folder), GIFT_PEGJS],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if run.returncode != 0:
                pytest.fail(f"npm could not install {GIFT_PEGJS}: {run.stderr.strip()[-500:]}")
        return folder


def parse_gift(text: str) -> list[dict[str, Any]]:
    """GIFT text parsed by gift-pegjs: a list of items (Category, MC, TF...); ValueError if it rejects it."""
    node = shutil.which("node")
    assert node is not None
    run = subprocess.run(
        [node, "-e", _NODE_PARSE],
        input=text,
        capture_output=True,
        text=True,
        cwd=_gift_folder(),
        timeout=60,
        check=False,
    )
    if run.returncode != 0:
        raise ValueError(run.stderr.strip())
    parsed: list[dict[str, Any]] = json.loads(run.stdout)
    return parsed


def qti12_dtd() -> etree.DTD:
    """The IMS QTI 1.2.1 ASI DTD, from the pyslet sdist on PyPI."""
    with _locked("qti12") as folder:
        dtd = folder / "ims_qtiasiv1p2p1.dtd"
        if not dtd.is_file():
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    PYSLET,
                    "-d",
                    str(folder),
                    "-q",
                ],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            archives = list(folder.glob("pyslet-*.tar.gz"))
            if run.returncode != 0 or not archives:
                pytest.fail(
                    f"pip could not download {PYSLET} for the QTI 1.2 DTD: {run.stderr.strip()[-500:]}"
                )
            with tarfile.open(archives[0]) as archive:
                member = archive.extractfile(DTD_MEMBER)
                assert member is not None, f"{DTD_MEMBER} is not in {archives[0].name}"
                dtd.write_bytes(member.read())
        return etree.DTD(str(dtd))


def validate_qti12(document: bytes) -> etree._Element:
    """Parse a QTI 1.2 document and validate it against the DTD (which knows no namespaces)."""
    root = etree.fromstring(document, SAFE_XML)
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.startswith("{"):
            element.tag = element.tag.split("}", 1)[1]
    etree.cleanup_namespaces(root)
    dtd = qti12_dtd()
    assert dtd.validate(root), dtd.error_log.filter_from_errors()
    return root


def read_zip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        return {name: archive.read(name) for name in archive.namelist()}


def manifest_resources(files: dict[str, bytes], namespace: str) -> list[etree._Element]:
    """The resources of imsmanifest.xml, each of whose files is in the zip (IMS Content Packaging)."""
    manifest = etree.fromstring(files["imsmanifest.xml"], SAFE_XML)
    assert manifest.tag == f"{{{namespace}}}manifest" and manifest.get("identifier")
    resources = manifest.findall(f"{{{namespace}}}resources/{{{namespace}}}resource")
    identifiers = {r.get("identifier") for r in resources}
    for resource in resources:
        for file in resource.findall(f"{{{namespace}}}file"):
            assert file.get("href") in files, f"{file.get('href')} is listed but not in the zip"
        for dependency in resource.findall(f"{{{namespace}}}dependency"):
            assert dependency.get("identifierref") in identifiers
    return resources


MOODLE_GRADES = {
    100,
    90,
    83.33333,
    80,
    75,
    70,
    66.66667,
    60,
    50,
    40,
    33.33333,
    30,
    25,
    20,
    16.66667,
    14.28571,
    12.5,
    11.11111,
    10,
    5,
    0,
}


def read_moodle(document: bytes) -> list[dict[str, Any]]:
    """Moodle XML read as Moodle's importer reads it: categories, then questions under the last one."""
    assert document.startswith(b"<?xml")
    root = etree.fromstring(document, SAFE_XML)
    assert root.tag == "quiz"
    category, questions = None, []
    for element in root.iterchildren("question"):
        kind = element.get("type")
        if kind == "category":
            category = element.findtext("category/text")
            continue
        assert kind in ("multichoice", "truefalse"), kind
        text = element.find("questiontext")
        assert text is not None and text.get("format") == "html"
        answers = [
            (float(a.get("fraction")), html.fromstring(a.findtext("text")).text_content())
            for a in element.findall("answer")
        ]
        assert all(abs(grade) in MOODLE_GRADES for grade, _ in answers)
        single = element.findtext("single")
        if kind == "multichoice" and single == "true":
            assert sorted(g for g, _ in answers)[-1] == 100 and sum(g == 100 for g, _ in answers) == 1
        elif kind == "multichoice":
            assert abs(sum(g for g, _ in answers if g > 0) - 100) < 0.01
        questions.append(
            {
                "category": category,
                "type": kind,
                "single": single,
                "name": element.findtext("name/text"),
                "stem": html.fromstring(text.findtext("text")).text_content(),
                "answers": answers,
                "feedback": html.fromstring(element.findtext("generalfeedback/text")).text_content(),
            }
        )
    return questions


QTI21 = "http://www.imsglobal.org/xsd/imsqti_v2p1"


def read_qti21_item(document: bytes) -> dict[str, Any]:
    """An assessmentItem checked against QTI 2.1's rules for a choice item, and read."""
    q = f"{{{QTI21}}}"
    item = etree.fromstring(document, SAFE_XML)
    assert item.tag == f"{q}assessmentItem"
    assert item.get("identifier") and item.get("title") and item.get("adaptive") in ("true", "false")
    assert item.get("timeDependent") in ("true", "false")
    order = [child.tag.removeprefix(q) for child in item if isinstance(child.tag, str)]
    assert order == sorted(
        order,
        key=[
            "responseDeclaration",
            "outcomeDeclaration",
            "itemBody",
            "responseProcessing",
            "modalFeedback",
        ].index,
    )
    declaration = item.find(f"{q}responseDeclaration")
    assert declaration is not None and declaration.get("baseType") == "identifier"
    assert declaration.get("cardinality") in ("single", "multiple")
    interaction = item.find(f"{q}itemBody/{q}choiceInteraction")
    assert interaction is not None and interaction.get("responseIdentifier") == declaration.get("identifier")
    choices = {c.get("identifier"): c.text for c in interaction.findall(f"{q}simpleChoice")}
    correct = [v.text for v in declaration.findall(f"{q}correctResponse/{q}value")]
    assert correct and set(correct) <= set(choices)
    max_choices = int(interaction.get("maxChoices", "1"))
    assert (max_choices == 1) == (declaration.get("cardinality") == "single")
    outcomes = {o.get("identifier") for o in item.findall(f"{q}outcomeDeclaration")}
    for feedback in item.findall(f"{q}modalFeedback"):
        assert feedback.get("outcomeIdentifier") in outcomes and feedback.get("showHide") in ("show", "hide")
    return {
        "identifier": item.get("identifier"),
        "title": item.get("title"),
        "prompt": interaction.findtext(f"{q}prompt"),
        "choices": list(choices.values()),
        "correct": [choices[c] for c in correct],
        "cardinality": declaration.get("cardinality"),
        "feedback": " ".join(p.text or "" for p in item.iterfind(f"{q}modalFeedback/{q}p")),
    }


_AIKEN_OPTION = re.compile(r"^([A-Z])[.)] (.*)$")
_AIKEN_ANSWER = re.compile(r"^ANSWER: ([A-Z])$")


def read_aiken(text: str) -> list[dict[str, Any]]:
    """Aiken as Moodle's importer reads it: a question line, lettered options, ANSWER, a blank line."""
    questions = []
    for block in text.strip().split("\n\n"):
        lines = block.split("\n")
        options = [_AIKEN_OPTION.match(line) for line in lines[1:-1]]
        answer = _AIKEN_ANSWER.match(lines[-1])
        assert not _AIKEN_OPTION.match(lines[0]) and all(options) and answer, block
        letters = [m.group(1) for m in options if m]
        assert letters == [chr(ord("A") + i) for i in range(len(letters))] and answer.group(1) in letters
        questions.append(
            {"stem": lines[0], "options": [m.group(2) for m in options if m], "answer": answer.group(1)}
        )
    return questions


def read_csv(data: bytes) -> list[dict[str, str]]:
    assert data.startswith("\ufeff".encode())
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def read_html(data: bytes) -> html.HtmlElement:
    return html.document_fromstring(data)
