"""The HTTP face of the simulated model: OpenAI's Chat Completions, Models, Files and Batch endpoints on
aiohttp.

Every response says it is simulated (``x-suture-simulated: true``; models are owned by
"suture-simulator"). Answers come from a ``Responder`` (deterministic for seed, model, request
seed and prompt; chaos faults drawn per occurrence of a prompt; cached prompt tokens reported as
OpenAI's prompt caching does), the same one Batch API lines are answered by (``batch_api``).
Requests are metered by per-model RPM/TPM limits like the provider's (``limits``: 429 and
``x-ratelimit-*`` headers), at most ``max_in_flight`` are answered at once (more get 503), and
``GET /v1/_stats`` reports what was done (``stats``). One event loop serves everything: a slow
request is an ``asyncio.sleep``, never a thread. Idle connections are closed and slow bodies refused
(``connections``); a prompt is remembered only as a digest (``responder``).
"""

from __future__ import annotations

import asyncio
import hmac
import math
from collections.abc import Mapping
from pathlib import Path

from aiohttp import web

from suture.workers.simulator.batch_api import BatchApi
from suture.workers.simulator.batch_registry import BatchRegistry
from suture.workers.simulator.batch_runner import BatchRunner
from suture.workers.simulator.batches import BatchOptions
from suture.workers.simulator.completion import Completion, body
from suture.workers.simulator.connections import IDLE_TIMEOUT_S, READ_TIMEOUT_S, within
from suture.workers.simulator.errors import RequestRejected
from suture.workers.simulator.faults import Fault
from suture.workers.simulator.files import FileLimits, FileStore
from suture.workers.simulator.limits import RateLimit, RateLimiter
from suture.workers.simulator.profiles import Profile
from suture.workers.simulator.prompt_cache import PromptCache
from suture.workers.simulator.replies import SIMULATED_HEADERS
from suture.workers.simulator.replies import error_reply as _error
from suture.workers.simulator.replies import json_reply as _json
from suture.workers.simulator.request import ChatRequest, check_context, parse_request
from suture.workers.simulator.responder import Responder
from suture.workers.simulator.stats import ServerStats
from suture.workers.simulator.tokens import prompt_tokens

OWNER = "suture-simulator"
BANNER = (
    "suture simulator: a SIMULATED OpenAI-compatible model server for demos and tests, not a real model.\n"
)
MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_IN_FLIGHT = 10_000
__all__ = ["BANNER", "OWNER", "SIMULATED_HEADERS", "SimulatorServer"]


