"""The quiz output shape as pydantic models (the schema half of the quiz contract)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Question(BaseModel):
    """One multiple-choice question, grounded in a verbatim quote of the source document."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question text, ending with a question mark.")
    options: list[str] = Field(description="The answer options, exactly as many as requested.")
    correct_answer_index: int = Field(description="Zero-based index of the correct option.")
    correct_answer_text: str = Field(description="The correct option, verbatim.")
    explanation: str = Field(description="Why the correct answer is right, from the source.")
    source_quote: str = Field(description="A verbatim snippet of the source document.")


class Quiz(BaseModel):
    """A quiz: a title and its questions."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(description="A short title for the quiz.")
    questions: list[Question] = Field(description="The questions, exactly as many as requested.")
