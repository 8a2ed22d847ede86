"""`suture export` on a real batch's output: every format written by the CLI and read back independently."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

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

ROOT = Path(__file__).parents[3]
pytestmark = pytest.mark.integration


def suture(*args: str | Path, redis_url: str = "redis://127.0.0.1:1/0") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
    env |= {"REDIS_URL": redis_url, "SUTURE_SIMULATOR__LATENCY_SCALE": "0"}
    argv = [sys.executable, "-m", "suture", *map(str, args)]
    return subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=150, check=False)


@pytest.fixture(scope="module")
def batch(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    """A real batch of the sample PDF and a markdown chapter (4 questions a quiz); its question counts."""
    out = tmp_path_factory.mktemp("export") / "out"
    run = suture(
        "batch",
        ROOT / "examples" / "plate_tectonics.pdf",
        ROOT / "examples" / "photosynthesis.md",
        "--out",
        out,
        "--questions",
        "4",
        redis_url=redis_url,
    )
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in (out / "quizzes.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    return out, [len(line["quiz"]["questions"]) for line in lines]


def _export(out: Path, fmt: str) -> bytes:
    target = out.parent / f"banks-{fmt}"
    run = suture("export", out, "--format", fmt, "-o", target, "--include-soft")
    assert run.returncode == 0, run.stderr
    assert (
        run.stdout.startswith("SIMULATION") and f"wrote 6 banks, 24 questions ({fmt}): {target}" in run.stdout
    )
    return target.read_bytes()


def test_gift(batch: tuple[Path, list[int]]) -> None:
    items = parse_gift(_export(batch[0], "gift").decode())
    categories = [i["title"] for i in items if i["type"] == "Category"]
    assert categories[0] == (
        "$course$/top/plate_tectonics/1\u20132 From continental drift to plate tectonics, The layers of the "
        "Earth"
    )
    assert len(categories) == 6 and sum(i["type"] == "MC" for i in items) == 24
    assert all("Source: plate_tectonics.pdf, p" in i["globalFeedback"]["text"] for i in items[1:5])


def test_moodle(batch: tuple[Path, list[int]]) -> None:
    questions = read_moodle(_export(batch[0], "moodle"))
    assert len(questions) == 24 and len({q["category"] for q in questions}) == 6
    assert all(q["single"] == "true" and q["feedback"].count("Source: ") == 1 for q in questions)


def test_qti12(batch: tuple[Path, list[int]]) -> None:
    files = read_zip(_export(batch[0], "qti12"))
    resources = manifest_resources(files, "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1")
    assessments = [r for r in resources if r.get("type") == "imsqti_xmlv1p2"]
    counts = []
    for resource in assessments:
        root = validate_qti12(files[f"{resource.get('identifier')}/{resource.get('identifier')}.xml"])
        counts.append(len(list(root.iter("item"))))
    assert counts == batch[1]


def test_qti21(batch: tuple[Path, list[int]]) -> None:
    files = read_zip(_export(batch[0], "qti21"))
    resources = manifest_resources(files, "http://www.imsglobal.org/xsd/imscp_v1p1")
    items = {r.get("identifier"): r.get("href") for r in resources if r.get("type") == "imsqti_item_xmlv2p1"}
    test = etree.fromstring(files["tests/banks.xml"])
    sections = test.findall(f"{{{QTI21}}}testPart/{{{QTI21}}}assessmentSection")
    assert [len(s) for s in sections] == batch[1]
    for ref in (r for s in sections for r in s):
        assert read_qti21_item(files[items[ref.get("identifier")]])["correct"]


def test_aiken_csv_and_html(batch: tuple[Path, list[int]]) -> None:
    assert len(read_aiken(_export(batch[0], "aiken").decode())) == 24
    rows = read_csv(_export(batch[0], "csv"))
    assert len(rows) == 24 and rows[0]["source_pages"] == "p. 1" and rows[0]["simulated"] == "True"
    page = read_html(_export(batch[0], "html"))
    assert len(page.findall(".//section")) == 6 and len(page.findall(".//ol[@class='questions']/li")) == 24


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nowhere", "--format", "gift", "-o", "x.gift"], 2, "no quizzes.jsonl in nowhere"),
        (["OUT", "--format", "docx", "-o", "x"], 2, "invalid choice: 'docx'"),
        (["OUT", "--format", "gift"], 2, "the following arguments are required: -o/--output"),
    ],
)
def test_unusable_arguments_exit_2_with_one_line(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "quizzes.jsonl").write_text("")
    run = suture("export", *[str(tmp_path / "out") if a == "OUT" else a for a in args])
    assert run.returncode == code and message in run.stderr and "Traceback" not in run.stderr


def test_an_empty_batch_has_nothing_to_export_exit_1(tmp_path: Path) -> None:
    (tmp_path / "quizzes.jsonl").write_text("")
    run = suture("export", tmp_path, "--format", "csv", "-o", tmp_path / "x.csv")
    assert run.returncode == 1 and "nothing to export (the batch has no quiz)" in run.stderr
    assert not (tmp_path / "x.csv").exists()
