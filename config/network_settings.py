"""How every Redis and AMQP connection suture or Celery opens notices a peer that went silent.

A section of ``suture.config.settings.Settings`` (``network``); each key is documented in
config/defaults.yaml. ``suture.workers.store.connection`` turns it into socket options for the job
store, the broker, the result backend, the dispatcher and the API alike.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class NetworkSettings(BaseModel):
    """Connect and read timeouts and TCP keep-alive for every broker, backend and store connection."""

    # Frozen (hashable): the process's Redis clients are cached per URL and these options.
    model_config = ConfigDict(extra="forbid", frozen=True)

    # A TCP connection not established within this is an outage (retried), not a process waiting for
    # the kernel's SYN retries (over two minutes).
    connect_timeout_s: float = Field(5.0, gt=0)
    # A broker or result-backend command unanswered this long fails and is retried; it never blocks a
    # worker's consumer loop. Longer than any BRPOP kombu sends (1 s). (The job store's own command
    # timeout is worker.redis_timeout_s.)
    broker_timeout_s: float = Field(10.0, gt=0)
    # TCP keep-alive: an idle connection is probed after keepalive_idle_s, every keepalive_interval_s,
    # and declared dead after keepalive_probes unanswered probes (10 + 3 x 5 = 25 s), instead of the
    # kernel's 2 hours. The same span bounds how long sent data may stay unacknowledged
    # (TCP_USER_TIMEOUT), so a write into a silent partition fails as well.
    keepalive_idle_s: int = Field(10, ge=1)
    keepalive_interval_s: int = Field(5, ge=1)
    keepalive_probes: int = Field(3, ge=1)
    # An idle pooled Redis connection is PINGed before reuse when idle longer than this.
    health_check_interval_s: int = Field(10, ge=0)
    # RabbitMQ publisher confirms: a publish returns once the broker has taken responsibility for the
    # message (for a quorum queue: a majority of its replicas hold it), or raises; without them a message
    # the broker dropped (a node going down) was sent as far as the publisher knew. About 1 ms a publish.
    amqp_confirm_publish: bool = True
    # The type of suture's task queues on RabbitMQ: "quorum" (replicated with Raft, durable, survive a
    # node's loss; RabbitMQ 3.8+) or "classic" (a single node's). A broker already holding classic queues
    # of the same names refuses quorum ones: ``suture migrate-queues`` moves them (docs/operations.md).
    amqp_queue_type: Literal["quorum", "classic"] = "quorum"

    @property
    def dead_after_s(self) -> int:
        """Seconds after which keep-alive (or unacknowledged data) declares a silent peer gone."""
        return self.keepalive_idle_s + self.keepalive_interval_s * self.keepalive_probes