class SimulatorServer:
    """Request handlers bound to one simulated model (``Responder``), its limits, files and batches."""

    def __init__(
        self,
        profile: Profile,
        latency_scale: float,
        seed: int,
        api_key: str | None = None,
        prompt_cache: PromptCache | None = None,
        *,
        limits: Mapping[str, RateLimit] | None = None,
        batch_options: BatchOptions | None = None,
        file_limits: FileLimits | None = None,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        read_timeout_s: float = READ_TIMEOUT_S,
        context_tokens: Mapping[str, int] | None = None,
        batch_state_file: Path | None = None,
    ) -> None:
        # Each model's context window: the profile's, or the model table's where settings give one.
        windows = {m: t.context_tokens for m, t in profile.models.items()}
        self.context_tokens = windows | dict(context_tokens or {})
        cache = PromptCache() if prompt_cache is None else prompt_cache
        self.idle_timeout_s = idle_timeout_s
        self.read_timeout_s = read_timeout_s
        self.responder = Responder(profile, latency_scale, seed, cache)
        self._api_key = api_key
        self.models = tuple(profile.models)
        self.limiter = RateLimiter(limits)
        self.stats = ServerStats()
        self.max_in_flight = max_in_flight
        self.files = FileStore(file_limits)
        runner = BatchRunner(self.responder, self.files, self.models, batch_options or BatchOptions())
        self.batches = BatchRegistry(runner)
        self.batch_state_file = batch_state_file  # files and batches kept across restarts (None: in memory)

    @property
    def profile(self) -> Profile:
        """The behaviour profile answers are written with."""
        return self.responder.profile

    @property
    def latency_scale(self) -> float:
        """Multiplier of simulated latency (0 = instant); rate-limit windows and batch delays ignore it."""
        return self.responder.latency_scale

    @property
    def seed(self) -> int:
        """Seed of every simulated draw."""
        return self.responder.seed

    @property
    def prompt_cache(self) -> PromptCache:
        """The per-model prompt-prefix cache."""
        return self.responder.prompt_cache

    def __repr__(self) -> str:
        return (
            f"SimulatorServer(profile={self.profile.name!r}, latency_scale={self.latency_scale}, "
            f"seed={self.seed})"
        )

    def application(self) -> web.Application:
        """The aiohttp application serving ``/v1``."""
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_get("/", self.banner)
        app.router.add_get("/v1/models", self.list_models)
        app.router.add_get("/v1/models/{model}", self.get_model)
        app.router.add_post("/v1/chat/completions", self.chat_completions)
        app.router.add_get("/v1/_stats", self.get_stats)
        BatchApi(
            self.files,
            self.batches,
            self._check_key,
            read_timeout_s=self.read_timeout_s,
            state_file=self.batch_state_file,
        ).register(app)
        return app

    async def banner(self, request: web.Request) -> web.Response:
        """A plain-text notice that this server is a simulation."""
        return web.Response(text=BANNER, headers=SIMULATED_HEADERS)

    async def list_models(self, request: web.Request) -> web.Response:
        """``GET /v1/models``: the simulated models, labelled as such."""
        rejected = self._check_key(request)
        if rejected:
            return _error(rejected)
        return _json({"object": "list", "data": [_model(m) for m in self.models]})

    async def get_model(self, request: web.Request) -> web.Response:
        """``GET /v1/models/{model}``."""
        name = request.match_info["model"]
        rejected = self._check_key(request) or (
            None
            if name in self.models
            else RequestRejected(404, "model_not_found", f"The model `{name}` does not exist.")
        )
        return _error(rejected) if rejected else _json(_model(name))

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/chat/completions`` with structured output, metered by the configured limits."""
        try:
            rejected = self._check_key(request)
            if rejected:
                raise rejected
            chat = parse_request(await within(request, self.read_timeout_s, request.read()), self.models)
            check_context(chat, self.context_tokens[chat.model])
        except RequestRejected as exc:
            self.stats.count(None, requests=1, errors=1)
            return _error(exc)
        self.stats.count(chat.model, requests=1)
        if self.stats.in_flight >= self.max_in_flight:
            self.stats.count(chat.model, errors=1)
            return _error(_overloaded(self.max_in_flight))
        prompt = prompt_tokens(chat.messages)
        admission = self.limiter.admit(chat.model, prompt, chat.max_completion_tokens)
        if admission.rejected is not None:
            self.stats.count(chat.model, rate_limited=1, limited=1)
            return _error(admission.rejected, admission.headers)
        self.stats.metered(chat.model, prompt + (chat.max_completion_tokens or 0))
        outcome = self.responder.respond(chat)
        if outcome.completion is None:
            assert outcome.transport_fault is not None
            return self._transport_fault(request, chat.model, outcome.transport_fault, admission.headers)
        return await self._reply(chat, outcome.completion, admission.headers)

    async def get_stats(self, request: web.Request) -> web.Response:
        """``GET /v1/_stats``: what this simulator did (not an OpenAI endpoint; see ``stats``)."""
        rejected = self._check_key(request)
        if rejected:
            return _error(rejected)
        snapshot = {
            "simulated": True,
            **self.stats.snapshot(),
            "limits": self.limiter.snapshot(),
            "batches": self.batches.snapshot(),
            "files": self.files.snapshot(),
        }
        return _json(snapshot)

    async def _reply(
        self, chat: ChatRequest, completion: Completion, headers: dict[str, str]
    ) -> web.Response:
        if chat.max_completion_tokens is None:
            self.limiter.charge(chat.model, completion.completion_tokens)
            self.stats.metered(chat.model, completion.completion_tokens)
        self.stats.enter(chat.model)
        try:
            if completion.latency_s > 0:
                await asyncio.sleep(completion.latency_s)
        finally:
            self.stats.leave(chat.model)
        self.stats.served(
            chat.model, completion.prompt_tokens, completion.completion_tokens, completion.cached_tokens
        )
        processing = {"openai-processing-ms": str(round(completion.latency_s * 1000))}
        return _json(body(chat, completion), {**headers, **processing})

    def _transport_fault(
        self, request: web.Request, model: str, fault: Fault, headers: dict[str, str]
    ) -> web.Response:
        if fault == "rate_limited":
            self.stats.count(model, rate_limited=1)
            retry_after_s = self.profile.retry_after_s * self.latency_scale
            retry = {
                "retry-after": str(math.ceil(retry_after_s)),
                "retry-after-ms": str(round(retry_after_s * 1000)),
            }
            message = "Rate limit reached (simulated by the suture simulator). Please try again later."
            return _error(
                RequestRejected(429, "rate_limit_exceeded", message, error_type="requests"),
                {**headers, **retry},
            )
        self.stats.count(model, errors=1)
        if fault == "server_error":
            message = "The server had an error while processing your request (simulated)."
            return _error(RequestRejected(500, "server_error", message, error_type="server_error"))
        # A dropped connection: the client sees the socket close with no response at all.
        if request.transport is not None:
            request.transport.abort()
        raise asyncio.CancelledError

    def _check_key(self, request: web.Request) -> RequestRejected | None:
        if self._api_key is None:
            return None
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if hmac.compare_digest(given.encode(), self._api_key.encode()):
            return None
        # Never echo the key (or part of it) back: it would end up in client logs.
        return RequestRejected(401, "invalid_api_key", "Incorrect API key provided (suture simulator).")


def _model(name: str) -> dict[str, object]:
    return {"id": name, "object": "model", "created": 0, "owned_by": OWNER}


def _overloaded(limit: int) -> RequestRejected:
    message = f"The server is overloaded (suture simulator: {limit} requests in flight). Please retry."
    return RequestRejected(503, "server_overloaded", message, error_type="server_error")
