"""The question banks every export writes: one bank per quiz (a section of a document), read from a batch.

``load_catalogue(out)`` reads ``quizzes.jsonl`` of a batch's output folder (lines as ``suture batch``
writes them: ``source``, ``job_id``, ``status``, ``quiz``, ``failures``) into ``Bank`` objects, in
the file's order (document order). What is left out is counted by reason, never silently:

* soft-delivered quizzes (they still fail a rule), unless ``include_soft``;
* with ``only_accepted``, quizzes whose line does not carry ``"accepted": true`` (the flag a
  person's review sets; the review step that writes it is a later change);
* questions of a kind the format cannot carry (e.g. multiple answers in Aiken);
* lines or questions that are not readable (a hand edit gone wrong), with the line number.

A question's ``kind`` is ``single`` (one correct option: the quiz contract today), ``multiple``
(several correct options, from ``correct_answer_indices``) or ``true_false`` (two options, true
first). A line without ``kind`` is ``single``, or ``multiple`` when its ``correct_answer_indices`` lists any.
Writers switch on ``kind``; a new kind is a new branch in each writer and an entry in ``KINDS``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

from suture.config.quiz_settings import QUESTION_KINDS, QuestionKind

Kind = QuestionKind
KINDS: tuple[Kind, ...] = QUESTION_KINDS
QUIZZES = "quizzes.jsonl"


class ExportError(Exception):
    """The export cannot be made (no quizzes.jsonl, nothing to export); str() is one line for the user."""


@dataclass(frozen=True)
class BankQuestion:
    """One question ready to write: stem, options, the correct ones, explanation and its source quote."""

    number: int  # 1-based within its bank
    kind: Kind
    stem: str
    options: tuple[str, ...]
    correct: tuple[int, ...]
    explanation: str
    source_quote: str
    uid: str  # stable across exports of the same job: LMSs can update rather than duplicate

    @property
    def is_true(self) -> bool:
        """For a true/false question: whether the statement is true (the first option is correct)."""
        return self.correct == (0,)

    def shuffled(self) -> BankQuestion:
        """The question with its options in a seeded order (its uid: the same export, the same order).

        For formats the LMS does not shuffle itself (Aiken, CSV, print): a model's answers bunch in
        the first positions. True/false keeps True before False.
        """
        if self.kind == "true_false" or len(self.options) < 2:
            return self
        order = list(range(len(self.options)))
        random.Random(hashlib.sha256(self.uid.encode()).digest()).shuffle(order)
        options = tuple(self.options[i] for i in order)
        correct = tuple(sorted(order.index(i) for i in self.correct))
        return replace(self, options=options, correct=correct)


@dataclass(frozen=True)
class Bank:
    """The questions of one quiz: one section of one document, named after both."""

    document: str
    section: int
    title: str | None
    pages: tuple[int, int] | None
    status: str
    job_id: str
    questions: tuple[BankQuestion, ...]

    @property
    def document_name(self) -> str:
        """The document's file name without folders or suffix, e.g. ``plate_tectonics``."""
        return PurePath(self.document).stem or self.document

    @property
    def section_name(self) -> str:
        """The section's title, or ``Section 3`` when it has none."""
        return " ".join((self.title or "").split()) or f"Section {self.section}"

    @property
    def name(self) -> str:
        """The bank's name: document and section title."""
        return f"{self.document_name} - {self.section_name}"

    @property
    def uid(self) -> str:
        """A stable identifier (an XML name) for the bank: its questions' shared prefix."""
        first = self.questions[0].uid if self.questions else self.job_id
        return "b" + hashlib.sha256(f"{first}|{self.document}|{self.section}".encode()).hexdigest()[:16]

    def where(self) -> str:
        """Where the quotes come from: ``p. 3``, ``pp. 3-4``, ``slide 2`` (a deck), or ``section 3``."""
        if self.pages is None:
            return f"section {self.section}"
        start, end = self.pages
        unit = "slide" if self.document.lower().endswith(".pptx") else "p."
        if start == end:
            return f"{unit} {start}"
        return f"slides {start}-{end}" if unit == "slide" else f"pp. {start}-{end}"

    def source_line(self, question: BankQuestion) -> str:
        """The source of a question in words: document, page(s) and the quote."""
        quote = one_line(question.source_quote)
        return f"Source: {PurePath(self.document).name}, {self.where()}: \u201c{quote}\u201d"


@dataclass
class Catalogue:
    """Every bank to export, what was left out (by reason), and whether a simulator wrote them."""

    banks: list[Bank] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    simulated: bool = False
    job_ids: set[str] = field(default_factory=set)

    @property
    def questions(self) -> int:
        return sum(len(bank.questions) for bank in self.banks)


def one_line(text: str) -> str:
    """Text with every run of whitespace (newlines too) made one space."""
    return " ".join(str(text).split())


