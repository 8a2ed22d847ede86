"""``suture serve``: the HTTP API and the review pages, until Ctrl-C.

The first stdout line is the base URL (``http://HOST:PORT``; ``--port 0`` picks a free port), so
scripts can wait for it. Settings resolve as for every producer-side command. With no ``api.keys``
configured, a key is made for this run and shown once on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import sys
from typing import Any

from pydantic import SecretStr

from suture.config.listen_settings import http_url
from suture.config.service_settings import ApiKey
from suture.config.settings import Settings
from suture.workers.cli import UsageError
from suture.workers.cli.common import producer_settings


def register(subparsers: Any) -> None:
    """Add ``suture serve``."""
    parser = subparsers.add_parser(
        "serve",
        help="serve the HTTP API and the review pages",
        description="Serve the HTTP API (/v1/jobs, /v1/stats, /healthz, /openapi.json) and the review "
        "pages (/review) over the configured broker and store. Prints the base URL first.",
    )
    parser.add_argument("--host", help="address to listen on (default: api.host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default: api.port, 8000; 0: a free one)")
    parser.add_argument(
        "--workers", type=int, help="server processes sharing the port (default: api.workers, 1)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Listen, print the base URL, serve until interrupted."""
    import uvicorn

    from suture.workers.api import create_app
    from suture.workers.api.connections import ReadLimits, ServerConfig
    from suture.workers.runtime.app import CeleryConfigError, configure
    from suture.workers.webhooks.signing import check_secret

    settings = _with_key(producer_settings(args))
    problem = check_secret(settings.webhook.secret) or _unsigned(settings)
    if problem:
        raise UsageError(problem)
    try:
        configure(settings)
    except CeleryConfigError as exc:
        raise UsageError(str(exc)) from None
    host = args.host or settings.api.host
    port = settings.api.port if args.port is None else args.port
    sock = _listen(host, port)
    print(http_url(*sock.getsockname()[:2]), flush=True)  # the address the socket has, not the name given
    workers = args.workers or settings.api.workers
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    options: dict[str, Any] = {"log_level": "warning", "access_log": False, "server_header": False}
    options["timeout_keep_alive"] = 5
    # A cap on connections (503 past it), deadlines for a request's head and body and a cap on the
    # head's size (workers/api/connections.py), so half-sent requests cannot pile up (issue 33).
    options["limit_concurrency"] = settings.api.max_connections
    options["h11_max_incomplete_event_size"] = settings.api.max_header_bytes
    options["read_limits"] = ReadLimits.of(settings.api)
    if workers == 1:
        uvicorn.Server(ServerConfig(create_app(settings), **options)).run(sockets=[sock])
        return 0
    from uvicorn.supervisors import Multiprocess

    # Each process builds its app from the same settings: this process's environment, plus the
    # config file and a generated key handed down the same way (never on a command line).
    if args.config:
        os.environ["SUTURE_CONFIG"] = str(args.config)
    keys = [{"key": k.key.get_secret_value(), "operator": k.operator} for k in settings.api.keys]
    os.environ["SUTURE_API__KEYS"] = json.dumps(keys)
    factory = "suture.workers.api.app:from_environment"
    config = ServerConfig(factory, factory=True, workers=workers, **options)
    Multiprocess(config, sockets=[sock]).run()
    return 0


def _unsigned(settings: Settings) -> str | None:
    """Why serve will not start without a webhook secret, or None.

    Refused rather than generated: the workers sign callbacks, not this process, so a secret made
    here would sign nothing; and a receiver needs it configured before the first callback arrives.
    """
    secret = settings.webhook.secret
    if (secret is not None and secret.get_secret_value()) or not settings.webhook.enabled:
        return None
    return (
        "webhook.secret is not set, so callbacks would go out unsigned: set SUTURE_WEBHOOK__SECRET=whsec_... "
        '(the same for the workers, which sign them; make one with `python -c "import base64, os; '
        "print('whsec_' + base64.b64encode(os.urandom(32)).decode())\"`), or webhook.enabled: false to "
        "refuse callbacks"
    )


def _with_key(settings: Settings) -> Settings:
    if settings.api.keys:
        return settings
    key = secrets.token_urlsafe(24)
    print(f"suture serve: no api.keys set; this run's key (shown once): {key}", file=sys.stderr, flush=True)
    api = settings.api.model_copy(update={"keys": [ApiKey(key=SecretStr(key))]})
    return settings.model_copy(update={"api": api})


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
