"""The runtime's observer of the job flow: Flower progress, Prometheus metrics and Sentry alerts.

``RuntimeObserver`` implements ``suture.workers.flow.observer.Observer`` for a worker (or any process
that ends jobs, e.g. one that cancels them): progress goes out as a ``task-progress`` event of the
running Celery task, attempts and endings are counted in ``suture.workers.runtime.metrics``, and the
endings and redone work an operator must see become Sentry events (``alerts``, ``incidents``) when
Sentry is on. Every call is best-effort: logged at most, never raised into the flow.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from suture.config.settings import Settings
from suture.tasks.job import JobState, contract_for
from suture.tasks.trace import AttemptRecord
from suture.workers.flow.observer import Progress, Redone
from suture.workers.runtime import alerts, incidents, metrics
from suture.workers.runtime.sentry import enabled, strings_of
from suture.workers.store import job_events
from suture.workers.store.job_store import get_store
from suture.workers.store.keys import Keys
from suture.workers.store.records import JobRecord

log = logging.getLogger(__name__)


class RuntimeObserver:
    """Turns what happens to jobs into progress events, metrics and alerts."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def running(self, progress: Progress) -> None:
        from celery import current_task

        self._publish(
            progress.job_id,
            job_events.running(
                progress.job_id,
                step=progress.step,
                attempt=progress.attempt,
                failures=progress.failures,
                doing=progress.doing,
            ),
        )

        from suture.workers.runtime.events import report_progress

        if current_task and current_task.request.id:
            report_progress(
                current_task,
                progress.job_id,
                step=progress.step,
                attempt=progress.attempt,
                failures=progress.failures,
                status=progress.doing,
            )

    def attempt_done(self, record: JobRecord, attempt: AttemptRecord, *, late: bool) -> None:
        if not late:
            self._publish(record.job_id, job_events.attempt(record.job_id, attempt.public()))
        try:
            metrics.attempt_done(str(record.spec.get("contract")), attempt.public())
        except Exception:
            log.warning("job %s: attempt %d not counted in metrics", record.job_id, attempt.n, exc_info=True)

    def ended(self, record: JobRecord, state: JobState, result: dict[str, Any]) -> None:
        self._publish(record.job_id, job_events.delivered(record.job_id, str(result.get("status"))))
        contract = str(record.spec.get("contract"))
        try:
            seconds = time.time() - record.started_s if record.started_s else None
            metrics.job_ended(contract, result, seconds, str(record.spec.get("priority") or "interactive"))
        except Exception:
            log.warning("job %s: its end was not counted in metrics", record.job_id, exc_info=True)
        if not enabled():
            return
        try:
            alerts.report_final(result, self.facts(record, state))
        except Exception as exc:  # reporting is best-effort; the result is already stored
            log.warning("job %s: not reported to Sentry: %s", record.job_id, type(exc).__name__)

    def redone(self, record: JobRecord, kind: Redone, what: str) -> None:
        if not enabled():
            return
        try:
            incidents.report_redone(self.facts(record, None), kind, what)
        except Exception as exc:
            log.warning("job %s: redone work not reported to Sentry: %s", record.job_id, type(exc).__name__)

    def _publish(self, job_id: str, event: dict[str, Any]) -> None:
        """The job's followers (``suture.aio``'s ``events()``) see the event; best-effort."""
        try:
            store = get_store(self._settings)
            job_events.publish(store.redis, Keys(store.prefix), job_id, event)
        except Exception as exc:
            log.info("job %s: event not published: %s", job_id, type(exc).__name__)

    def facts(self, record: JobRecord, state: JobState | None) -> alerts.JobFacts:
        """What alerts may say about the job (names, settings), and its text to keep out of them."""
        spec = record.spec
        source = record.meta.get("source") if isinstance(record.meta.get("source"), dict) else {}
        origin = {k: source.get(k) for k in ("file", "section", "title", "pages")} if source else {}
        sensitive = [str(spec.get("input") or "")]
        if state is not None and state.best is not None:
            sensitive.append(strings_of(state.best.output))
        return alerts.JobFacts(
            job_id=record.job_id,
            contract=str(spec.get("contract")),
            title=_title(state) or str(spec.get("contract")).capitalize(),
            params=dict(spec.get("params") or {}),
            policy=spec.get("policy") or self._settings.default_policy,
            batch=spec.get("batch"),
            origin=origin,
            public_url=self._settings.api.public_url,
            sensitive=sensitive,
            tenant=record.tenant,
        )


def _title(state: JobState | None) -> str | None:
    if state is None:
        return None
    try:
        return contract_for(state.spec).title
    except Exception:  # a contract that cannot be rebuilt still gets its alert
        return None
