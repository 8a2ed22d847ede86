"""Batch progress: plain lines when not on a terminal, the counts a person watches."""

from __future__ import annotations

import io
from typing import Any

from suture.workers.reports.progress import BatchProgress


def _result(status: str, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "status": status,
        "attempts": attempts,
        "usage": {"input_tokens": 100, "output_tokens": 50},
        "cost_usd": 0.002,
    }


NANO = {"mode": "full", "model": "gpt-5-nano"}
SURGICAL = {"mode": "surgical", "model": "gpt-5-nano"}
MINI = {"mode": "full", "model": "gpt-5-mini"}


def test_plain_progress_prints_one_line_per_finished_job() -> None:
    # Given a progress display on a pipe, for 4 jobs
    out = io.StringIO()
    with BatchProgress(stream=out) as progress:
        progress.set_total(4)
        # When jobs finish in every way
        progress.record(_result("delivered", [NANO]))
        progress.record(_result("delivered", [NANO, SURGICAL]))
        progress.record(_result("delivered", [NANO, MINI]))
        progress.record(_result("failed", [NANO]))
    lines = out.getvalue().splitlines()
    # Then each finished job prints a line, and the last one carries every count
    assert len(lines) == 4
    assert lines[-1].startswith("[4/4] first try 1, fixed 0, repaired surgically 1, escalated 1")
    assert "failed 1" in lines[-1] and "tokens 600" in lines[-1] and "cost $0.0080" in lines[-1]
    assert "ETA 0 s" in lines[-1]


def test_eta_is_unknown_until_the_total_is_known() -> None:
    progress = BatchProgress(stream=io.StringIO(), live=False)
    progress.record(_result("delivered", [NANO]))
    assert progress.eta_s() is None and "[1/?]" in progress.line()


def test_live_display_draws_on_a_terminal_like_stream() -> None:
    out = io.StringIO()
    with BatchProgress(total=1, stream=out, live=True) as progress:
        progress.record(_result("soft_delivered", [NANO]))
    assert "soft-delivered 1, failed 0" in " ".join(out.getvalue().split())
