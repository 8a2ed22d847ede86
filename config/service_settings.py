"""Settings of the service side: ``suture serve`` (``api``), callbacks (``webhook``) and Sentry (``sentry``).

Sections of ``suture.config.settings.Settings``; each key is documented in config/defaults.yaml.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class _Section(BaseModel):
    """A settings section; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class ApiKey(_Section):
    """One API key: the secret a caller sends, and whether it may read the operator's jobs.

    Given as the key alone (``"k1"``) or as ``{key: "k1", operator: true}``. Each key is a tenant: its
    jobs are its own. A job enqueued without a tenant (``suture enqueue``, ``suture batch``, the Python
    API without ``tenant=``) is the operator's: only an ``operator`` key sees it (``GET``, ``trace``, the
    review pages), and no key can cancel, resume or accept it.
    """

    key: SecretStr
    operator: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"key": value} if isinstance(value, str | SecretStr) else value


class ApiSettings(_Section):
    """`suture serve`: where it listens, who may call it, and how much it accepts."""

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    # Bearer keys (any one opens the API and the review pages); compared in constant time, never logged.
    # Each a key, or {key, operator: true} for a key that may also read the jobs enqueued without a tenant.
    keys: list[ApiKey] = Field(default_factory=list)
    # The address people reach the API at (e.g. https://quiz.example.org), for review links in Sentry.
    public_url: str | None = None
    # A request body over this is refused with 413 before it is read whole.
    max_body_bytes: int = Field(10 * 1024 * 1024, ge=1024)
    # Requests per minute per key, shared by every API process through Redis (0: no limit). On by
    # default: one key cannot take the whole server (10 a second on average; raise it for a busy app).
    rate_limit_per_minute: int = Field(600, ge=0)
    # Open connections per server process; past it uvicorn answers 503 (300 half-sent headers held nothing
    # shut).
    max_connections: int = Field(1000, ge=1)
    # A request head must arrive whole within this (from the connection's start or the previous
    # response), else 408 and the connection closes: half-sent heads (slowloris) hold nothing for long.
    header_timeout_s: float = Field(10.0, gt=0)
    # A request head larger than this gets 431 and the connection closes.
    max_header_bytes: int = Field(16 * 1024, ge=1024)
    # A body must arrive whole within this once its head is in (10 MB at about 1.4 Mbit/s), else the
    # connection closes.
    body_timeout_s: float = Field(60.0, gt=0)
    # Server processes sharing the port (`suture serve --workers`).
    workers: int = Field(1, ge=1, le=64)


class WebhookSettings(_Section):
    """Callbacks: signed Standard Webhooks POSTs that never reach inside the network, and task callbacks."""

    # whsec_... (Standard Webhooks), the same for `suture serve` and the workers (they sign). `suture
    # serve` refuses to start without one while URL callbacks are enabled.
    secret: SecretStr | None = None
    # URL callbacks accepted at enqueue (false: every entry point refuses a callback URL, and `suture
    # serve` starts without a secret).
    enabled: bool = True
    require_https: bool = True
    # Host names, IP addresses or networks (CIDR) a callback may reach though they are internal.
    allowed_hosts: list[str] = Field(default_factory=list)
    # Celery task names a callback may name (none: callbacks are http(s) URLs only).
    allowed_tasks: list[str] = Field(default_factory=list)
    # The whole exchange of one delivery (connect, send, headers, body), not a per-read timeout.
    deadline_s: float = Field(10.0, gt=0)
    max_response_bytes: int = Field(64 * 1024, ge=0)
    max_url_chars: int = Field(2048, ge=16)
    # Deliveries per callback (the first included), then it is given up; backoff doubles from the base.
    max_attempts: int = Field(6, ge=1, le=20)
    backoff_base_s: float = Field(5.0, gt=0)
    backoff_max_s: float = Field(1800.0, gt=0)
    # Deliveries in flight at once per worker process (they wait on the network, not the CPU).
    concurrency: int = Field(100, ge=1)
    # A published callback not taken up within this long (its message lost with a broker restart or a
    # killed worker) is published again by the watchdog; a duplicate message is harmless (one delivery
    # claims the callback, the other finds it taken).
    pickup_lease_s: float = Field(30.0, gt=0)


class SentrySettings(_Section):
    """Sentry reporting (on only when a DSN is set: ``SENTRY_DSN``)."""

    # None: "simulation" for a run on the simulated model, else "production".
    environment: str | None = None
    # Share of jobs traced across their attempt, slice and merge tasks (None or 0: no tracing).
    traces_sample_rate: float | None = Field(None, ge=0, le=1)
