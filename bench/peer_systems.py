"""The systems ``bench.bench_peers`` compares, each run on one (seed, section) quiz: suture and its peers.

Every system is judged by suture's quiz contract (``quiz_validator``): Instructor through a pydantic
``model_validator`` on its response model, pydantic-ai through an ``output_validator`` on a
``NativeOutput`` (the model's JSON-schema mode), both raising with the contract's failure lines
(``- /questions/3: ... [imbalanced_options]``), which is how a user would wire a validator in. Their
first call sends the messages suture's first attempt sent (recorded per quiz), with the same schema
name, seed, reasoning effort and prompt-cache key, so it draws the same quiz at the same cost. Every
call's usage is recorded off the openai client (``CallLog``) and priced with suture's price table.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from instructor.core.exceptions import InstructorRetryException
from pydantic import BaseModel, create_model, model_validator
from pydantic_ai import Agent, ModelRetry, NativeOutput
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from suture.config.settings import Settings
from suture.contracts.quiz_model import Quiz
from suture.contracts.registry import build_contract
from suture.tasks.calls import ModelCall, ModelReply, Usage
from suture.tasks.prompts import failure_lines
from suture.workers.model.pricing import cost_usd

SCHEMA_NAME = "quiz"  # suture's first attempt names its schema so; the peers' models are named alike


@dataclass
class QuizRun:
    """What one system did for one quiz: validity, calls, sequential rounds, cost, wall time."""

    valid: bool = False
    calls: int = 0
    rounds: int = 0
    cost_usd: float = 0.0
    first_cost_usd: float = 0.0
    wall_s: float = 0.0
    first_messages: list[dict[str, Any]] = field(default_factory=list)


_CURRENT: contextvars.ContextVar[QuizRun] = contextvars.ContextVar("quiz_run")


def failure_text(source: str, params: dict[str, Any], settings: Settings, data: Any) -> str | None:
    """The contract's failure lines for ``data``, or None when the quiz is valid."""
    verdict = build_contract("quiz", params, settings, source=source).validate(data)
    failures = [f for f in verdict.failures if f.severity == "error"]
    return failure_lines(failures) if failures else None


def validated_model(source: str, params: dict[str, Any], settings: Settings) -> type[BaseModel]:
    """suture's quiz model, named ``quiz``, with a model_validator that applies the whole contract."""

    def check(cls: type[BaseModel], data: Any) -> Any:
        problems = failure_text(source, params, settings, data)
        if problems:
            raise ValueError(f"The quiz breaks its contract:\n{problems}")
        return data

    validator = model_validator(mode="before")(classmethod(check))  # type: ignore[arg-type]
    return create_model(SCHEMA_NAME, __base__=Quiz, __validators__={"contract": validator})


def plain_model() -> type[BaseModel]:
    """suture's quiz model named ``quiz`` (pydantic-ai checks the contract in its output validator)."""
    return create_model(SCHEMA_NAME, __base__=Quiz)


def record_usage(reply: Any, model: str, settings: Settings, messages: Sequence[dict[str, Any]]) -> None:
    """Add one chat completion's usage and cost to the quiz being run (its first call: the first cost)."""
    run = _CURRENT.get()
    usage = reply.usage
    details = getattr(usage, "prompt_tokens_details", None)
    reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", 0) or 0
    tokens = Usage(
        input_tokens=usage.prompt_tokens,
        cached_input_tokens=(getattr(details, "cached_tokens", 0) or 0),
        output_tokens=usage.completion_tokens,
        reasoning_tokens=reasoning,
    )
    cost = cost_usd(model, tokens, settings.prices) or 0.0
    if run.calls == 0:
        run.first_cost_usd = cost
        run.first_messages = [dict(m) for m in messages]
    run.calls += 1
    run.rounds += 1  # a peer's calls follow one another
    run.cost_usd += cost


def recording_create(create: Callable[..., Any], model: str, settings: Settings) -> Callable[..., Any]:
    """``chat.completions.create`` that records each reply's usage (sync client)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        reply = create(*args, **kwargs)
        record_usage(reply, model, settings, kwargs.get("messages") or [])
        return reply

    return wrapped


def recording_acreate(create: Callable[..., Any], model: str, settings: Settings) -> Callable[..., Any]:
    """``chat.completions.create`` that records each reply's usage (async client)."""

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        reply = await create(*args, **kwargs)
        record_usage(reply, model, settings, kwargs.get("messages") or [])
        return reply

    return wrapped


@dataclass(frozen=True)
class Quizlet:
    """One quiz to write: its seed, section, contract parameters and suture's first-attempt call."""

    key: str
    seed: int
    source: str
    params: dict[str, Any]
    first: ModelCall


