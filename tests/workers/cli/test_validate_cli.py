"""``suture validate``: JSON verdict on stdout, exit 0/1/2, any bytes in FILE, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from suture.workers.cli import main
from tests.contracts.quizzes import changed, make_quiz, source_document, text

QUIZ = make_quiz(15)


@pytest.fixture(autouse=True)
def clean_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty directory so no ./suture.yaml or SUTURE_CONFIG changes the rules."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SUTURE_CONFIG", raising=False)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(["validate", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def _file(tmp_path: Path, content: bytes | str, name: str = "out.json") -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


def test_given_a_valid_quiz_when_validated_then_exit_0_and_valid_true(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, _file(tmp_path, text(QUIZ))) == (0, {"valid": True, "failures": []}, "")


@pytest.mark.parametrize(
    ("content", "kind", "code"),
    [
        (b"\xff\xfe\x00garbage", "parse", "invalid_utf8"),
        (text(QUIZ)[:200].encode(), "truncated", "truncated_json"),
        (b"[1, 2, 3]", "schema", "schema_model_type"),
        (b"", "empty", "empty_output"),
        (b"{}", "empty", "empty_output"),
        (b"not json at all", "parse", "invalid_json"),
        (b'{"title": NaN}', "parse", "non_finite_number"),
    ],
)
def test_given_any_bytes_when_validated_then_failures_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, kind: str, code: str
) -> None:
    exit_code, report, err = _run(capsys, _file(tmp_path, content))
    assert exit_code == 1 and err == ""
    assert report["valid"] is False
    assert [(f["kind"], f["code"]) for f in report["failures"]] == [(kind, code)]
    assert set(report["failures"][0]) == {"kind", "pointer", "code", "message"}


def test_given_questions_option_when_counts_differ_then_question_count_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, text(make_quiz(5)))
    assert _run(capsys, "--questions", "5", path)[0] == 0
    code, report, _ = _run(capsys, path)  # default 15
    assert code == 1 and report["failures"][0]["code"] == "question_count"


def test_given_a_source_document_when_validated_then_the_quote_rule_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, text(changed(QUIZ, 2, source_quote="Invented sentence.")))
    source = _file(tmp_path, source_document(15), "doc.txt")
    assert _run(capsys, path)[0] == 0
    code, report, _ = _run(capsys, "--source", source, path)
    assert code == 1
    assert report["failures"] == [
        {
            "kind": "rule",
            "pointer": "/questions/2/source_quote",
            "code": "quote_not_in_source",
            "message": report["failures"][0]["message"],
        }
    ]


def test_given_a_user_config_when_validated_then_its_thresholds_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = make_quiz(3, k=3)
    path = _file(tmp_path, text(quiz))
    assert _run(capsys, "--questions", "3", path)[0] == 1  # default 4 options
    (tmp_path / "suture.yaml").write_text("quiz:\n  options_per_question: 3\n")
    assert _run(capsys, "--questions", "3", path)[0] == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.json"], "file not found: missing.json"),
        (["--contract", "essay", "FILE"], "unknown contract 'essay'"),
        (["--questions", "0", "FILE"], "--questions must be at least 1"),
        (["--questions", "many", "FILE"], "--questions expects a whole number"),
        (["--source", "nowhere.txt", "FILE"], "file not found: nowhere.txt"),
        (["--source", "BADSOURCE", "FILE"], "cannot read the source document"),
        (["."], "is a directory"),
    ],
)
def test_given_unusable_input_when_validated_then_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    # A source is read as `suture batch` reads it (odd encodings decoded with a note), so an unusable
    # one is a binary file with a text name.
    good, bad_source = _file(tmp_path, text(QUIZ)), _file(tmp_path, b"\x00\x01binary\xff", "bad.txt")
    argv = [good if a == "FILE" else bad_source if a == "BADSOURCE" else a for a in argv]
    code, report, err = _run(capsys, *argv)
    assert (code, report) == (2, None)
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_given_the_installed_entry_point_when_run_on_garbage_then_json_and_no_traceback(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path, b"\x00\x01\x02{{{\xff")
    result = subprocess.run(
        [sys.executable, "-m", "suture", "validate", path],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["valid"] is False
    assert result.stderr == ""


def test_given_a_hand_made_duplicate_when_validated_then_invalid_at_the_later_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a quiz where a person copied question 4's stem into question 12
    quiz = changed(QUIZ, 11, question=QUIZ["questions"][3]["question"])
    # When it is validated, Then it is invalid and the failure points at the copy
    code, report, _ = _run(capsys, _file(tmp_path, text(quiz)))
    assert code == 1
    assert [(f["code"], f["pointer"]) for f in report["failures"]] == [
        ("duplicate_question", "/questions/11")
    ]


def test_given_a_pdf_source_when_validated_then_quotes_are_checked_against_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fpdf import FPDF

    # Given the source document as a two-page PDF, as a batch would have read it
    pdf = FPDF()
    lines = source_document(15).splitlines()
    for half in (lines[:8], lines[8:]):
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        pdf.multi_cell(0, 6, "\n".join(half))
    pdf.output(str(tmp_path / "doc.pdf"))
    good = _file(tmp_path, text(QUIZ))
    invented = _file(tmp_path, text(changed(QUIZ, 2, source_quote="Invented sentence.")), "bad.json")
    # When each quiz is validated against the PDF, Then real quotes pass and the invented one fails
    assert _run(capsys, "--source", str(tmp_path / "doc.pdf"), good)[0] == 0
    code, report, _ = _run(capsys, "--source", str(tmp_path / "doc.pdf"), invented)
    assert code == 1 and [f["code"] for f in report["failures"]] == ["quote_not_in_source"]


def test_a_hand_made_multiple_answer_quiz_is_judged_by_the_kinds_it_was_asked_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    question = {
        "kind": "multiple",
        "question": "Which of these are SI base units?",
        "options": ["The ampere", "The volt", "The kelvin", "The ohm"],
        "correct_answer_index": 0,
        "correct_answer_text": "The ampere",
        "correct_answer_indices": [0, 2],
        "explanation": "The passage names both.",
        "source_quote": "the SI base unit",
    }
    path = _file(tmp_path, json.dumps({"title": "Units", "questions": [question]}))
    code, verdict, _ = _run(capsys, "--questions", "1", path)
    assert code == 1 and [f["code"] for f in verdict["failures"]] == ["question_kind"]
    assert _run(capsys, "--questions", "1", "--kinds", "multiple", path)[0] == 0
    only_one = json.dumps({"title": "Units", "questions": [question | {"correct_answer_indices": [0]}]})
    code, verdict, _ = _run(
        capsys, "--questions", "1", "--kinds", "multiple", _file(tmp_path, only_one, "b.json")
    )
    assert code == 1 and [f["code"] for f in verdict["failures"]] == ["answer_set"]
