"""A finished batch's output and error files read into one ``ModelReply`` per line of its round.

Untrusted input: each file line is parsed and type-checked; a ``custom_id`` that is not one of the
round's lines is ignored, and a line of the round with no result (a batch ``failed`` as a whole, a
file cut short) gets an error reply. A reply answered with 200 is read as the model client reads a
Chat Completions body and priced at the model's ``batch_price_ratio`` of its online price; a refused
line maps to the error kind the online client would give (400 bad_request, 401/403 auth, 404
not_found, else unavailable), and a line never run (``batch_expired``, ``batch_cancelled``) is
``unavailable``: the job's policy treats it as any failed call (its next attempt, a new line).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from suture.config.settings import ModelPrice
from suture.tasks.calls import ModelReply, Usage
from suture.workers.model.pricing import cost_usd, price_of
from suture.workers.model.wire import read_completion

_KINDS = {400: "bad_request", 401: "auth", 403: "auth", 404: "not_found"}


def batch_cost_usd(model: str, usage: Usage, prices: Mapping[str, ModelPrice]) -> float | None:
    """What a call through the Batch API cost: the online cost x the model's ``batch_price_ratio``."""
    online = cost_usd(model, usage, prices)
    price = price_of(model, prices)
    return None if online is None or price is None else online * price.batch_price_ratio


def read_results(
    batch_id: str,
    models: Mapping[str, str],
    files: Iterable[bytes],
    prices: Mapping[str, ModelPrice],
    *,
    status: str,
    simulated: bool,
) -> dict[str, ModelReply]:
    """One reply per custom_id of ``models`` (custom_id -> model) from the batch's files."""
    replies: dict[str, ModelReply] = {}
    for content in files:
        for raw in content.decode("utf-8", "replace").splitlines():
            found = _line(raw, batch_id, models, prices, simulated)
            if found is not None and found[0] not in replies:
                replies[found[0]] = found[1]
    for custom_id, model in models.items():
        if custom_id not in replies:
            detail = f"no result for this line in batch {batch_id} (status {status})"
            replies[custom_id] = _error(model, batch_id, detail, "unavailable")
    return replies


def _line(
    raw: str, batch_id: str, models: Mapping[str, str], prices: Mapping[str, ModelPrice], simulated: bool
) -> tuple[str, ModelReply] | None:
    try:
        item = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str):
        return None
    custom_id = item["custom_id"]
    model = models.get(custom_id)
    if model is None:
        return None
    return custom_id, _reply(item, model, batch_id, prices, simulated)


def _reply(
    item: dict[str, Any], model: str, batch_id: str, prices: Mapping[str, ModelPrice], simulated: bool
) -> ModelReply:
    response = item.get("response")
    error = item.get("error")
    if isinstance(response, dict) and response.get("status_code") == 200:
        try:
            completion = read_completion(response.get("body"))
        except (ValueError, LookupError, TypeError, AttributeError) as exc:
            return _error(model, batch_id, f"malformed response body: {type(exc).__name__}", "unavailable")
        return ModelReply(
            model=model,
            text=completion.text,
            finish_reason=completion.finish_reason,
            refusal=completion.refusal,
            usage=completion.usage,
            cost_usd=batch_cost_usd(model, completion.usage, prices),
            simulated=simulated,
            batch_id=batch_id,
        )
    if isinstance(response, dict):
        status = response.get("status_code")
        code = status if isinstance(status, int) else 0
        return _error(
            model, batch_id, f"HTTP {code}: {_message(response.get('body'))}", _KINDS.get(code, "unavailable")
        )
    return _error(model, batch_id, _message({"error": error}), "unavailable")


def _message(body: Any) -> str:
    """The error message of an OpenAI error body, short; never the whole body."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        text = " ".join(str(part) for part in (code, message) if isinstance(part, str))
        return text[:300] or "error"
    return "error"


def _error(model: str, batch_id: str, detail: str, kind: Any) -> ModelReply:
    return ModelReply(
        model=model, error=f"model {model}: batch {batch_id}: {detail}", error_kind=kind, batch_id=batch_id
    )
