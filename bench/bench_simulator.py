"""Throughput of the SIMULATED model server: requests/s at latency scale 0, and slow requests in flight.

Run ``python -m bench.bench_simulator``; writes the ``## Simulator`` section of docs/benchmarks.md.
The simulator runs as ``suture simulator`` in its own process (one of the two cores); the load
generator is an asyncio aiohttp client in this process. Exit 1 if the 500 req/s target is missed.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp

from bench import machine, write_section
from tests.fixtures.redis_server import free_port

TARGET_RPS = 500
DURATION_S = 6.0
CONCURRENCY = 32
IN_FLIGHT = 500
DOCUMENT = " ".join(
    f"Topic {i} explains that the {word} process changes {other} conditions in the studied system."
    for i, (word, other) in enumerate(
        zip(
            ["cellular", "thermal", "chemical", "orbital", "tidal", "seasonal", "magnetic", "acoustic"] * 3,
            ["local", "global", "internal", "external", "surface", "deep", "upper", "lower"] * 3,
            strict=True,
        )
    )
)


@contextmanager
def simulator_process(*args: str) -> Iterator[str]:
    """``suture simulator ARGS`` in a child process on a free port; yields its base URL."""
    command = [sys.executable, "-m", "suture", "simulator", "--port", str(free_port()), *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


def simulator(latency_scale: float) -> Any:
    """``suture simulator`` at ``latency_scale``, seed 0; yields its base URL."""
    return simulator_process("--latency-scale", str(latency_scale), "--seed", "0")


def payload(kind: str, variant: int) -> bytes:
    """A full 15-question quiz request, or a surgical slice request, distinct per variant."""
    if kind == "full":
        user = (
            "Write exactly 15 questions, each with exactly 4 options. Run "
            f"{variant}.\n<document>\n{DOCUMENT}\n</document>"
        )
        name = "quiz"
    else:
        question = {
            "question": "Which?",
            "options": ["cellular process changes", "a", "b", "c"],
            "correct_answer_index": 0,
            "correct_answer_text": "cellular process changes",
            "explanation": "e",
            "source_quote": "q",
        }
        user = (
            f'Run {variant}.\n<document>\n{DOCUMENT}\n</document>\n<slice pointer="/questions/0">'
            f"{json.dumps(question)}</slice>"
        )
        name = "quiz_slice"
    body = {
        "model": "gpt-5-nano",
        "messages": [{"role": "user", "content": user}],
        "reasoning_effort": "low",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": {}, "strict": True},
        },
    }
    return json.dumps(body).encode()


async def throughput(url: str, kind: str) -> dict[str, Any]:
    """Requests/s and latency percentiles with CONCURRENCY clients for DURATION_S."""
    latencies_ms: list[float] = []
    errors = 0
    deadline = time.monotonic() + DURATION_S
    headers = {"Content-Type": "application/json"}

    async def worker(session: aiohttp.ClientSession, offset: int) -> None:
        nonlocal errors
        variant = offset
        while time.monotonic() < deadline:
            started = time.perf_counter()
            async with session.post(
                f"{url}/chat/completions", data=payload(kind, variant), headers=headers
            ) as r:
                await r.read()
                errors += r.status != 200
            latencies_ms.append((time.perf_counter() - started) * 1000)
            variant += CONCURRENCY

    started = time.monotonic()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:
        await asyncio.gather(*(worker(session, i) for i in range(CONCURRENCY)))
    elapsed_s = time.monotonic() - started
    latencies_ms.sort()
    return {
        "kind": kind,
        "requests": len(latencies_ms),
        "rps": len(latencies_ms) / elapsed_s,
        "p50_ms": statistics.median(latencies_ms),
        "p99_ms": latencies_ms[int(len(latencies_ms) * 0.99)],
        "errors": errors,
    }


async def in_flight(url: str) -> dict[str, Any]:
    """IN_FLIGHT slow requests (latency scale 1) started at once: wall time vs one request's latency."""
    body = payload("slice", 0)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=IN_FLIGHT)) as session:

        async def one() -> float:
            started = time.perf_counter()
            async with session.post(
                f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
            ) as r:
                await r.read()
                assert r.status == 200
            return time.perf_counter() - started

        single_s = await one()
        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(IN_FLIGHT)))
        return {"single_s": single_s, "wall_s": time.perf_counter() - started}


def main() -> int:
    """Measure, print, write the section; 1 if the throughput target is missed."""
    load_1m = os.getloadavg()[0]  # other work on the machine shares the two cores
    with simulator(0.0) as url:
        results = [asyncio.run(throughput(url, kind)) for kind in ("full", "slice")]
    with simulator(1.0) as url:
        flight = asyncio.run(in_flight(url))
    rows = "\n".join(
        f"| {r['kind']} | {r['requests']} | {r['rps']:.0f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
        f"{r['errors']} |"
        for r in results
    )
    worst = min(r["rps"] for r in results)
    met = worst >= TARGET_RPS
    body = f"""Machine: {machine()}; 1-minute load average {load_1m:.2f} when the run started.
Server: `suture simulator` (**a simulation, not a real model**), `realistic` profile, seed 0, its own process;
load: aiohttp client in a second process, {CONCURRENCY} concurrent keep-alive connections for
{DURATION_S:.0f} s,
gpt-5-nano@low, every request a distinct prompt (full: a 15-question quiz from a {len(DOCUMENT)}-character
document; slice: one `/questions/0` surgical slice).

| request | requests | req/s | p50 ms | p99 ms | errors |
|---|---:|---:|---:|---:|---:|
{rows}

Target: >= {TARGET_RPS} req/s at latency scale 0: {"met" if met else "MISSED"}
(slowest kind {worst:.0f} req/s).

In flight at latency scale 1: {IN_FLIGHT} slice requests started at once finished in {flight["wall_s"]:.2f} s;
one alone takes {flight["single_s"]:.2f} s (served concurrently, not queued).
"""
    print(body)
    write_section("Simulator", body)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
