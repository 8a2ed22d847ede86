"""How suture uses OpenAI's Batch API (``batch_api:`` in the settings): the mode and the round clock.

A section of ``suture.config.settings.Settings``; each key is documented in config/defaults.yaml.
The flow behind it is ``suture.workers.flow.batch_rounds`` (docs/architecture.md, "Batch API rounds").
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# off: every call online; all: every model call of a job through the Batch API; first: its first
# attempt through the Batch API, every repair (later attempts, surgical slices) online.
BatchApiMode = Literal["off", "all", "first"]


class BatchApiSettings(BaseModel):
    """The default mode of `suture batch` and the timing of Batch API rounds."""

    model_config = ConfigDict(extra="forbid")

    mode: BatchApiMode = "off"
    # Lines wait this long after the first one of a model came in before a round submits them (more
    # lines per batch file); a round also starts at once with max_lines waiting.
    collect_s: float = Field(5.0, ge=0)
    max_lines: int = Field(50_000, ge=1, le=50_000)  # OpenAI's cap on the requests of one batch
    # A submitted batch is polled this often (never more often than the watchdog's interval).
    poll_s: float = Field(30.0, gt=0)
    # A round task not heard of for this long (a worker killed while it ran) is sent again.
    lease_s: float = Field(120.0, gt=0)
    # A job that goes through the Batch API gets this deadline instead of worker.job_deadline_s:
    # the completion window (24 h) and a margin for its repairs.
    job_deadline_s: float = Field(26 * 3600.0, gt=0)
