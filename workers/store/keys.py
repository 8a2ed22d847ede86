"""The job store's Redis key names, in one place so every store module and script agrees on them.

The layout they make is drawn in the ``suture.workers.store.job_store`` module docstring.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Keys:
    """Key names under one prefix (``suture`` by default)."""

    prefix: str

    def job(self, job_id: str) -> str:
        return f"{self.prefix}:job:{job_id}"

    def flags(self, job_id: str) -> str:
        return f"{self.prefix}:job:{job_id}:flags"

    def slices(self, job_id: str, n: int) -> str:
        return f"{self.prefix}:job:{job_id}:slices:{n}"

    def history(self, job_id: str) -> str:
        return f"{self.prefix}:job:{job_id}:history"

    def idempotency(self, key: str) -> str:
        return f"{self.prefix}:idem:{key}"

    def done(self, job_id: str) -> str:
        return f"{self.prefix}:done:{job_id}"

    def last_accepted(self) -> str:
        return f"{self.prefix}:last_accepted"

    def gone(self, job_id: str) -> str:
        return f"{self.prefix}:gone:{job_id}"

    def events(self, job_id: str) -> str:
        return f"{self.prefix}:events:{job_id}"

    def progress(self) -> str:
        return f"{self.prefix}:progress"

    def deadlines(self) -> str:
        return f"{self.prefix}:deadlines"

    def workers(self) -> str:
        return f"{self.prefix}:workers"

    def worker_slots(self) -> str:
        return f"{self.prefix}:workers:slots"

    def workers_in_hand(self) -> str:
        return f"{self.prefix}:workers:in_hand"

    def review(self) -> str:
        return f"{self.prefix}:review"

    def review_of(self, tenant: str | None) -> str:
        """One tenant's review list ("" or None: the operator's, jobs enqueued without a tenant)."""
        return self.review_tenants() + (tenant or "")

    def review_tenants(self) -> str:
        """What every tenant's review list name starts with (the scripts add the job's stored tenant)."""
        return f"{self.prefix}:review:t:"

    def review_indexed(self) -> str:
        return f"{self.prefix}:review:indexed"

    def callbacks(self) -> str:
        return f"{self.prefix}:callbacks"

    def workers_webhook(self) -> str:
        return f"{self.prefix}:workers:webhook"
