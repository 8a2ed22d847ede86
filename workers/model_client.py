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
Errors inside this module, one small hierarchy:

    ModelClientError                   base
    └── TransportFailure(kind, detail, retryable, retry_after_s)
                                       one failed try, classified; becomes the reply's error
                                       once it is terminal or retries are exhausted

Secrets never leave: the API key is held only by the SDK client, and every error text is
redacted against ``settings.secrets()`` before it is logged or returned.
"""

from __future__ import annotations

import email.utils
import hashlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx2
import openai

from config.settings import Settings
from tasks.calls import ModelCall, ModelReply, Usage
from workers.pricing import cost_usd

log = logging.getLogger("suture.model_client")
ErrorKind = Literal["auth", "bad_request", "unavailable", "not_found"]
NO_KEY_PLACEHOLDER = "sk-none"  # OpenAI-compatible servers that need no key still get a header
MAX_DETAIL_CHARS = 300


SIMULATION_HEADER = "x-suture-simulated"
COMPLETIONS_PATH = "/chat/completions"


class ModelClientError(Exception):
    """Base of the model client's errors."""


@dataclass
class TransportFailure(ModelClientError):
    """One failed try: what kind of terminal error it would be, and whether to try again."""

    kind: ErrorKind
    detail: str
    retryable: bool
    retry_after_s: float | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


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

    def call(self, call: ModelCall) -> ModelReply:
        """Make one model call, retrying transport failures within the call budget; never raises for a failed call."""
        started = time.monotonic()
        deadline = started + self._settings.client.call_budget_s
        retries = 0
        while True:
            try:
                return self._reply(call, self._create(call, deadline - time.monotonic()), started, retries)
            except TransportFailure as failure:
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

    def _create(self, call: ModelCall, remaining_s: float) -> Completion:
        """One HTTP request, cut off at ``remaining_s`` of the call budget; failures raise ``TransportFailure``."""
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


def request_body(call: ModelCall, settings: Settings) -> dict[str, Any]:
    """The JSON body of a Chat Completions request for a call.

    Sent with the SDK's plain ``post`` (its documented way to send a body as is): the typed
    ``chat.completions.create`` walks every message and schema node against its parameter types
    first, which cost more than the rest of a call to a fast model. Same endpoint, headers, auth,
    timeouts and status errors; the reply is parsed as ``create`` parses it.
    """
    arguments: dict[str, Any] = {
        "model": call.model,
        "messages": call.messages,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": call.schema_name, "schema": call.json_schema, "strict": True},
        },
        "max_completion_tokens": call.max_completion_tokens or settings.client.max_completion_tokens,
    }
    if call.reasoning_effort is not None:
        arguments["reasoning_effort"] = call.reasoning_effort
    if call.seed is not None:
        arguments["seed"] = call.seed
    if call.cache_key is not None and settings.client.send_prompt_cache_key:
        arguments["prompt_cache_key"] = call.cache_key
    return arguments


@dataclass(frozen=True)
class Completion:
    """What suture reads of a Chat Completions response body: the first choice and the usage."""

    text: str | None
    finish_reason: str | None
    refusal: str | None
    usage: Usage


def read_completion(body: Any) -> Completion:
    """Read a response body (untrusted JSON) as the SDK's ``ChatCompletion`` would be read.

    Only the fields suture uses are read, and each is type-checked: a body that is not an object,
    has no choice, or has a field of the wrong type raises ``ValueError``/``LookupError``/``TypeError``
    (the caller's "malformed response body"). Building the SDK's ``ChatCompletion`` model of the whole
    body first cost more CPU than the rest of the reply handling, for fields nobody reads.
    """
    choice = body["choices"][0]
    message = choice["message"]
    if not isinstance(message, dict):
        raise TypeError("choices[0].message is not an object")
    return Completion(
        text=_optional_str(message.get("content"), "content"),
        finish_reason=_optional_str(choice.get("finish_reason"), "finish_reason"),
        refusal=_optional_str(message.get("refusal"), "refusal"),
        usage=usage_of(body.get("usage")),
    )


def _optional_str(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} is not a string")
    return value


def usage_of(usage: Any) -> Usage:
    """Token counts from a response's ``usage`` object (output includes reasoning, as OpenAI counts it)."""
    if not isinstance(usage, dict):
        return Usage()
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    return Usage(
        input_tokens=_count(usage.get("prompt_tokens")),
        cached_input_tokens=_count(
            prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else 0
        ),
        output_tokens=_count(usage.get("completion_tokens")),
        reasoning_tokens=_count(
            completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else 0
        ),
    )


def _count(value: Any) -> int:
    """A token count; anything but a non-negative integer counts as unknown (0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def classify_status(exc: openai.APIStatusError) -> TransportFailure:
    """Which terminal kind an HTTP error is, and whether it is worth another try."""
    status = exc.status_code
    detail = f"HTTP {status}: {_server_message(exc)}"
    if status in (401, 403):
        return TransportFailure("auth", detail, False)
    if status == 404:
        return TransportFailure("not_found", detail, False)
    if status == 429 and _error_code(exc) == "insufficient_quota":
        return TransportFailure("unavailable", detail, False)
    if status in (408, 409, 429) or status >= 500:
        return TransportFailure("unavailable", detail, True, retry_after_s(exc.response.headers))
    return TransportFailure("bad_request", detail, False)


def retry_after_s(headers: httpx2.Headers) -> float | None:
    """The server's requested wait, from ``retry-after-ms`` or ``retry-after`` (seconds or a date)."""
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) else type(exc).__name__
    return " ".join(text.split())[:MAX_DETAIL_CHARS]


def _error_code(exc: openai.APIStatusError) -> str | None:
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


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
