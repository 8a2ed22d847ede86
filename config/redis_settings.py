"""Settings of the Redis behind suture: Sentinel discovery (``sentinel``) and the job store's durability
(``store``).

Sections of ``suture.config.settings.Settings``; each key is documented in config/defaults.yaml and the
deployment guide (docs/operations.md, "Redis").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class SentinelSettings(BaseModel):
    """How a ``sentinel://`` URL (broker, result backend, store) finds its primary."""

    model_config = ConfigDict(extra="forbid")

    # The name the sentinels monitor the primary under (``sentinel monitor <name> ...``); a sentinel://
    # URL needs it.
    master_name: str | None = None
    # The sentinels' own password (their ``requirepass``), apart from the primary's, which is the URL's.
    password: SecretStr | None = None


class StoreSettings(BaseModel):
    """How the job store makes an accepted job survive a failover, and what it says about persistence."""

    model_config = ConfigDict(extra="forbid")

    # After storing a new job, wait for this many replicas to acknowledge it (Redis WAIT) before enqueue
    # answers, when the primary has replicas (0: never wait).
    wait_replicas: int = Field(1, ge=0)
    # ...for at most this long; past it enqueue raises StoreUnavailable (the job may exist: retry with its
    # key).
    wait_timeout_ms: int = Field(1000, ge=1)
    # At worker start-up, log a loud warning when the store's Redis keeps nothing across a restart.
    warn_no_persistence: bool = True
