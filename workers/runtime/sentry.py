"""Sentry set-up and scrubbing: the SDK started once per process when a DSN is set, nothing sent otherwise.

``init_sentry`` starts the SDK (Celery integration, optional tracing, logs as breadcrumbs only: suture
sends its events explicitly, ``suture.workers.runtime.alerts``, so a logged error never makes a
second event); ``ensure_sentry`` does so only if no client runs yet (a web app that set Sentry up
keeps its own). Every event passes ``before_send``: content keys (document, prompt, output) and every
configured secret (API key, DSN, Redis passwords) are filtered anywhere in it, pydantic's
``input_value=...`` is cut from exception text, and an unconfigured environment becomes
``simulation`` once this process has talked to the simulated model. ``scrub_text`` removes any run of
a job's own document or output text from a string (failure messages, exception values).

Nothing here raises into the caller, and with no DSN nothing is attempted and nothing is logged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import sentry_sdk
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.integrations.logging import LoggingIntegration
from sentry_sdk.types import Breadcrumb, BreadcrumbHint, Event, Hint

from suture.config.settings import Settings

FILTERED = "[Filtered]"
SIMULATION = "simulation"
PRODUCTION = "production"

# Keys whose values may hold the source document, a prompt or model output: never sent, whatever adds them.
CONTENT_KEYS: frozenset[str] = frozenset(
    {"input", "document", "source", "output", "prompt", "prompts", "messages", "text", "content", "reply"}
)
# pydantic's errors quote the offending input ("input_value='<document text>', input_type=str").
INPUT_VALUE = re.compile(r"input_value=.*?(?=, input_type=|\]|$)", re.DOTALL | re.MULTILINE)
# A run of this many characters found in a job's document or output is content, not a message.
CONTENT_WINDOW = 16
MAX_SCRUBBED_CHARS = 2000

_simulation_probe: list[Callable[[], bool]] = []


def init_sentry(settings: Settings) -> bool:
    """Start the Sentry SDK if a DSN is configured; True when enabled (False, silently, without a DSN)."""
    dsn = settings.sentry_dsn.get_secret_value() if settings.sentry_dsn else ""
    if not dsn:
        return False
    configured = settings.sentry.environment
    sentry_sdk.init(
        dsn=dsn,
        release=release(),
        environment=configured or PRODUCTION,
        integrations=[CeleryIntegration(), LoggingIntegration(level=logging.INFO, event_level=None)],
        include_local_variables=False,
        traces_sample_rate=settings.sentry.traces_sample_rate or None,
        # send_default_pii is left unset: this SDK treats unset as False (and keeps its default
        # EventScrubber), while passing it explicitly is deprecated in favour of data_collection.
        before_send=make_scrubber(_secrets_with_dsn_key(settings, dsn), auto_environment=configured is None),
        before_send_transaction=make_scrubber(_secrets_with_dsn_key(settings, dsn)),
        before_breadcrumb=_drop_breadcrumb_data,
    )
    return True


def release() -> str | None:
    """``suture@<version>`` of the installed package (None if it is not installed as one)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"suture@{version('suture')}"
    except PackageNotFoundError:
        return None


def ensure_sentry(settings: Settings) -> bool:
    """Start Sentry for a producer, the API or the CLI unless this process already runs a client."""
    if sentry_sdk.is_initialized():
        return True
    return init_sentry(settings)


def enabled() -> bool:
    """True when events would be sent (a client with a DSN runs in this process)."""
    return sentry_sdk.is_initialized()


def on_simulation(probe: Callable[[], bool]) -> None:
    """Ask ``probe`` whether this process runs on the simulated model (the unconfigured environment)."""
    _simulation_probe[:] = [probe]


def make_scrubber(
    secrets: Iterable[str], *, auto_environment: bool = False
) -> Callable[[Event, Hint], Event | None]:
    """A ``before_send`` hook that filters content keys and every secret substring anywhere in an event."""
    # Longest first, so a DSN is replaced whole before its key alone would match inside it.
    ordered = sorted({s for s in secrets if s}, key=len, reverse=True)

    def scrub(event: Event, hint: Hint) -> Event | None:
        for exception in (event.get("exception") or {}).get("values") or []:
            if isinstance(exception.get("value"), str):
                exception["value"] = INPUT_VALUE.sub("input_value=" + FILTERED, exception["value"])
        if auto_environment and _simulated(event):
            event["environment"] = SIMULATION
        return cast(Event, _scrub_value(event, ordered))

    return scrub


def scrub_text(text: str, sensitive: Sequence[str]) -> str:
    """``text`` without pydantic input values and without any run of ``CONTENT_WINDOW``+ characters of
    ``sensitive``."""
    text = INPUT_VALUE.sub("input_value=" + FILTERED, text[:MAX_SCRUBBED_CHARS])
    haystacks = [s for s in sensitive if s]
    if not haystacks:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        end = i + CONTENT_WINDOW
        if end <= len(text) and any(text[i:end] in h for h in haystacks):
            while end < len(text) and any(text[i : end + 1] in h for h in haystacks):
                end += 1
            out.append(FILTERED)
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def strings_of(value: Any) -> str:
    """Every string inside a JSON-like ``value``, one per line (a job's output, to scrub text of)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(strings_of(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(strings_of(v) for v in value)
    return ""


def _simulated(event: Event) -> bool:
    tags = event.get("tags") or {}
    if isinstance(tags, dict) and tags.get("simulated") == "true":
        return True
    try:
        return any(probe() for probe in _simulation_probe)
    except Exception:  # a probe must never cost an event
        return False


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
    message = crumb.get("message")
    if isinstance(message, str):
        crumb["message"] = INPUT_VALUE.sub("input_value=" + FILTERED, message)
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
