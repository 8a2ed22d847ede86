"""A simulated chat completion: the answer, its token counts and how long a real model would take."""

from __future__ import annotations

import json
import random
import secrets
import time
from dataclasses import dataclass
from typing import Any

from suture.workers.simulator.contractgen import write_generic_slice, write_output
from suture.workers.simulator.faults import Fault, spoil
from suture.workers.simulator.profiles import REASONING_FACTOR, Profile
from suture.workers.simulator.prompt import Prompt, read_prompt
from suture.workers.simulator.quizgen import write_quiz, write_slice
from suture.workers.simulator.reask import read_reask, write_reask
from suture.workers.simulator.request import ChatRequest
from suture.workers.simulator.schema_fill import fill
from suture.workers.simulator.stems import repair_text, whole_question_stem
from suture.workers.simulator.tokens import CHARS_PER_TOKEN, prompt_tokens, tokens


@dataclass(frozen=True)
class Completion:
    """What the simulated model answered and what it cost."""

    content: str | None
    refusal: str | None
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int  # includes reasoning tokens, as OpenAI counts them
    reasoning_tokens: int
    latency_s: float
    cached_tokens: int = 0  # the part of prompt_tokens served from the prompt cache


def answer(request: ChatRequest, profile: Profile, rng: random.Random) -> str:
    """The model's JSON text for a request: a quiz, a slice, or a schema-shaped placeholder."""
    prompt = read_prompt(request.messages, request.schema_name)
    traits = profile.traits(request.model)
    schema = request.json_schema or {"type": "object"}
    text_fix = repair_text(prompt, traits, rng, request.reasoning_effort) if prompt.is_slice else None
    if text_fix is not None and request.schema_name == "quiz_slice":
        value: Any = text_fix  # a stem or quote slice: its give-aways repaired (``stems``)
    elif prompt.is_slice and request.schema_name == "quiz_slice":
        value = write_slice(prompt, traits, profile, rng, request.reasoning_effort)
        value = whole_question_stem(value, prompt, traits, rng, request.reasoning_effort)
    elif prompt.is_slice:
        value = write_generic_slice(schema, prompt, traits, profile, rng, request.reasoning_effort)
    elif _wants_quiz(request, prompt) and (reask := read_reask(request.messages)) is not None:
        value = write_reask(prompt, reask, traits, profile, rng, request.reasoning_effort)
    elif _wants_quiz(request, prompt):
        value = write_quiz(prompt, traits, profile, rng)
    elif prompt.document.strip() and schema.get("properties"):
        value = write_output(schema, prompt, traits, profile, rng)  # any contract: from its schema
    else:
        value = fill(schema, rng)
    return json.dumps(value, ensure_ascii=False)


def complete(
    request: ChatRequest,
    text: str,
    fault: Fault | None,
    profile: Profile,
    latency_scale: float,
    rng: random.Random,
    *,
    cached_tokens: int = 0,
) -> Completion:
    """Apply faults, the token limit, token counts and latency to an answer.

    ``cached_tokens`` is what the prompt cache served of this prompt (see ``prompt_cache``).
    """
    content, refusal, finish = spoil(fault, text, rng)
    visible = tokens(content or refusal or "")
    reasoning = int(visible * REASONING_FACTOR[request.reasoning_effort])
    limit = request.max_completion_tokens
    if limit is not None and visible + reasoning > limit and content:
        # The budget runs out mid-answer: reasoning first, then as much text as is left.
        reasoning = min(reasoning, limit)
        content = content[: (limit - reasoning) * CHARS_PER_TOKEN]
        visible, finish = tokens(content), "length"
    traits = profile.traits(request.model)
    latency_ms = traits.time_to_first_token_ms + (visible + reasoning) * traits.per_output_token_ms
    if fault == "slow":
        latency_ms += profile.slow_extra_s * 1000
    prompt = prompt_tokens(request.messages)
    return Completion(
        content,
        refusal,
        finish,
        prompt,
        visible + reasoning,
        reasoning,
        latency_ms * latency_scale / 1000,
        min(cached_tokens, prompt),
    )


def body(request: ChatRequest, completion: Completion) -> dict[str, Any]:
    """The ``chat.completion`` object exactly as the OpenAI API shapes it."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": completion.content,
        "refusal": completion.refusal,
        "annotations": [],
    }
    return {
        "id": f"chatcmpl-sim-{secrets.token_hex(12)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "system_fingerprint": "suture-simulator",
        "service_tier": "default",
        "choices": [
            {"index": 0, "message": message, "finish_reason": completion.finish_reason, "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "total_tokens": completion.prompt_tokens + completion.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": completion.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": completion.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
    }


def _wants_quiz(request: ChatRequest, prompt: Prompt) -> bool:
    properties = (request.json_schema or {}).get("properties", {})
    return "questions" in properties or prompt.questions is not None
