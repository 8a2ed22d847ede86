"""A quiz job's parameters: how many questions, and the rules they are judged by, over the settings.

``resolve_quiz_params(params, settings)`` is what ``QuizContract.resolve_params`` returns: complete,
checked and JSON-able, so a job stores them at enqueue and every worker judges it by them.

The teaching knobs (``question_kinds``, ``language``, ``difficulty``, ``audience``) are quiz rules
(``settings.quiz``); a job may give them inside ``rules`` or as parameters of their own, which win.
``avoid_questions`` lists questions already asked elsewhere (earlier sections of a batch): the prompt
asks not to repeat them. ``with_detected_language`` replaces ``language: auto`` by the source's
language at enqueue, so the job stores the language it was asked in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from suture.config.settings import QuizRules, Settings
from suture.contracts.errors import ContractParamsError
from suture.contracts.language import detect_language

CONTRACT = "quiz"
DEFAULT_QUESTIONS = 15
MAX_QUESTIONS = 100  # a job's bound: far beyond it the reply outgrows a model's output limit
KNOBS = ("question_kinds", "language", "difficulty", "audience")
PARAMS = ("questions", "rules", *KNOBS, "avoid_questions")
MAX_AVOIDED = 60  # questions listed as "do not repeat" (the most recent ones): bounded prompt growth
MAX_AVOIDED_CHARS = 300


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
    given = params.get("rules")
    knobs = {name: params[name] for name in KNOBS if name in params}
    if knobs:
        if given is not None and not isinstance(given, (Mapping, QuizRules)):
            raise ContractParamsError(
                CONTRACT, "rules", given, "must be a mapping of quiz rule names to values"
            )
        given = (given.model_dump() if isinstance(given, QuizRules) else dict(given or {})) | knobs
    resolved: dict[str, Any] = {"questions": questions, "rules": _rules(given, settings).model_dump()}
    avoid = _avoided(params.get("avoid_questions"))
    if avoid:
        resolved["avoid_questions"] = avoid
    return resolved


def with_detected_language(params: dict[str, Any], source: str) -> dict[str, Any]:
    """Resolved ``params`` with ``language: auto`` made the source's detected language (English if
    unclear)."""
    rules = params.get("rules")
    if not isinstance(rules, dict) or rules.get("language", "auto") != "auto":
        return params
    return params | {"rules": rules | {"language": detect_language(source) or "en"}}


def _avoided(given: Any) -> list[str]:
    if given is None:
        return []
    if not isinstance(given, list) or not all(isinstance(item, str) for item in given):
        raise ContractParamsError(CONTRACT, "avoid_questions", given, "must be a list of question texts")
    texts = [" ".join(item.split())[:MAX_AVOIDED_CHARS] for item in given]
    return [text for text in texts if text][-MAX_AVOIDED:]


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
