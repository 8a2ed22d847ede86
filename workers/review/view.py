"""What a review page shows, built from a job's result, its attempts and its source document (pure).

``build_view`` places every failure at the question it points into (``/questions/3/options`` is
question 3; a failure that points nowhere in particular is the quiz's), finds each source quote in
the document (``SourceText``: forgiving whitespace and typographic quotes) for the excerpt to
highlight, and lists, per question, the attempts that touched it: the version a surgical slice
sent and the one it received, applied or rolled back and why, and a full attempt's changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from suture.contracts.source import SourceText

EXCERPT_MARGIN_CHARS = 300
_QUESTION = re.compile(r"^/questions/(\d+)(?:/|$)")


@dataclass(frozen=True)
class Excerpt:
    """The source around a quote: text before, the quote as written, text after (all plain text)."""

    before: str
    quote: str
    after: str


@dataclass(frozen=True)
class Change:
    """One attempt's part in a question's history."""

    n: int
    mode: str
    model: str
    outcome: str
    status: str  # "written" (full), "applied", "rolled_back", "unparseable", ..., "changed"
    detail: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    why: list[dict[str, Any]] = field(default_factory=list)  # the failures that made surgery target it
    changed_fields: list[str] = field(default_factory=list)
    round: int = 0


@dataclass(frozen=True)
class QuestionView:
    """One question as the reader sees it, with its remaining failures and its history."""

    index: int
    question: dict[str, Any]
    failures: list[dict[str, Any]]
    excerpt: Excerpt | None
    history: list[Change]

    @property
    def repaired(self) -> bool:
        return any(c.status == "applied" or c.changed_fields for c in self.history if c.n > 1)

    @property
    def correct_index(self) -> int | None:
        value = self.question.get("correct_answer_index")
        return value if isinstance(value, int) else None

    @property
    def correct_indices(self) -> list[int]:
        """Every correct option: a multiple-answer question's ``correct_answer_indices``, else the one."""
        many = self.question.get("correct_answer_indices")
        if isinstance(many, list) and many:
            return [i for i in many if isinstance(i, int)]
        return [] if self.correct_index is None else [self.correct_index]


@dataclass(frozen=True)
class ReviewView:
    """A whole job as a page shows it."""

    job_id: str
    status: str
    reason: str
    title: str
    questions: list[QuestionView]
    quiz_failures: list[dict[str, Any]]
    attempts: int
    cost_usd: float | None
    simulated: bool
    reviewed: bool
    round: int
    source: dict[str, Any] | None = None

    @property
    def repaired(self) -> int:
        return sum(1 for q in self.questions if q.repaired)

    @property
    def failing(self) -> int:
        return sum(1 for q in self.questions if q.failures)


def question_index(pointer: str) -> int | None:
    """The question a JSON pointer points into (``/questions/3/options`` -> 3), else None."""
    found = _QUESTION.match(pointer or "")
    return int(found.group(1)) if found else None


def build_view(
    result: dict[str, Any],
    document: str | None,
    *,
    attempts: list[dict[str, Any]] | None = None,
    source: dict[str, Any] | None = None,
) -> ReviewView:
    """The page's view of a job result (``attempts``: the whole trace when it spans several rounds)."""
    raw = result.get("output")
    output: dict[str, Any] = raw if isinstance(raw, dict) else {}
    questions = [q for q in output.get("questions") or [] if isinstance(q, dict)]
    trace = attempts if attempts is not None else list(result.get("attempts") or [])
    failures = list(result.get("failures") or [])
    text = SourceText(document) if document else None
    views = [
        QuestionView(
            index=i,
            question=q,
            failures=[f for f in failures if question_index(str(f.get("pointer"))) == i],
            excerpt=_excerpt(text, q.get("source_quote")),
            history=question_history(trace, i),
        )
        for i, q in enumerate(questions)
    ]
    return ReviewView(
        job_id=str(result.get("job_id", "")),
        status=str(result.get("status", "")),
        reason=str(result.get("reason") or ""),
        title=str(output.get("title") or "(untitled quiz)"),
        questions=views,
        quiz_failures=[f for f in failures if question_index(str(f.get("pointer"))) is None],
        attempts=len(trace),
        cost_usd=result.get("cost_usd"),
        simulated=bool(result.get("simulated")),
        reviewed=bool(result.get("reviewed")),
        round=int(result.get("round") or 0),
        source=source,
    )


def question_history(attempts: list[dict[str, Any]], index: int) -> list[Change]:
    """Every attempt that wrote, replaced or tried to replace question ``index``, oldest first."""
    changes: list[Change] = []
    previous_failures: list[dict[str, Any]] = []
    for attempt in attempts:
        change = _change(attempt, index, previous_failures)
        if change is not None:
            changes.append(change)
        if attempt.get("outcome") not in ("transport_error", "unparseable", "refused"):
            previous_failures = list(attempt.get("failures") or [])
    return changes


def _change(attempt: dict[str, Any], index: int, previous: list[dict[str, Any]]) -> Change | None:
    common: dict[str, Any] = {
        "n": int(attempt.get("n") or 0),
        "mode": str(attempt.get("mode")),
        "model": str(attempt.get("model")),
        "outcome": str(attempt.get("outcome")),
        "round": int(attempt.get("round") or 0),
    }
    why = [f for f in previous if question_index(str(f.get("pointer"))) == index]
    if attempt.get("mode") == "surgical":
        for piece in attempt.get("slices") or []:
            if question_index(str(piece.get("pointer"))) == index:
                pointer = str(piece.get("pointer"))
                return Change(
                    **common,
                    status=str(piece.get("status")),
                    detail=piece.get("detail"),
                    before=_version(pointer, piece.get("sent")),
                    after=_version(pointer, piece.get("received")),
                    why=why,
                )
        return None
    fields = _patched_fields(attempt.get("patch") or [], index)
    if common["n"] == 1 or fields:
        status = "written" if common["n"] == 1 else ("fixed" if common["mode"] == "fix" else "changed")
        return Change(**common, status=status, changed_fields=fields, why=why if fields else [])
    return None


def _patched_fields(patch: list[dict[str, Any]], index: int) -> list[str]:
    prefix = f"/questions/{index}"
    fields = []
    for op in patch:
        path = str(op.get("path", ""))
        if path == prefix or path.startswith(prefix + "/"):
            fields.append(path[len(prefix) :].lstrip("/") or "(whole question)")
    return sorted(set(fields))


def _version(pointer: str, value: Any) -> dict[str, Any] | None:
    """A slice as the part of a question it is: the question itself, or ``{field: value}`` (an option
    list)."""
    if isinstance(value, dict) and set(value) == {"value"}:
        value = value["value"]
    tokens = pointer.strip("/").split("/")
    if len(tokens) == 3 and value is not None:
        return {tokens[2]: value}
    return _question(value)


def _question(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and set(value) == {"value"}:
        value = value["value"]
    return value if isinstance(value, dict) else None


def _excerpt(text: SourceText | None, quote: Any) -> Excerpt | None:
    if text is None or not isinstance(quote, str) or not quote.strip():
        return None
    span = text.find(quote)
    if span is None:
        return None
    start, end = span
    lo, hi = max(0, start - EXCERPT_MARGIN_CHARS), min(len(text.text), end + EXCERPT_MARGIN_CHARS)
    before = ("..." if lo > 0 else "") + text.text[lo:start]
    after = text.text[end:hi] + ("..." if hi < len(text.text) else "")
    return Excerpt(before, text.text[start:end], after)
