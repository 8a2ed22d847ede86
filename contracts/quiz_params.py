"""A quiz job's parameters: how many questions, and the rules they are judged by, over the settings.

``resolve_quiz_params(params, settings)`` is what ``QuizContract.resolve_params`` returns: complete,
checked and JSON-able, so a job stores them at enqueue and every worker judges it by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from suture.config.settings import QuizRules, Settings
from suture.contracts.errors import ContractParamsError

CONTRACT = "quiz"
DEFAULT_QUESTIONS = 15
MAX_QUESTIONS = 100  # a job's bound: far beyond it the reply outgrows a model's output limit
PARAMS = ("questions", "rules")


def resolve_quiz_params(params: Mapping[str, Any], settings: Settings | None) -> dict[str, Any]:
    """``{"questions": N, "rules": {...}}``: ``params`` over ``settings.quiz`` (else the packaged
    defaults); raises ``ContractParamsError`` naming the bad value."""
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise ContractParamsError(CONTRACT, unknown[0], params[unknown[0]], "unknown parameter", PARAMS)
    questions = params.get("questions")
    questions = DEFAULT_QUESTIONS if questions is None else questions
    if isinstance(questions, bool) or not isinstance(questions, int) or not 1 <= questions <= MAX_QUESTIONS:
        problem = f"must be a whole number from 1 to {MAX_QUESTIONS}"
        raise ContractParamsError(CONTRACT, "questions", questions, problem)
    return {"questions": questions, "rules": _rules(params.get("rules"), settings).model_dump()}


def _rules(given: Any, settings: Settings | None) -> QuizRules:
    """The settings' quiz rules (the packaged defaults without settings) with ``given`` on top."""
    base = (settings.quiz if settings is not None else QuizRules()).model_dump()
    if isinstance(given, QuizRules):
        given = given.model_dump()
    if given is not None and not isinstance(given, Mapping):
        raise ContractParamsError(CONTRACT, "rules", given, "must be a mapping of quiz rule names to values")
    try:
        return QuizRules.model_validate(base | dict(given or {}))
    except ValidationError as exc:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ContractParamsError(CONTRACT, "rules", given, problem, sorted(QuizRules.model_fields)) from None
