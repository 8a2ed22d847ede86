"""The quiz's settings: its rule thresholds and teaching knobs (``quiz``), and how a batch sizes quizzes.

``QuizRules`` is ``settings.quiz``: what a quiz job is judged by and asked for, stored complete with
every job (``suture.contracts.quiz_params``). ``AutoQuestions`` is ``batch.auto_questions``: how
``suture batch --questions auto`` (its default) turns a section's length into a question count.
Each key is documented in config/defaults.yaml.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

QuestionKind = Literal["single", "multiple", "true_false"]
QUESTION_KINDS: tuple[QuestionKind, ...] = get_args(QuestionKind)
Difficulty = Literal["easy", "medium", "hard"]
# The languages a quiz can be asked in (ISO 639-1), with "auto": the document's own, detected.
LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl")
MAX_AUDIENCE_CHARS = 200
_SINGLE: list[QuestionKind] = ["single"]


class QuizRules(BaseModel):
    """Thresholds of the quiz contract's semantic rules and its teaching knobs (config/defaults.yaml)."""

    model_config = ConfigDict(extra="forbid")

    options_per_question: int = Field(4, ge=2, le=10)
    # The correct option is "conspicuously longer" when it exceeds the longest distractor by this ratio.
    max_correct_length_ratio: float = Field(1.5, gt=1.0)
    # ...and is at least this many characters longer (keeps short options like "Yes"/"No" legal).
    min_correct_length_excess_chars: int = Field(12, ge=0)
    # No option position may hold more than this share of correct answers (quizzes of >= 4 questions).
    max_answer_position_share: float = Field(0.5, gt=0.0, le=1.0)
    min_questions_for_position_rule: int = Field(4, ge=1)
    forbid_all_none_of_the_above: bool = True
    require_question_mark: bool = True
    # Two stems sharing at least this share of their distinct words (Jaccard) are duplicates; 1.0 = same
    # words.
    duplicate_stem_similarity: float = Field(0.85, gt=0.0, le=1.0)
    forbid_duplicate_questions: bool = True
    # Give-aways (contracts/quiz_giveaways.py): the answer's words in the stem; a fill-in-the-blank answer
    # longer than this many words (0: no limit); a distractor that contains, is part of or nearly repeats
    # (this share of characters alike; 1.0: off) the correct option; a heading's number in a quote or stem;
    # more than this share of stems opening with the same words (1.0: off), in quizzes of enough questions.
    forbid_answer_in_stem: bool = True
    max_blank_answer_words: int = Field(3, ge=0)
    distractor_similarity: float = Field(0.85, gt=0.0, le=1.0)
    forbid_section_numbers: bool = True
    max_same_stem_opening_share: float = Field(0.5, gt=0.0, le=1.0)
    stem_opening_words: int = Field(3, ge=1)
    min_questions_for_opening_rule: int = Field(4, ge=1)
    # Teaching knobs: the kinds of question asked, the quiz's language, difficulty and audience.
    question_kinds: list[QuestionKind] = Field(default_factory=lambda: _SINGLE.copy(), min_length=1)
    language: str = "auto"
    difficulty: Difficulty | None = None
    audience: str | None = Field(None, max_length=MAX_AUDIENCE_CHARS)

    @model_validator(mode="after")
    def _room_for_multiple(self) -> QuizRules:
        if "multiple" in self.question_kinds and self.options_per_question < 3:
            raise ValueError("multiple-answer questions need options_per_question >= 3 (2 right, 1 wrong)")
        return self

    @field_validator("question_kinds")
    @classmethod
    def _distinct(cls, kinds: list[QuestionKind]) -> list[QuestionKind]:
        return list(dict.fromkeys(kinds))

    @field_validator("language")
    @classmethod
    def _known_language(cls, language: str) -> str:
        code = language.strip().lower()
        if code != "auto" and code not in LANGUAGES:
            raise ValueError(f"language must be auto or one of {', '.join(LANGUAGES)}, got {language!r}")
        return code

    @field_validator("audience")
    @classmethod
    def _one_line(cls, audience: str | None) -> str | None:
        text = " ".join((audience or "").split())
        return text or None


class AutoQuestions(BaseModel):
    """``--questions auto``: one question per ``chars_per_question`` of a section, within [min, max]."""

    model_config = ConfigDict(extra="forbid")

    min_questions: int = Field(3, ge=1)
    max_questions: int = Field(15, ge=1, le=100)
    chars_per_question: int = Field(300, ge=20)

    @model_validator(mode="after")
    def _ordered(self) -> AutoQuestions:
        if self.min_questions > self.max_questions:
            raise ValueError(f"min_questions {self.min_questions} exceeds max_questions {self.max_questions}")
        return self

    def count(self, section_chars: int) -> int | None:
        """Questions for a section of ``section_chars`` characters; None when it is too short for a quiz."""
        fits = section_chars // self.chars_per_question
        if fits < self.min_questions:
            return None
        return min(fits, self.max_questions)

    def shortest_chars(self) -> int:
        """The fewest characters a section needs for a quiz."""
        return self.min_questions * self.chars_per_question
