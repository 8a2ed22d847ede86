"""Plain data for one model call and its reply, shared by the engine (pure) and the client (I/O)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from suture.config.settings import ReasoningEffort
from suture.tasks.dispatch_order import PriorityClass

__all__ = ["ModelCall", "ModelReply", "ReasoningEffort", "Usage"]


class ModelCall(BaseModel):
    """One Chat Completions request with structured output, as the engine wants it sent."""

    model: str
    messages: list[dict[str, str]]  # [{"role": "system"|"user"|"assistant", "content": str}]
    schema_name: str  # e.g. "quiz" for a full attempt, "quiz_slice" for a surgical slice
    json_schema: dict[str, Any]  # strict JSON schema (object at the root)
    reasoning_effort: ReasoningEffort | None = None
    max_completion_tokens: int | None = None  # the ceiling of this call's reply (None: the client's)
    # The visible tokens the contract expects of the reply (``Contract.reply_tokens``): the client asks for
    # that x a margin + a reasoning allowance (``tasks.reply_size``), within the ceiling. None: the ceiling.
    expected_reply_tokens: int | None = None
    seed: int | None = None
    # Sent as OpenAI's ``prompt_cache_key``: the calls of one job share it (the job id), so the prefix
    # they have in common (instructions, document) is routed to one prompt cache. Not part of the
    # prompt: it never changes a fingerprint.
    cache_key: str | None = None
    # The job's class: an interactive call may take the share of a model's budget bulk calls leave
    # (``dispatch.interactive_budget_share``). Not part of the prompt either.
    priority: PriorityClass = "interactive"


class Usage(BaseModel):
    """Token counts of one call (or a sum of calls)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class ModelReply(BaseModel):
    """What came back from one call, after transport retries: text or refusal, and its costs.

    ``error`` is set (and ``text`` is None) when the call failed terminally at the transport
    layer (auth, bad request, retries exhausted); ``error_kind`` names which.
    """

    model: str
    text: str | None = None
    finish_reason: str | None = None
    refusal: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None  # None = unknown price, never silently 0
    latency_ms: float = 0.0
    transport_retries: int = 0
    # The max_completion_tokens of the reply returned, and 1 if a reply cut off by a smaller cap came before
    # it (sent again with the cap doubled; its tokens and cost are included above).
    max_completion_tokens: int | None = None
    cap_retries: int = 0
    # The max_completion_tokens of every request made for it, summed (what OpenAI counts against its TPM
    # beyond the prompt): the cap, or the cut request's cap plus the doubled one.
    asked_completion_tokens: int = 0
    # True when the endpoint declared itself a simulation (suture's simulator sends x-suture-simulated).
    simulated: bool = False
    # The OpenAI batch the call went through (None: sent online); priced at the Batch API's rate.
    batch_id: str | None = None
    error: str | None = None
    error_kind: Literal["auth", "bad_request", "unavailable", "not_found"] | None = None
