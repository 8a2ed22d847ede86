"""``POST /v1/jobs`` against the Python producer's ``enqueue``, measured in the same run.

A private redis-server is the broker and the store (no workers: the jobs stay queued, as in a burst
of enqueues). First the producer's rate, ``enqueue()`` called back to back in this process; then a
real ``suture serve`` process is sent requests open-loop (``bench.http_load``, on a fixed schedule, so
a slow answer cannot slow the sender) at 0.5 x that rate, and its achieved rate and latency percentiles are
recorded; last its ceiling with 32 requests in flight. Figures go to the ``## HTTP API`` section of
docs/benchmarks.md. Usage: ``.venv/bin/python -m bench.bench_api [--seconds 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

from bench import machine, write_section
from bench.http_load import Connection, post_request
from suture.config.settings import load_settings
from suture.workers.local.child_process import free_port
from suture.workers.local.stack import redis_binary
from suture.workers.producer import enqueue

ROOT = Path(__file__).parents[1]
KEY = "bench-key"
DOCUMENT = (ROOT / "examples" / "photosynthesis.md").read_text()[:3000]
BODY = {"contract": "quiz", "input": DOCUMENT, "questions": 5}


def producer_rate(url: str, seconds: float) -> dict[str, float]:
    """Back-to-back ``enqueue()`` calls in this process: rate and latency."""
    env = {"SUTURE_REDIS_URL": url, "SUTURE_BROKER_URL": url}
    os.environ.update(env)
    settings = load_settings()
    for _ in range(50):  # warm-up: connections, scripts
        enqueue("quiz", DOCUMENT, questions=5, settings=settings)
    samples: list[float] = []
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        t0 = time.perf_counter()
        enqueue("quiz", DOCUMENT, questions=5, settings=settings)
        samples.append((time.perf_counter() - t0) * 1000)
    return _figures(samples, time.perf_counter() - started)


async def open_loop(base: str, rate: float, seconds: float, connections: int = 64) -> dict[str, float]:
    """Requests sent at ``rate`` per second on a fixed schedule; every answer must be a 202.

    A request's time runs from its scheduled moment, so one waiting for a free connection counts.
    """
    request = post_request(base, "/v1/jobs", BODY, {"Authorization": f"Bearer {KEY}"})
    idle: asyncio.Queue[Connection] = asyncio.Queue()
    for _ in range(connections):
        idle.put_nowait(await Connection.open(base))
    samples: list[float] = []
    failures = 0

    async def one(t0: float) -> None:
        nonlocal failures
        connection = await idle.get()
        try:
            failures += await connection.send(request) != 202
        finally:
            idle.put_nowait(connection)
        samples.append((time.perf_counter() - t0) * 1000)

    # Warm every server process (each loads the producer's machinery on its first request): requests
    # on all the connections at once, so the kernel spreads them over the processes sharing the port.
    for _ in range(4):
        await asyncio.gather(*(one(time.perf_counter()) for _ in range(connections)))
    samples.clear()
    failures = 0
    started = time.perf_counter()
    tasks = []
    for i in range(int(rate * seconds)):
        due = started + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(due)))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    while not idle.empty():
        await idle.get_nowait().close()
    return _figures(samples, elapsed) | {"failures": float(failures)}


async def ceiling(base: str, seconds: float, in_flight: int = 32) -> dict[str, float]:
    """Closed loop with ``in_flight`` requests outstanding: the most the server answers."""
    request = post_request(base, "/v1/jobs", BODY, {"Authorization": f"Bearer {KEY}"})
    samples: list[float] = []
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        connection = await Connection.open(base)
        try:
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                await connection.send(request)
                samples.append((time.perf_counter() - t0) * 1000)
        finally:
            await connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return _figures(samples, time.perf_counter() - started)


def _figures(samples: list[float], elapsed_s: float) -> dict[str, float]:
    ordered = sorted(samples)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {
        "requests": float(len(samples)),
        "rate": len(samples) / elapsed_s,
        "p50_ms": statistics.median(ordered),
        "p99_ms": rank(0.99),
    }


def start_server(url: str, workers: int) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_"))}
    env |= {"SUTURE_REDIS_URL": url, "SUTURE_BROKER_URL": url, "SUTURE_API__KEYS": f'["{KEY}"]'}
    # One key at hundreds of requests a second: the per-key limit (600 a minute by default) is off
    # here, as for a trusted web app given its own limit; no callbacks, so no secret to sign them.
    env |= {"SUTURE_API__RATE_LIMIT_PER_MINUTE": "0", "SUTURE_WEBHOOK__ENABLED": "false"}
    argv = [sys.executable, "-m", "suture", "serve", "--port", "0", "--workers", str(workers)]
    process = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def run(seconds: float) -> dict[str, Any]:
    binary = redis_binary()
    assert binary, "no redis-server"
    with tempfile.TemporaryDirectory(prefix="suture-bench-api-") as folder:
        port = free_port()
        server = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", folder],
            stdout=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            _wait_redis(url)
            producer = producer_rate(url, seconds)
            sides = {workers: serve_side(url, workers, producer["rate"] * 0.5, seconds) for workers in (1, 2)}
        finally:
            server.terminate()
            server.wait(timeout=10)
    return {"producer": producer, "sides": sides, "seconds": seconds}


def serve_side(url: str, workers: int, rate: float, seconds: float) -> dict[str, dict[str, float]]:
    """One `suture serve --workers N`: open loop at ``rate``, then its ceiling."""
    redis.Redis.from_url(url).flushdb()
    api, base = start_server(url, workers)
    try:
        sustained = asyncio.run(open_loop(base, rate, seconds))
        redis.Redis.from_url(url).flushdb()
        top = asyncio.run(ceiling(base, seconds))
    finally:
        api.terminate()
        api.wait(timeout=15)
        if api.stdout:
            api.stdout.close()
    return {"sustained": sustained, "ceiling": top}


def _wait_redis(url: str) -> None:
    client = redis.Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            return
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def report(figures: dict[str, Any]) -> str:
    p = figures["producer"]
    target = p["rate"] * 0.5
    rows = [_row("Python producer, `enqueue()` back to back", p)]
    verdicts = []
    for workers, side in figures["sides"].items():
        s, c = side["sustained"], side["ceiling"]
        rows.append(_row(f"`serve --workers {workers}`: open loop at 0.5 x the producer ({target:.0f}/s)", s))
        rows.append(_row(f"`serve --workers {workers}`: 32 in flight (its ceiling)", c))
        met = s["rate"] >= 0.95 * target and s["failures"] == 0 and s["p99_ms"] < 50
        verdicts.append(
            f"`--workers {workers}`: **{'met' if met else 'NOT met'}** (sustained "
            f"{s['rate'] / p['rate']:.2f} x, "
            f"{s['failures']:.0f} non-202 answers, p99 {s['p99_ms']:.1f} ms)"
        )
    table = "\n".join(rows)
    return f"""Machine: {machine()}. `suture serve` (uvicorn) over a private redis-server as broker and
store, no Celery workers (jobs stay queued); the client (`bench/http_load.py`: pre-built requests on 64
keep-alive
connections) and Redis share the same 2 cores; uvicorn serves on uvloop and httptools. Each side ran
{figures["seconds"]:g} s; a 3,000-character document, 5 questions; figures from one run.

| side | requests | rate (/s) | p50 (ms) | p99 (ms) |
|---|---|---|---|---|
{table}

Target (issue 13): `POST /v1/jobs` sustains >= 0.5 x the producer's rate with p99 under 50 ms at that
rate. {"; ".join(verdicts)}.
"""


def _row(label: str, f: dict[str, float]) -> str:
    return f"| {label} | {f['requests']:.0f} | {f['rate']:.0f} | {f['p50_ms']:.2f} | {f['p99_ms']:.2f} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    figures = run(args.seconds)
    text = report(figures)
    print(text)
    write_section("HTTP API", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
