"""The one way suture calls a model: Chat Completions with structured output over the openai SDK.

Transport failures are a layer of their own, apart from contract attempts: 429, 5xx, timeouts,
dropped connections and unparseable HTTP bodies are retried here with exponential backoff and
jitter (``Retry-After`` honoured, bounded by ``settings.client``) and counted in
``ModelReply.transport_retries``. The SDK's own retries are off so every retry is counted.
``ModelReply.latency_ms`` is the whole wait of the call, transport retries and backoff included,
and ``settings.client.call_budget_s`` bounds it: no retry starts, and no request outlives, the
budget (a worker's soft time limit is checked to exceed it).

The engine never sees an exception from ``ModelClient.call``: a terminal failure comes back as a
``ModelReply`` with ``error`` and ``error_kind`` (auth, bad_request, not_found, unavailable).
A worker's budgeted caller (``budgeted_caller.py``) asks for a 429 to be raised instead
(``defer_rate_limits``: ``RateLimited``, its task deferred rather than a thread asleep) and for each
reply's headers (``on_headers``: the provider's ``x-ratelimit-*`` figures).
Its errors (``ModelClientError`` > ``TransportFailure``) are in ``failures.py``; the request body and the
reading of a reply in ``wire.py``.

Secrets never leave: the API key is held only by the SDK client, and every error text is
redacted against ``settings.secrets()`` before it is logged or returned.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx2

from suture.config.settings import Settings
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.reply_size import doubled_cap
from suture.workers.model.failures import RateLimited, TransportFailure, classify_status
from suture.workers.model.pricing import cost_usd
from suture.workers.model.wire import Completion, read_completion, request_body, sized

# The openai SDK is imported where a request is made, not with this module: importing it costs about a
# second of CPU (openai 3.x loads every API type), which a worker, the API and the CLI would otherwise pay
# at start even when they never call a model.
if TYPE_CHECKING:
    import openai

log = logging.getLogger("suture.model_client")
NO_KEY_PLACEHOLDER = "sk-none"  # OpenAI-compatible servers that need no key still get a header


SIMULATION_HEADER = "x-suture-simulated"
COMPLETIONS_PATH = "/chat/completions"


class ModelClient:
    """Sends ``ModelCall``s and maps each response (or failure) to a ``ModelReply``."""

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        jitter: random.Random | None = None,
    ) -> None:
        self._settings = settings
        self._sleep = sleep
        self._jitter = jitter or random.Random()
        self._secrets = settings.secrets()
        self._sdk: openai.OpenAI | None = None
        self._lock = threading.Lock()
        # Set once the endpoint has answered as a simulation; reports must then say "simulated".
        self.simulated = False

    def close(self) -> None:
        """Close the HTTP connection pool (the client can still be used: it reconnects lazily)."""
        with self._lock:
            sdk, self._sdk = self._sdk, None
        if sdk is not None:
            sdk.close()

    def __repr__(self) -> str:
        return f"ModelClient(base_url={self._settings.openai_base_url or 'https://api.openai.com/v1'!r})"

    def call(
        self,
        call: ModelCall,
        *,
        defer_rate_limits: bool = False,
        on_headers: Callable[[Mapping[str, str]], None] | None = None,
        before_resend: Callable[[ModelCall, ModelReply], bool] | None = None,
    ) -> ModelReply:
        """Make one model call, retrying transport failures within the call budget; never raises for a failed
        call.

        The call asks for its expected reply's tokens (``wire.sized``); a reply cut off by that cap
        (``finish_reason`` length) is sent once more with the cap doubled, within the ceiling, and the
        reply returned counts both (``cap_retries`` 1). ``before_resend(bigger_call, cut_reply)`` is
        asked first (a budgeted caller reserves the bigger call): False keeps the cut reply. With
        ``defer_rate_limits`` a 429 rate limit raises ``RateLimited`` at once (no retry, no sleep);
        ``on_headers`` gets every successful reply's headers.
        """
        ceiling = call.max_completion_tokens or self._settings.client.max_completion_tokens
        call = sized(call, self._settings)
        started = time.monotonic()
        deadline = started + self._settings.client.call_budget_s
        reply = self._attempt(call, started, deadline, defer_rate_limits, on_headers)
        bigger = doubled_cap(call.max_completion_tokens or ceiling, ceiling)
        if reply.error is not None or reply.finish_reason != "length" or bigger is None:
            return reply
        resent = call.model_copy(update={"max_completion_tokens": bigger})
        if before_resend is not None and not before_resend(resent, reply):
            return reply
        log.info(
            "model %s: reply cut off at %d tokens, sent again with %d",
            call.model,
            reply.max_completion_tokens or 0,
            bigger,
        )
        second = self._attempt(resent, started, deadline, defer_rate_limits, on_headers)
        if second.error is not None:  # the cut reply is still the better answer
            return reply.model_copy(update={"cap_retries": 1, "latency_ms": second.latency_ms})
        cost = None if reply.cost_usd is None or second.cost_usd is None else reply.cost_usd + second.cost_usd
        return second.model_copy(
            update={
                "usage": reply.usage + second.usage,
                "cost_usd": cost,
                "transport_retries": reply.transport_retries + second.transport_retries,
                "cap_retries": 1,
                "asked_completion_tokens": reply.asked_completion_tokens + second.asked_completion_tokens,
            }
        )

    def _attempt(
        self,
        call: ModelCall,
        started: float,
        deadline: float,
        defer_rate_limits: bool,
        on_headers: Callable[[Mapping[str, str]], None] | None,
    ) -> ModelReply:
        """One request of ``call`` and its transport retries, until ``deadline``."""
        retries = 0
        while True:
            try:
                completion = self._create(call, deadline - time.monotonic(), on_headers)
                return self._reply(call, completion, started, retries)
            except TransportFailure as failure:
                if defer_rate_limits and failure.rate_limited:
                    raise RateLimited(call.model, failure.retry_after_s, failure.headers or {}) from None
                if not failure.retryable or retries >= self._settings.client.transport_max_retries:
                    return self._failed(call, failure, started, retries)
                delay_s = self._delay_s(retries, failure.retry_after_s)
                if time.monotonic() + delay_s >= deadline:
                    return self._failed(call, self._budget_spent(failure), started, retries)
                log.warning(
                    "model %s: transport retry %d/%d in %.2fs after %s",
                    call.model,
                    retries + 1,
                    self._settings.client.transport_max_retries,
                    delay_s,
                    self._redact(str(failure)),
                )
                self._sleep(delay_s)
                retries += 1

    def _budget_spent(self, failure: TransportFailure) -> TransportFailure:
        budget_s = self._settings.client.call_budget_s
        return TransportFailure(
            "unavailable", f"{failure.detail}; call budget of {budget_s:g} s spent", False
        )

    def _create(
        self, call: ModelCall, remaining_s: float, on_headers: Callable[[Mapping[str, str]], None] | None
    ) -> Completion:
        """One HTTP request, cut off at ``remaining_s`` of the call budget; failures raise
        ``TransportFailure``."""
        import openai

        sdk = self._client()
        timeout_s = min(self._settings.client.timeout_s, remaining_s)
        if timeout_s <= 0:
            raise TransportFailure("unavailable", "call budget spent before the request", False)
        options: Any = {"timeout": timeout_s} if timeout_s < self._settings.client.timeout_s else {}
        try:
            raw = sdk.post(
                COMPLETIONS_PATH,
                body=request_body(call, self._settings),
                cast_to=httpx2.Response,
                options=options,
            )
            completion = read_completion(raw.json())
            if raw.headers.get(SIMULATION_HEADER, "").lower() == "true":
                self.simulated = True
            if on_headers is not None:
                on_headers(raw.headers)
        except openai.APIStatusError as exc:
            raise classify_status(exc) from None
        except openai.APIConnectionError as exc:
            raise TransportFailure("unavailable", f"connection failed: {type(exc).__name__}", True) from None
        except (openai.APIResponseValidationError, ValueError, TypeError, LookupError, AttributeError) as exc:
            raise TransportFailure(
                "unavailable", f"malformed response body: {type(exc).__name__}", True
            ) from None
        return completion

    def _client(self) -> openai.OpenAI:
        with self._lock:
            if self._sdk is None:
                self._sdk = self._build_sdk()
            return self._sdk

    def _build_sdk(self) -> openai.OpenAI:
        import openai

        settings = self._settings
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        if key is None and settings.openai_base_url is None:
            raise TransportFailure(
                "auth", "no API key configured: set OPENAI_API_KEY or OPENAI_BASE_URL", False
            )
        return openai.OpenAI(
            api_key=key or NO_KEY_PLACEHOLDER,
            base_url=settings.openai_base_url,
            timeout=settings.client.timeout_s,
            max_retries=0,  # retries happen (and are counted) in ModelClient.call
        )

    def _reply(self, call: ModelCall, completion: Completion, started: float, retries: int) -> ModelReply:
        return ModelReply(
            model=call.model,
            text=completion.text,
            finish_reason=completion.finish_reason,
            refusal=completion.refusal,
            usage=completion.usage,
            cost_usd=cost_usd(call.model, completion.usage, self._settings.prices),
            latency_ms=(time.monotonic() - started) * 1000,
            transport_retries=retries,
            max_completion_tokens=call.max_completion_tokens,
            asked_completion_tokens=call.max_completion_tokens or 0,
            simulated=self.simulated,
        )

    def _failed(self, call: ModelCall, failure: TransportFailure, started: float, retries: int) -> ModelReply:
        detail = failure.detail + (f" (after {retries} transport retries)" if retries else "")
        return ModelReply(
            model=call.model,
            error=self._redact(f"model {call.model}: {detail}"),
            error_kind=failure.kind,
            latency_ms=(time.monotonic() - started) * 1000,
            transport_retries=retries,
        )

    def _delay_s(self, retries: int, retry_after_s: float | None) -> float:
        """Wait before the next try: the server's Retry-After if given, else backoff with jitter."""
        cap_s = self._settings.client.backoff_max_s
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), cap_s)
        ceiling_s = min(cap_s, self._settings.client.backoff_base_s * 2**retries)
        return ceiling_s / 2 + self._jitter.uniform(0, ceiling_s / 2)

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text


_CLIENT: tuple[tuple[object, ...], ModelClient] | None = None
_CLIENT_LOCK = threading.Lock()


def get_model_client(settings: Settings) -> ModelClient:
    """This process's client for these settings: created lazily, recreated after a fork."""
    global _CLIENT
    key = (os.getpid(), _settings_fingerprint(settings))
    with _CLIENT_LOCK:
        if _CLIENT is None or _CLIENT[0] != key:
            _CLIENT = (key, ModelClient(settings))
        return _CLIENT[1]


def _settings_fingerprint(settings: Settings) -> str:
    """A digest of what the client depends on (the key only as a hash, never kept in clear)."""
    parts = [
        settings.openai_base_url or "",
        settings.openai_api_key.get_secret_value() if settings.openai_api_key else "",
        settings.client.model_dump_json(),
        repr(sorted((k, v.model_dump_json()) for k, v in settings.prices.items())),
    ]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
