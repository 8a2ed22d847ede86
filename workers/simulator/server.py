"""The HTTP face of the simulated model: OpenAI's Chat Completions and Models endpoints on aiohttp.

Every response says it is simulated (``x-suture-simulated: true``; models are owned by
"suture-simulator"). Answers are deterministic for (seed, model, request seed, prompt); chaos
faults are drawn per occurrence of a prompt, so a retry of the same request can succeed and a
rerun of the same request sequence reproduces the same faults. Usage reports the prompt tokens a
per-model prefix cache served, as OpenAI's automatic prompt caching does (``prompt_cache``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import secrets
from collections import Counter

from aiohttp import web

from workers.simulator.bias import seeded
from workers.simulator.completion import answer, body, complete
from workers.simulator.errors import RequestRejected
from workers.simulator.faults import CONTENT_FAULTS, Fault, draw_fault
from workers.simulator.profiles import Profile
from workers.simulator.prompt import message_text
from workers.simulator.prompt_cache import PromptCache
from workers.simulator.request import ChatRequest, parse_request

OWNER = "suture-simulator"
BANNER = (
    "suture simulator: a SIMULATED OpenAI-compatible model server for demos and tests, not a real model.\n"
)
SIMULATED_HEADERS = {"x-suture-simulated": "true"}
MAX_BODY_BYTES = 64 * 1024 * 1024
_MAX_REMEMBERED_PROMPTS = 200_000


class SimulatorServer:
    """Request handlers bound to one profile, latency scale, seed, prompt cache and optional API key."""

    def __init__(
        self,
        profile: Profile,
        latency_scale: float,
        seed: int,
        api_key: str | None = None,
        prompt_cache: PromptCache | None = None,
    ) -> None:
        self.profile = profile
        self.latency_scale = latency_scale
        self.seed = seed
        self._api_key = api_key
        self.prompt_cache = PromptCache() if prompt_cache is None else prompt_cache
        self._occurrences: Counter[str] = Counter()
        self.models = tuple(profile.models)

    def __repr__(self) -> str:
        return f"SimulatorServer(profile={self.profile.name!r}, latency_scale={self.latency_scale}, seed={self.seed})"

    def application(self) -> web.Application:
        """The aiohttp application serving ``/v1``."""
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_get("/", self.banner)
        app.router.add_get("/v1/models", self.list_models)
        app.router.add_get("/v1/models/{model}", self.get_model)
        app.router.add_post("/v1/chat/completions", self.chat_completions)
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
        """``POST /v1/chat/completions`` with structured output."""
        try:
            rejected = self._check_key(request)
            if rejected:
                raise rejected
            chat = parse_request(await request.read(), self.models)
        except RequestRejected as exc:
            return _error(exc)
        identity = _identity(chat)
        fault_rng = seeded(self.seed, "fault", chat.model, chat.seed, self._occurrence(identity), identity)
        fault = draw_fault(self.profile.faults, fault_rng) if self.profile.faults.total() else None
        if fault in ("rate_limited", "server_error", "dropped_connection"):
            return self._transport_fault(request, fault)
        # Only a prompt the model processed reaches the cache: transport faults return above.
        cached = self.prompt_cache.serve(chat)
        text = answer(chat, self.profile, seeded(self.seed, chat.model, chat.seed, identity))
        content_fault = fault if fault in CONTENT_FAULTS or fault == "slow" else None
        scale = self.latency_scale
        completion = complete(chat, text, content_fault, self.profile, scale, fault_rng, cached_tokens=cached)
        if completion.latency_s > 0:
            await asyncio.sleep(completion.latency_s)
        headers = {"openai-processing-ms": str(round(completion.latency_s * 1000))}
        return _json(body(chat, completion), headers)

    def _transport_fault(self, request: web.Request, fault: Fault) -> web.Response:
        if fault == "rate_limited":
            retry_after_s = self.profile.retry_after_s * self.latency_scale
            headers = {
                "retry-after": str(math.ceil(retry_after_s)),
                "retry-after-ms": str(round(retry_after_s * 1000)),
            }
            message = "Rate limit reached (simulated by the suture simulator). Please try again later."
            return _error(
                RequestRejected(429, "rate_limit_exceeded", message, error_type="requests"), headers
            )
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

    def _occurrence(self, identity: str) -> int:
        if len(self._occurrences) > _MAX_REMEMBERED_PROMPTS:
            self._occurrences.clear()
        self._occurrences[identity] += 1
        return self._occurrences[identity]


def _identity(chat: ChatRequest) -> str:
    """The prompt as the model reads it: schema name and every message, role by role."""
    parts = [chat.schema_name] + [f"{m.get('role')}:{message_text(m.get('content'))}" for m in chat.messages]
    return "\x1e".join(parts)


def _model(name: str) -> dict[str, object]:
    return {"id": name, "object": "model", "created": 0, "owned_by": OWNER}


def _json(payload: object, headers: dict[str, str] | None = None) -> web.Response:
    extra = {**SIMULATED_HEADERS, "x-request-id": f"req_sim_{secrets.token_hex(8)}", **(headers or {})}
    return web.Response(text=json.dumps(payload), content_type="application/json", headers=extra)


def _error(exc: RequestRejected, headers: dict[str, str] | None = None) -> web.Response:
    response = _json(exc.body(), headers)
    response.set_status(exc.status)
    return response