def quizzes_file(out: Path) -> Path:
    """``OUT/quizzes.jsonl`` for an output folder, or the file itself."""
    path = out / QUIZZES if out.is_dir() else out
    if not path.is_file():
        raise ExportError(f"no {QUIZZES} in {out} (give the --out folder of `suture batch`)")
    return path


def load_catalogue(
    out: Path,
    *,
    include_soft: bool = False,
    only_accepted: bool = False,
    kinds: frozenset[str] = frozenset(KINDS),
) -> Catalogue:
    """The banks of a batch's output, filtered as asked; raises ``ExportError`` if there is no batch."""
    path = quizzes_file(out)
    catalogue = Catalogue(simulated=_simulated(path.parent))
    for number, record in _records(path, catalogue):
        status = record.get("status")
        if status == "soft_delivered" and not include_soft:
            catalogue.left_out["soft-delivered quiz (add --include-soft)"] += 1
        elif status not in ("delivered", "soft_delivered"):
            catalogue.left_out[f"quiz with status {status!r}"] += 1
        elif only_accepted and record.get("accepted") is not True:
            catalogue.left_out["quiz not marked accepted"] += 1
        else:
            bank = _bank(number, record, catalogue, kinds)
            if bank is not None:
                catalogue.banks.append(bank)
    return catalogue


def _simulated(folder: Path) -> bool:
    try:
        return bool(json.loads((folder / "report.json").read_text(encoding="utf-8")).get("simulated"))
    except (OSError, ValueError, AttributeError):
        return False


def _records(path: Path, catalogue: Catalogue) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict):
                catalogue.left_out["unreadable line"] += 1
                catalogue.problems.append(f"{path.name} line {number}: not a JSON object")
                continue
            yield number, record


def _bank(number: int, record: dict[str, Any], catalogue: Catalogue, kinds: frozenset[str]) -> Bank | None:
    source: dict[str, Any] = record["source"] if isinstance(record.get("source"), dict) else {}
    quiz: dict[str, Any] = record["quiz"] if isinstance(record.get("quiz"), dict) else {}
    raw_questions = quiz.get("questions") if isinstance(quiz.get("questions"), list) else None
    if raw_questions is None:
        catalogue.left_out["unreadable line"] += 1
        catalogue.problems.append(f"line {number}: no quiz with questions")
        return None
    job_id = str(record.get("job_id") or f"line-{number}")
    identity = (
        job_id if job_id not in catalogue.job_ids else f"{job_id}|line-{number}"
    )  # a line copied by hand
    catalogue.job_ids.add(job_id)
    questions: list[BankQuestion] = []
    for index, raw in enumerate(raw_questions):
        try:
            question = parse_question(raw, len(questions) + 1, f"{identity}|{index}")
        except ValueError as exc:
            catalogue.left_out["unreadable question"] += 1
            catalogue.problems.append(f"line {number}, question {index + 1}: {exc}")
            continue
        if question.kind not in kinds:
            catalogue.left_out[f"{question.kind} question (the format cannot carry it)"] += 1
            continue
        questions.append(question)
    return Bank(
        document=str(source.get("file") or "document"),
        section=_int(source.get("section"), number),
        title=source.get("title") if isinstance(source.get("title"), str) else None,
        pages=_pages(source.get("pages")),
        status=str(record.get("status")),
        job_id=job_id,
        questions=tuple(questions),
    )


def parse_question(raw: Any, number: int, identity: str) -> BankQuestion:
    """One question of a quiz line; ``ValueError`` says what is wrong with it."""
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    kind = raw.get("kind") or ("multiple" if raw.get("correct_answer_indices") else "single")
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    options = raw.get("options")
    if kind == "true_false" and options is None:
        options = ["True", "False"]
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
        raise ValueError("options must be a list of at least two texts")
    correct = _correct(raw, kind, len(options))
    stem = one_line(raw.get("question") or "")
    if not stem:
        raise ValueError("blank question")
    return BankQuestion(
        number=number,
        kind=kind,
        stem=stem,
        options=tuple(one_line(o) for o in options),
        correct=correct,
        explanation=one_line(raw.get("explanation") or ""),
        source_quote=one_line(raw.get("source_quote") or ""),
        uid="q" + hashlib.sha256(identity.encode()).hexdigest()[:16],
    )


def _correct(raw: dict[str, Any], kind: str, count: int) -> tuple[int, ...]:
    if kind == "true_false" and isinstance(raw.get("correct_answer"), bool):
        return (0,) if raw["correct_answer"] else (1,)
    found = raw.get("correct_answer_indices") if kind == "multiple" else [raw.get("correct_answer_index")]
    if not isinstance(found, list) or not found:
        raise ValueError("no correct answer")
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count for i in found):
        raise ValueError(f"correct answer index outside the {count} options")
    if kind == "true_false" and count != 2:
        raise ValueError("a true/false question has exactly two options")
    return tuple(sorted(set(found)))


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _pages(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (value[0], value[1])
    return None
