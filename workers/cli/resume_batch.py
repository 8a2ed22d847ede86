"""``suture resume JOB --out DIR [--target POINTER]... --feedback "..."``: fix a batch's quiz from its folder.

The batch's stack may be long gone (the default setup's embedded one always is): the output folder
holds the job (``suture.workers.batch.regenerate``). With targets, only those questions are
regenerated, in this process, on the configured model or else the simulator (stderr says so); the
other questions stay byte-identical, quizzes.jsonl, the trace and the ledger are updated. Without a
target it is today's resume: a soft-delivered quiz gets a new round of the whole chain with the
feedback (a delivered one is refused: name the questions to change).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from suture.config.settings import Settings
from suture.workers.batch.regenerate import RegenerateError, Regeneration
from suture.workers.cli import UsageError
from suture.workers.cli.generate_cmd import _model_endpoint, summary


def resume_from_out(args: argparse.Namespace, settings: Settings) -> int:
    """Regenerate the targets of a batch job read from ``args.out``; prints the job id, a summary on
    stderr."""
    try:
        regeneration = Regeneration.load(Path(args.out), args.job, settings)
    except RegenerateError as exc:
        raise UsageError(str(exc)) from None
    from suture.workers.model.client import get_model_client

    with _model_endpoint(settings) as (live, simulated):
        if simulated:
            regeneration.state.spec.simulated = True
        try:
            result = regeneration.run(args.feedback, args.target, get_model_client(live).call, live)
        except RegenerateError as exc:
            raise UsageError(str(exc)) from None
    try:
        cost = regeneration.save(result)
    except RegenerateError as exc:
        print(f"suture resume: {exc}", file=sys.stderr)
        return 1
    print(args.job)
    print(f"{summary(result)}; this round ${cost:.6f}", file=sys.stderr)
    return 0 if result.get("status") in ("delivered", "soft_delivered") else 1
