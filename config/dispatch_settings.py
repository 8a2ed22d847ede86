"""The dispatcher's settings: which new jobs reach the workers first (``dispatch:``, config/defaults.yaml).

A section of ``suture.config.settings.Settings``; the design is in docs/architecture.md ("Priority classes
and tenant fairness").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DispatchSettings(BaseModel):
    """How new jobs wait in Redis and are fed to the model queue (interactive first, tenants by weight)."""

    model_config = ConfigDict(extra="forbid")

    # false: enqueue publishes a job's first attempt at once (one FIFO queue, as before; the bench's
    # baseline).
    enabled: bool = True
    # Of the dispatches made while both classes wait, this share goes to bulk (0.1: one in ten).
    bulk_share: float = Field(0.1, ge=0.0, le=1.0)
    # New jobs are fed while fewer than this many messages are ready in the model queue.
    ready_target: int = Field(2, ge=1, le=10_000)
    # At most this many jobs sent and unfinished at once (null: no cap beyond ready_target). Set near what
    # the workers can run without slowing each job (CPU, model limits), so an interactive job never queues
    # behind a crowd of bulk jobs already running (docs/benchmarks.md "Priority classes").
    max_in_flight: int | None = Field(None, ge=1)
    # Bulk jobs kept in flight per bulk model slot of the live workers (each reports its slots with its
    # heartbeat): new bulk jobs go out as started ones end, whatever the model queues hold, so long first
    # calls and CPU-bound repairs overlap instead of coming in waves (0: feed on ready_target alone).
    bulk_jobs_per_slot: float = Field(1.5, ge=0.0, le=100.0)
    # A batch's last waiting jobs, when no more than this share of that fill, go at once with the jobs in
    # flight rather than as a small wave after them, on mostly idle slots (0: off).
    bulk_tail_share: float = Field(0.5, ge=0.0, le=10.0)
    # How often an idle dispatcher looks for interactive jobs waiting (it drains at once otherwise).
    poll_s: float = Field(0.02, gt=0, le=5.0)
    # After a pass that sent nothing, the next full pass (the queues' depth, the jobs in flight: a few
    # Redis calls) comes this much later, or at once when an interactive job waits (looked at every poll_s):
    # bulk jobs waiting on full queues do not cost the cluster fifty passes a second.
    idle_pass_s: float = Field(0.1, gt=0, le=60.0)
    # The dispatcher's Redis lease: one worker dispatches at a time; a SIGKILLed one's lease lapses after
    # this.
    lease_s: float = Field(10.0, ge=1.0, le=600.0)
    # Within a class, tenants are served by weighted round-robin; a tenant not listed weighs 1.
    # Of each limited model's request and token budget (``limits``), this share is kept for interactive
    # calls: a bulk call is sent only while the buckets would keep it after the call (0: no reserve).
    interactive_budget_share: float = Field(0.1, ge=0.0, lt=1.0)
    # Of each model worker's slots (its concurrency), this share is kept free of bulk calls on a Redis broker,
    # so an interactive call never waits for a bulk call to end (at least one slot; none on a worker of one).
    interactive_slots: float = Field(0.1, ge=0.0, lt=1.0)
    tenant_weights: dict[str, int] = Field(default_factory=dict)
    # A bulk job counts as running for its tenant's share while it sent a step this recently: a tenant over
    # its weighted share of the running bulk jobs has its model calls taken after everyone else's (Redis).
    fair_window_s: float = Field(60.0, gt=0, le=3600.0)
