"""The quiz output shape as pydantic models (the schema half of the quiz contract).

A question is one of three kinds (``kind``; the job's ``question_kinds`` say which are asked):
``single`` (one correct option: ``correct_answer_index``/``correct_answer_text``), ``multiple``
(every correct option in ``correct_answer_indices``, which holds ``correct_answer_index`` too) and
``true_false`` (two options, true then false). ``correct_answer_indices`` is null for the other two
kinds. Both fields have defaults, so a quiz written before they existed still reads as single-answer
questions; the strict schema (``strict_schema``) lists them as required, as OpenAI's strict mode wants.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from suture.config.quiz_settings import QuestionKind


class Question(BaseModel):
    """One question, grounded in a verbatim quote of the source document."""

    model_config = ConfigDict(extra="forbid")

    kind: QuestionKind = Field(
        "single",
        description="single: one correct option; multiple: several correct options; true_false: True/False.",
    )
    question: str = Field(description="The question text, ending with a question mark.")
    options: list[str] = Field(description="The answer options, exactly as many as requested.")
    correct_answer_index: int = Field(
        description="Zero-based index of the correct option (multiple: one of the correct options)."
    )
    correct_answer_text: str = Field(description="The option at correct_answer_index, verbatim.")
    correct_answer_indices: list[int] | None = Field(
        None, description="multiple only: zero-based indices of every correct option; null otherwise."
    )
    explanation: str = Field(description="Why the correct answer is right, from the source.")
    source_quote: str = Field(description="A verbatim snippet of the source document.")


class Quiz(BaseModel):
    """A quiz: a title and its questions."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(description="A short title for the quiz.")
    questions: list[Question] = Field(description="The questions, exactly as many as requested.")