def run_instructor(client: Any, quiz: Quizlet, max_retries: int, settings: Settings) -> QuizRun:
    """One quiz through Instructor (``from_openai(..., mode=Mode.JSON_SCHEMA)``), ``max_retries`` as given."""
    run = QuizRun()
    token = _CURRENT.set(run)
    started = time.perf_counter()
    try:
        client.chat.completions.create(
            model=quiz.first.model,
            response_model=validated_model(quiz.source, quiz.params, settings),
            messages=[dict(m) for m in quiz.first.messages],
            max_retries=max_retries,
            seed=quiz.seed,
            reasoning_effort=quiz.first.reasoning_effort,
            prompt_cache_key=f"instructor-{max_retries}-{quiz.key}",
        )
        run.valid = True
    except InstructorRetryException:  # the retries ran out: an invalid quiz
        run.valid = False
    finally:
        run.wall_s = time.perf_counter() - started
        _CURRENT.reset(token)
    return run


async def run_pydantic_ai(client: Any, quiz: Quizlet, retries: int, settings: Settings) -> QuizRun:
    """One quiz through a pydantic-ai Agent (``NativeOutput`` + ``output_validator``), ``retries`` as
    given."""
    run = QuizRun()
    _CURRENT.set(run)  # this task's own context
    started = time.perf_counter()
    agent, model_settings = pydantic_ai_agent(client, quiz, retries, settings)
    try:
        await agent.run(
            quiz.first.messages[1]["content"],
            model_settings={**model_settings, "openai_prompt_cache_key": f"pydantic-ai-{retries}-{quiz.key}"},
        )
        run.valid = True
    except UnexpectedModelBehavior:  # the output retries ran out: an invalid quiz
        run.valid = False
    finally:
        run.wall_s = time.perf_counter() - started
    return run


def pydantic_ai_agent(
    client: Any, quiz: Quizlet, retries: int, settings: Settings
) -> tuple[Any, dict[str, Any]]:
    """A pydantic-ai Agent for one quiz: suture's system prompt, ``NativeOutput`` and the contract as its
    ``output_validator``; with the model settings of suture's first attempt (seed, reasoning effort)."""
    model = OpenAIChatModel(quiz.first.model, provider=OpenAIProvider(openai_client=client))
    agent = Agent(
        model,
        output_type=NativeOutput(plain_model(), name=SCHEMA_NAME),
        system_prompt=quiz.first.messages[0]["content"],
        retries={"output": retries},
    )

    @agent.output_validator
    def contract(output: BaseModel) -> BaseModel:
        problems = failure_text(quiz.source, quiz.params, settings, output.model_dump(mode="json"))
        if problems:
            raise ModelRetry(f"The quiz breaks its contract:\n{problems}")
        return output

    model_settings: dict[str, Any] = {"seed": quiz.seed}
    if quiz.first.reasoning_effort:
        model_settings["openai_reasoning_effort"] = quiz.first.reasoning_effort
    return agent, model_settings


def suture_run(result: dict[str, Any], wall_s: float) -> QuizRun:
    """A suture job's result as a ``QuizRun``: a surgical attempt's slices are calls of one round."""
    attempts = [a for a in result.get("attempts") or [] if a.get("mode") in ("full", "surgical")]
    calls = sum(len(a.get("targets") or []) if a.get("mode") == "surgical" else 1 for a in attempts)
    return QuizRun(
        valid=result.get("status") == "delivered",
        calls=calls,
        rounds=len(attempts),
        cost_usd=float(result.get("cost_usd") or 0.0),
        first_cost_usd=float(attempts[0].get("cost_usd") or 0.0) if attempts else 0.0,
        wall_s=wall_s,
    )


def gather_limited(
    make: Callable[[Any], Sequence[Any]], client_factory: Callable[[], Any], limit: int
) -> list[Any]:
    """Run the coroutines ``make(client)`` returns, ``limit`` at a time, on one event loop; their results.

    The async client is made and closed inside the loop, so no connection outlives it.
    """

    async def main() -> list[Any]:
        gate = asyncio.Semaphore(limit)
        client = client_factory()

        async def one(coro: Any) -> Any:
            async with gate:
                return await coro

        try:
            return await asyncio.gather(*(one(c) for c in make(client)))
        finally:
            await client.close()

    return asyncio.run(main())


def first_call_recorder(
    caller: Callable[[ModelCall], ModelReply], sink: dict[str, ModelCall]
) -> Callable[..., Any]:
    """A model caller that remembers each job's first call (what the peers' first attempt sends)."""

    def call(model_call: ModelCall) -> ModelReply:
        sink.setdefault(model_call.cache_key or "", model_call)  # the cache key is the job id
        return caller(model_call)

    return call
