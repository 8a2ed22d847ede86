"""What a batch asks of each section's quiz: its question count, and the questions earlier sections asked.

``questions_for(section_chars, asked, auto)``: with ``--questions auto`` (batch's default, ``asked``
None) the count follows the section's length (``batch.auto_questions``); a section with room for
fewer than ``min_questions`` is not quizzed, and ``too_short`` says why in words.

``AskedSoFar`` keeps the question stems of the sections finished so far (bounded). Each new quiz's
stems are compared with them (``suture.contracts.similarity``, the quiz rule's threshold): the
repeats are reported; the most recent stems go into the next sections' prompts as questions not to
repeat (the quiz parameter ``avoid_questions``, advisory: not part of a job's identity).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from suture.config.settings import AutoQuestions, Settings
from suture.contracts.quiz_params import MAX_AVOIDED
from suture.contracts.registry import resolve_params
from suture.contracts.similarity import jaccard, words
from suture.workers.idempotency import ADVISORY_PARAMS

MAX_KEPT_STEMS = 5000  # stems compared against: a whole term's banks, bounded


def questions_for(section_chars: int, asked: int | None, auto: AutoQuestions) -> int | None:
    """The section's question count: ``asked``, or from its length (None: too short for a quiz)."""
    return asked if asked is not None else auto.count(section_chars)


def too_short(section_chars: int, auto: AutoQuestions) -> str:
    """Why a section gets no quiz, in words."""
    return (
        f"too short for a quiz: {section_chars:,} characters, {auto.shortest_chars():,} needed for "
        f"{auto.min_questions} questions (batch.auto_questions; or give --questions N)"
    )


class QuizAsk:
    """The quiz parameters of each section of one batch: count, the knobs, the questions to avoid."""

    def __init__(self, settings: Settings, questions: int | None, knobs: dict[str, Any]) -> None:
        self.settings, self.questions, self.knobs = settings, questions, dict(knobs)
        self.auto = settings.batch.auto_questions
        self.asked = AskedSoFar(settings.quiz.duplicate_stem_similarity)

    def count(self, section_chars: int) -> int | None:
        """The section's question count (None: too short for a quiz; ``too_short`` says why)."""
        return questions_for(section_chars, self.questions, self.auto)

    def params(self, questions: int) -> dict[str, Any]:
        """A section's complete contract parameters, with the latest questions of earlier sections to
        avoid."""
        given = {"questions": questions, **self.knobs, "avoid_questions": self.asked.avoid()}
        return resolve_params("quiz", given, self.settings)

    def why_not(self, section_chars: int) -> str:
        """Why a section of this length gets no quiz."""
        return too_short(section_chars, self.auto)

    def finished(self, source: dict[str, Any], output: Any) -> list[dict[str, Any]]:
        """Remember a delivered quiz's questions; returns those that repeat an earlier section's."""
        return self.asked.add(source, output)


def identity(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that make a job (its idempotency key): without the advisory ones."""
    return {k: v for k, v in params.items() if k not in ADVISORY_PARAMS}


class AskedSoFar:
    """The stems of finished quizzes, to find repeats across sections and to list in later prompts."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.kept: deque[tuple[dict[str, Any], int, str, frozenset[str]]] = deque(maxlen=MAX_KEPT_STEMS)

    def avoid(self) -> list[str]:
        """The most recent stems (at most ``MAX_AVOIDED``), oldest first."""
        return [stem for _, _, stem, _ in list(self.kept)[-MAX_AVOIDED:]]

    def add(self, source: dict[str, Any], quiz: Any) -> list[dict[str, Any]]:
        """Keep a finished quiz's stems; returns its questions that repeat an earlier section's."""
        questions = quiz.get("questions") if isinstance(quiz, dict) else None
        stems = [q.get("question") for q in questions or [] if isinstance(q, dict)]
        found = []
        for number, stem in enumerate(stems, start=1):
            if not isinstance(stem, str) or not words(stem):
                continue
            match = self._earlier(words(stem))
            if match is not None:
                (earlier, earlier_number, earlier_stem), similarity = match
                found.append(
                    {
                        "source": _where(source),
                        "question": number,
                        "stem": stem,
                        "repeats": _where(earlier) | {"question": earlier_number, "stem": earlier_stem},
                        "similarity": round(similarity, 3),
                    }
                )
        for number, stem in enumerate(stems, start=1):
            if isinstance(stem, str) and words(stem):
                self.kept.append((source, number, " ".join(stem.split()), words(stem)))
        return found

    def _earlier(self, current: frozenset[str]) -> tuple[tuple[dict[str, Any], int, str], float] | None:
        best = None
        for source, number, stem, kept in self.kept:
            similarity = jaccard(current, kept)
            if similarity >= self.threshold - 1e-9 and (best is None or similarity > best[1]):
                best = ((source, number, stem), similarity)
        return best


def _where(source: dict[str, Any]) -> dict[str, Any]:
    return {key: source.get(key) for key in ("file", "section", "title")}
