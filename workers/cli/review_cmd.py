"""``suture review OUT``: a batch's quizzes in the browser, to accept, edit or regenerate (until Ctrl-C).

Serves ``suture.workers.batch.review_app`` on ``listen.review_host`` (127.0.0.1 by default), behind
``review_guard`` (Host and Origin checks); the first stdout line is the page's URL (with its secret
path), at the address the socket bound. Regenerations run in this process on the configured model, else on the
simulator, started here (stderr says so). Everything is written to OUT (quizzes.jsonl, the ledger,
traces), so a rerun of the batch keeps what a person did.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from suture.config.listen_settings import http_url
from suture.workers.cli import UsageError
from suture.workers.cli.common import settings_from
from suture.workers.printable import shown


def register(subparsers: Any) -> None:
    """Add ``suture review``."""
    parser = subparsers.add_parser(
        "review",
        help="review a batch's quizzes in the browser: accept, edit, regenerate questions",
        description="Serve a review view of OUT (a `suture batch` output folder) on listen.review_host "
        "(127.0.0.1). The first line printed is its URL. Accepting, editing and regenerating write to OUT.",
    )
    parser.add_argument("out", metavar="OUT", help="the batch's output folder")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check OUT, start the model endpoint, print the URL, serve until interrupted."""
    import uvicorn

    from suture.workers.batch.review_app import create_review_app
    from suture.workers.batch.review_guard import ReviewGuard
    from suture.workers.cli.generate_cmd import _model_endpoint
    from suture.workers.cli.serve_cmd import _listen
    from suture.workers.model.client import get_model_client

    out = Path(args.out)
    if not (out / "quizzes.jsonl").is_file() or not (out / "ledger.jsonl").is_file():
        raise UsageError(
            f"{shown(out)} is not the output folder of a batch (no quizzes.jsonl and ledger.jsonl)"
        )
    settings = settings_from(args)
    host = settings.listen.review_host
    sock = _listen(host, args.port)
    with _model_endpoint(settings) as (live, _simulated):
        app, token = create_review_app(out, live, lambda: get_model_client(live).call)
        bound, port = sock.getsockname()[:2]
        print(http_url(bound, port, f"/{token}/"), flush=True)
        print("suture review: Ctrl-C stops it; everything done is already written to OUT", file=sys.stderr)
        options: dict[str, Any] = {"log_level": "warning", "access_log": False, "server_header": False}
        guarded = ReviewGuard(app, host)  # Host (DNS rebinding) and Origin (forms from other sites)
        uvicorn.Server(uvicorn.Config(guarded, **options)).run(sockets=[sock])
    return 0
