"""``suture simulator``: serve a SIMULATED OpenAI-compatible model over HTTP until interrupted.

The first stdout line is the base URL (e.g. ``http://127.0.0.1:8765/v1``), flushed at once so a
parent process can read it; a one-line notice on stderr says it is a simulation.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from suture.config.settings import Settings
from suture.config.sources import environment
from suture.workers.cli import UsageError
from suture.workers.cli.common import settings_from
from suture.workers.simulator import PROFILES, SimulatorError, server_from_settings
from suture.workers.simulator.errors import LimitsError
from suture.workers.simulator.limits import RateLimit, parse_limit
from suture.workers.simulator.profiles import FAULT_NAMES
from suture.workers.simulator.server import SimulatorServer
from suture.workers.simulator.serving import base_url, bind, serve_forever

DESCRIPTION = (
    "Run a SIMULATED OpenAI-compatible model server (POST /v1/chat/completions, GET /v1/models). "
    "It is a simulation, not a real model: it writes grounded quizzes from the <document> in the "
    "prompt, with per-model structural bias reproduced from production data. Profiles: realistic "
    "(biased like gpt-5-nano/mini/gpt-5), perfect (always valid), chaos (plus malformed JSON, "
    "truncation, refusals, empty replies, 429s, 500s, slow replies, dropped connections). Replies "
    "report cached prompt tokens as OpenAI's automatic prompt caching does. It meters per-model "
    "RPM/TPM limits like OpenAI (429 with x-ratelimit-* headers), serves OpenAI's Files and Batch "
    "APIs (/v1/files, /v1/batches; state kept in memory while it runs) and counts what it did at "
    "GET /v1/_stats."
)


def register(subparsers: Any) -> None:
    """Add the ``simulator`` subcommand."""
    parser = subparsers.add_parser(
        "simulator", help="run a SIMULATED OpenAI-compatible model server", description=DESCRIPTION
    )
    parser.add_argument("--host", help="address to listen on (default: listen.simulator_host, 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: a free port)")
    parser.add_argument(
        "--profile", choices=sorted(PROFILES), help="behaviour (default from config: realistic)"
    )
    parser.add_argument("--latency-scale", type=float, help="1.0 ~ real-world latency, 0 = instant")
    parser.add_argument("--seed", type=int, help="seed of every simulated draw (default from config)")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME=RATE",
        help=f"override a chaos fault share, over simulator.faults in config ({', '.join(FAULT_NAMES)})",
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="MODEL=RPM/TPM",
        help="meter a model like the provider, e.g. gpt-5-nano=5000/2000000 (an empty side is not "
        "limited); repeatable; replaces that model's simulator.limits entry",
    )
    parser.add_argument(
        "--batch-delay-s",
        type=float,
        help="wall-clock seconds a batch takes from in_progress to completed (default from config: 5)",
    )
    parser.add_argument(
        "--batch-expire-rate",
        type=float,
        help="share of batches that expire with half their lines done (0..1, seeded)",
    )
    parser.add_argument(
        "--batch-line-error-rate",
        type=float,
        help="share of batch lines answered with a 500 in the error file (0..1, seeded)",
    )
    parser.add_argument(
        "--require-key-env",
        metavar="VAR",
        help="require the API key held in environment variable VAR (else 401)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Bind, announce the URL, serve until SIGINT/SIGTERM; returns 0."""
    server, settings = _server(args)
    host = args.host or settings.listen.simulator_host
    try:
        sock = bind(host, args.port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{args.port}: {exc.strerror or exc}") from None
    url = base_url(sock)

    def announce() -> None:
        print(url, flush=True)
        print(
            f"suture simulator: SIMULATED OpenAI-compatible model server (not a real model) at {url} "
            f"profile={server.profile.name} latency-scale={server.latency_scale} seed={server.seed}"
            + "".join(
                f" limit={m}:{lim.rpm or '-'}/{lim.tpm or '-'}" for m, lim in server.limiter.limits.items()
            ),
            file=sys.stderr,
            flush=True,
        )

    serve_forever(server, sock, announce)
    return 0


def _server(args: argparse.Namespace) -> tuple[SimulatorServer, Settings]:
    settings = settings_from(args)
    if args.latency_scale is not None and args.latency_scale < 0:
        raise UsageError(f"--latency-scale must be >= 0, got {args.latency_scale}")
    try:
        server = server_from_settings(
            settings,
            profile=args.profile,
            latency_scale=args.latency_scale,
            seed=args.seed,
            faults=_fault_flags(args.fault),
            api_key=_required_key(args.require_key_env),
            limits=_limit_flags(args.limit),
            batch=_batch_flags(args),
        )
    except SimulatorError as exc:
        raise UsageError(str(exc)) from None
    return server, settings


def _fault_flags(items: list[str]) -> dict[str, float]:
    rates: dict[str, float] = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            rate = float(value)
        except ValueError:
            rate = -1.0
        if name not in FAULT_NAMES or not 0 <= rate <= 1:
            raise UsageError(
                f"--fault wants NAME=RATE with NAME in {', '.join(FAULT_NAMES)} and 0<=RATE<=1, got {item!r}"
            )
        rates[name] = rate
    return rates


def _limit_flags(items: list[str]) -> dict[str, RateLimit]:
    limits: dict[str, RateLimit] = {}
    for item in items:
        try:
            model, limit = parse_limit(item)
        except LimitsError as exc:
            raise UsageError(f"--limit: {exc}") from None
        limits[model] = limit
    return limits


def _batch_flags(args: argparse.Namespace) -> dict[str, float]:
    flags = {
        "--batch-delay-s": ("delay_s", args.batch_delay_s, math.inf),
        "--batch-expire-rate": ("expire_rate", args.batch_expire_rate, 1.0),
        "--batch-line-error-rate": ("line_error_rate", args.batch_line_error_rate, 1.0),
    }
    chosen: dict[str, float] = {}
    for flag, (name, value, most) in flags.items():
        if value is None:
            continue
        if not 0 <= value <= most:
            bounds = ">= 0" if most == math.inf else "in 0..1"
            raise UsageError(f"{flag} must be {bounds}, got {value}")
        chosen[name] = value
    return chosen


def _required_key(variable: str | None) -> str | None:
    if variable is None:
        return None
    key = environment().get(variable)
    if not key:
        raise UsageError(f"--require-key-env: environment variable {variable} is not set")
    return key
