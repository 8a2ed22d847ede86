"""A callback given up is never silent: a metric, a Sentry event of its own group, a failed task in Flower.

The courier (``suture.workers.webhooks.courier``) tells ``given_up`` of every callback it gives up
(attempts ran out, or the target was refused at delivery). Here it:

- counts it in ``suture_callbacks_given_up_total{reason}`` (``attempts`` or ``refused``);
- sends one Sentry error, grouped by the receiver's host ("Callback given up: hooks.example.com
  answered HTTP 500 (6 attempts)"), tagged with the host and the last HTTP status; never the URL's
  path or query, nor any body;
- publishes ``suture.callback_given_up``, a task that only fails (``CallbackGivenUp``), so Flower's
  Failed tab lists the callback beside the job's id.

The job's own status holds the same facts (``callback`` in ``GET /v1/jobs/{id}``, ``suture status``,
``JobHandle.callback()``). Nothing here raises into the courier.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import sentry_sdk

from suture.config.settings import Settings
from suture.workers.runtime import metrics
from suture.workers.webhooks.sender import GivenUp

log = logging.getLogger(__name__)

GIVEN_UP_TASK = "suture.callback_given_up"


class CallbackGivenUp(Exception):
    """The failure ``suture.callback_given_up`` ends with: the job, the receiver's host, how it went."""

    def __init__(self, job_id: str, host: str, attempts: int, last: str) -> None:
        super().__init__(job_id, host, attempts, last)
        self.job_id, self.host, self.attempts, self.last = job_id, host, attempts, last

    def __str__(self) -> str:
        return (
            f"job {self.job_id}: callback to {self.host} given up after {self.attempts} attempts: {self.last}"
        )


def last_outcome(given_up: GivenUp) -> str:
    """The last attempt in a few words: ``HTTP 500``, or the error or refusal."""
    return f"HTTP {given_up.status}" if given_up.status is not None else given_up.reason


def reporter(settings: Settings) -> Callable[[GivenUp], None]:
    """The courier's ``on_given_up`` for a worker with these settings."""

    def given_up(facts: GivenUp) -> None:
        reason = "refused" if facts.reason.startswith("refused:") else "attempts"
        metrics.callback_given_up(reason)
        _sentry_event(facts)
        _flower_task(settings, facts)

    return given_up


def _sentry_event(facts: GivenUp) -> None:
    if not sentry_sdk.is_initialized():
        return
    last = last_outcome(facts)
    status = str(facts.status) if facts.status is not None else "none"
    sentry_sdk.capture_message(
        f"Callback given up: {facts.host} answered {last} ({facts.attempts} attempts)",
        level="error",
        tags={"job_id": facts.job_id, "receiver_host": facts.host, "last_status": status},
        contexts={
            "callback": {
                "job_id": facts.job_id,
                "round": facts.tag,
                "receiver_host": facts.host,
                "attempts": facts.attempts,
                "last_status": facts.status,
                "last_outcome": last,
                "hint": "the job's result is stored: fetch it with `suture result <job id>` "
                "(or GET /v1/jobs/{id}); check the receiver, and webhook.* on the workers",
            }
        },
        fingerprint=["suture", "callback_given_up", facts.host],
    )


def _flower_task(settings: Settings, facts: GivenUp) -> None:
    from suture.workers.runtime.publish import publish_or_refuse

    args = (facts.job_id, facts.host, facts.attempts, last_outcome(facts))
    try:
        publish_or_refuse(settings, GIVEN_UP_TASK, *args)
    except Exception as exc:  # Flower misses it; the metric, the event and the job's status hold it
        log.warning("job %s: callback given up, not shown in Flower: %s", facts.job_id, type(exc).__name__)
