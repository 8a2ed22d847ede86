"""Batch progress for a person: a rich live panel on a terminal, plain lines when piped or logged.

``BatchProgress.record(result)`` counts one finished job by its outcome (see
``suture.workers.reports.batch_report.outcome``);
the display shows done/total, first try, repaired surgically, escalated, soft-delivered, failed,
tokens, cost so far and an ETA from the mean pace so far.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from suture.workers.reports.batch_report import outcome


class BatchProgress:
    """Counters of a running batch and the display that shows them; a context manager."""

    def __init__(self, total: int | None = None, *, stream: TextIO | None = None, live: bool | None = None):
        self.stream = stream or sys.stdout
        self.total = total
        self.done = 0
        self.counts: Counter[str] = Counter()
        self.tokens = 0
        self.cost_usd = 0.0
        self.started_s = time.monotonic()
        self.live = self.stream.isatty() if live is None else live
        self._live: Live | None = None

    def __enter__(self) -> BatchProgress:
        if self.live:
            self._live = Live(
                self._text(), console=Console(file=self.stream, force_terminal=True), refresh_per_second=4
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._text())
            self._live.__exit__(None, None, None)
            self._live = None

    def set_total(self, total: int) -> None:
        """The number of jobs, once every section has been enqueued."""
        self.total = total

    def record(self, result: dict[str, Any]) -> None:
        """Count one finished job and refresh the display."""
        self.done += 1
        self.counts[outcome(result)] += 1
        usage = result.get("usage") or {}
        self.tokens += sum(v for v in usage.values() if isinstance(v, int))
        self.cost_usd += float(result.get("cost_usd") or 0.0)
        if self._live is not None:
            self._live.update(self._text())
        else:
            print(self.line(), file=self.stream, flush=True)

    def eta_s(self) -> float | None:
        """Seconds left at the mean pace so far; None until something finished or the total is known."""
        if not self.done or self.total is None:
            return None
        elapsed = time.monotonic() - self.started_s
        return max(0.0, elapsed / self.done * (self.total - self.done))

    def line(self) -> str:
        """One plain progress line (what a log or a pipe receives)."""
        c = self.counts
        eta = self.eta_s()
        total = "?" if self.total is None else str(self.total)
        return (
            f"[{self.done}/{total}] first try {c['first_try']}, fixed {c['fixed']}, "
            f"repaired surgically {c['repaired_surgically']}, "
            f"escalated {c['escalated']}, retried {c['retried']}, soft-delivered {c['soft_delivered']}, "
            f"failed {c['failed'] + c['refused']}; tokens {self.tokens}, cost ${self.cost_usd:.4f}, "
            f"ETA {'-' if eta is None else f'{eta:.0f} s'}"
        )

    def _text(self) -> Text:
        return Text(self.line())
