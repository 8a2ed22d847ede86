"""Sentry reporting: one scrubbed event per job that did not end cleanly, so operators see soft-deliveries.

A soft-delivered job sends one *warning* event "<Title> delivered after contract retry exhaustion";
failed and refused jobs send their own events (distinct messages and fingerprints). Events carry ids,
counts, codes, models, cost and latency, never prompt, document or output text, and a ``before_send``
scrubber removes every configured secret (API key, DSN, Redis passwords) from whatever else the SDK adds.

Nothing here raises into the caller: reporting is best-effort and Sentry is off when no DSN is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast
from urllib.parse import urlsplit

import sentry_sdk
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.types import Breadcrumb, BreadcrumbHint, Event, Hint

from config.settings import Settings

FILTERED = "[Filtered]"

# Keys whose values may hold the source document, a prompt or model output: never sent, whatever adds them.
CONTENT_KEYS: frozenset[str] = frozenset(
    {"input", "document", "source", "output", "prompt", "prompts", "messages", "text", "content", "reply"}
)

# Sentry truncates tag values at 200 characters; codes beyond that are still in the context.
MAX_TAG_CHARS = 200


def init_sentry(settings: Settings) -> bool:
    """Start the Sentry SDK with the Celery integration if a DSN is configured; True when enabled."""
    if settings.sentry_dsn is None or not settings.sentry_dsn.get_secret_value():
        return False
    dsn = settings.sentry_dsn.get_secret_value()
    sentry_sdk.init(
        dsn=dsn,
        environment=settings.sentry_environment,
        integrations=[CeleryIntegration()],
        include_local_variables=False,
        # send_default_pii is left unset: this SDK treats unset as False (and keeps its default
        # EventScrubber), while passing it explicitly is deprecated in favour of data_collection.
        before_send=make_scrubber(_secrets_with_dsn_key(settings, dsn)),
        before_breadcrumb=_drop_breadcrumb_data,
    )
    return True


def report_final(result: dict[str, Any], contract_title: str) -> str | None:
    """Send the event a finished job deserves (none for a clean delivery); returns the event id if sent."""
    status = result.get("status")
    message = _message(status, contract_title)
    if message is None:
        return None
    summary = attempt_summary(result)
    codes = failure_codes(result)
    contract = str(result.get("contract") or contract_title.lower())
    return sentry_sdk.capture_message(
        message,
        level="warning" if status in ("soft_delivered", "refused") else "error",
        tags=_tags(result, contract, codes, summary),
        contexts={"attempt_summary": summary},
        fingerprint=["suture", str(status), contract, *codes],
    )


def _message(status: Any, title: str) -> str | None:
    if status == "soft_delivered":
        return f"{title} delivered after contract retry exhaustion"
    if status == "failed":
        return f"{title} job failed"
    if status == "refused":
        return f"{title} refused by the model"
    return None


def failure_codes(result: dict[str, Any]) -> list[str]:
    """The distinct failure codes of the delivered output, sorted (the grouping key with the contract)."""
    return sorted({str(f.get("code")) for f in result.get("failures") or [] if isinstance(f, dict)})


def attempt_summary(result: dict[str, Any]) -> dict[str, Any]:
    """Counts, models, cost and latency of the job's attempts; no prompt, document or output text."""
    attempts = [a for a in result.get("attempts") or [] if isinstance(a, dict)]
    usage = result.get("usage") or {}
    return {
        "job_id": result.get("job_id"),
        "status": result.get("status"),
        "attempts": len(attempts),
        "full_attempts": sum(1 for a in attempts if a.get("mode") == "full"),
        "surgical_attempts": sum(1 for a in attempts if a.get("mode") == "surgical"),
        "steps_used": len({a.get("step") for a in attempts}),
        "models": list(dict.fromkeys(str(a.get("model")) for a in attempts)),
        "final_failures": len(result.get("failures") or []),
        "rolled_back": sum(len(a.get("rolled_back") or []) for a in attempts),
        "transport_retries": sum(int(a.get("transport_retries") or 0) for a in attempts),
        "input_tokens": usage.get("input_tokens"),
        "output_tokens": usage.get("output_tokens"),
        "cost_usd": result.get("cost_usd"),
        "latency_ms": result.get("latency_ms"),
        "simulated": bool(result.get("simulated")),
    }


def _tags(result: dict[str, Any], contract: str, codes: list[str], summary: dict[str, Any]) -> dict[str, str]:
    models = summary["models"]
    return {
        "contract": contract,
        "status": str(result.get("status")),
        "final_model": models[-1] if models else "none",
        "failure_codes": ",".join(codes)[:MAX_TAG_CHARS] or "none",
        "steps_used": str(summary["steps_used"]),
        "attempts": str(summary["attempts"]),
        "simulated": str(summary["simulated"]).lower(),
        "job_id": str(result.get("job_id")),
    }


def make_scrubber(secrets: Iterable[str]) -> Callable[[Event, Hint], Event | None]:
    """A ``before_send`` hook that filters content keys and every secret substring anywhere in an event."""
    # Longest first, so a DSN is replaced whole before its key alone would match inside it.
    ordered = sorted({s for s in secrets if s}, key=len, reverse=True)

    def scrub(event: Event, hint: Hint) -> Event | None:
        return cast(Event, _scrub_value(event, ordered))

    return scrub


def _scrub_value(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, FILTERED)
        return value
    if isinstance(value, dict):
        return {
            k: FILTERED if _is_content_key(k) and v else _scrub_value(v, secrets) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_scrub_value(v, secrets) for v in value]
    return value


def _is_content_key(key: Any) -> bool:
    return isinstance(key, str) and key.lower() in CONTENT_KEYS


def _drop_breadcrumb_data(crumb: Breadcrumb, hint: BreadcrumbHint) -> Breadcrumb | None:
    # Breadcrumb data (log args, HTTP bodies) can quote documents; the message line is enough to follow a job.
    crumb.pop("data", None)
    return crumb


def _secrets_with_dsn_key(settings: Settings, dsn: str) -> list[str]:
    values = [*settings.secrets(), dsn]
    try:
        key = urlsplit(dsn).username
    except ValueError:
        key = None
    if key:
        values.append(key)
    return values
