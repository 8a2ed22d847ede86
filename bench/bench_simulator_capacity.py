"""How many slow requests the SIMULATED model server holds at once, and what they cost in memory.

Run ``python -m bench.bench_simulator_capacity``; writes the ``## Simulator capacity`` section of
docs/benchmarks.md. ``suture simulator`` runs in its own process at a latency scale calibrated so
one full quiz request takes SLOW_S simulated seconds; this process opens N connections at once
(asyncio aiohttp client), waits until the server reports all N in flight (``GET /v1/_stats``),
and reads the server's RSS and thread count from /proc then and at the end (VmHWM = peak).
Exit 1 if the 1,000-request goal is missed (not all answered 200 concurrently).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bench import machine, table_head, write_section
from bench.bench_simulator import payload

CAPACITY_HEAD = table_head(
    [
        "requests",
        "200s",
        "peak in flight",
        "median latency s",
        "wall s",
        "idle RSS MB",
        "in-flight RSS MB",
        "peak RSS MB",
        "KB per request",
        "threads",
    ]
)

SLOW_S = 10.0
GOAL = 1_000
SIZES = (GOAL, 4_000)
_CALIBRATION_SCALE = 0.01


@contextmanager
def simulator(latency_scale: float) -> Iterator[tuple[str, int]]:
    """``suture simulator`` in a child process; yields its base URL and pid."""
    command = [sys.executable, "-m", "suture", "simulator", "--latency-scale", str(latency_scale)]
    command += ["--seed", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip(), process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (kB) and Threads of a process, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "Threads"):
            fields[name] = int(value.split()[0])
    return fields


async def _post(session: aiohttp.ClientSession, url: str, body: bytes) -> tuple[int, int]:
    async with session.post(
        f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
    ) as r:
        await r.read()
        return r.status, int(r.headers.get("openai-processing-ms", "0"))


def calibrate() -> float:
    """The latency scale at which one full quiz request (gpt-5-nano, low effort) takes SLOW_S."""

    async def one(url: str) -> int:
        async with aiohttp.ClientSession() as session:
            return (await _post(session, url, payload("full", 0)))[1]

    with simulator(_CALIBRATION_SCALE) as (url, _):
        simulated_s = asyncio.run(one(url)) / 1000 / _CALIBRATION_SCALE
    return SLOW_S / simulated_s


async def _stats(session: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    async with session.get(f"{url}/_stats") as r:
        return dict(await r.json())


async def burst(url: str, pid: int, size: int) -> dict[str, Any]:
    """``size`` distinct slow requests started at once; the server's memory while they are in flight."""
    idle = proc_status(pid)
    connector = aiohttp.TCPConnector(limit=size + 10)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=300)
    ) as session:
        started = time.monotonic()
        calls = [asyncio.create_task(_post(session, url, payload("full", i))) for i in range(size)]
        in_flight, loaded = 0, idle
        while in_flight < size and not all(c.done() for c in calls):
            await asyncio.sleep(0.2)
            in_flight = (await _stats(session, url))["in_flight"]
            loaded = proc_status(pid)
        ramp_s = time.monotonic() - started
        results = await asyncio.gather(*calls)
        wall_s = time.monotonic() - started
        stats = await _stats(session, url)
    latencies = sorted(ms for _, ms in results)
    return {
        "size": size,
        "ok": sum(status == 200 for status, _ in results),
        "peak_in_flight": stats["peak_in_flight"],
        "idle_mb": idle["VmRSS"] / 1024,
        "loaded_mb": loaded["VmRSS"] / 1024,
        "peak_mb": proc_status(pid)["VmHWM"] / 1024,
        "threads": loaded["Threads"],
        "ramp_s": ramp_s,
        "wall_s": wall_s,
        "median_latency_s": latencies[len(latencies) // 2] / 1000,
    }


def main() -> int:
    """Measure, print, write the section; 1 if the goal is missed."""
    load_1m = os.getloadavg()[0]
    scale = calibrate()
    rows = []
    for size in SIZES:
        with simulator(scale) as (url, pid):
            rows.append(asyncio.run(burst(url, pid, size)))
    goal = next(r for r in rows if r["size"] == GOAL)
    met = goal["ok"] == GOAL and goal["peak_in_flight"] == GOAL
    table = "\n".join(
        f"| {r['size']} | {r['ok']} | {r['peak_in_flight']} | {r['median_latency_s']:.1f} | "
        f"{r['wall_s']:.1f} "
        f"| {r['idle_mb']:.0f} | {r['loaded_mb']:.0f} | {r['peak_mb']:.0f} "
        f"| {(r['peak_mb'] - r['idle_mb']) * 1024 / r['size']:.0f} | {r['threads']} |"
        for r in rows
    )
    body = f"""Machine: {machine()}; 1-minute load average {load_1m:.2f} when the run started.
Server: `suture simulator` (**a simulation, not a real model**), one process, one asyncio event loop
(aiohttp), `realistic` profile, latency scale {scale:.3f}, at which one full 15-question quiz request
(gpt-5-nano, low effort) takes {SLOW_S:.0f} s; every request a distinct prompt, all
started at once from an aiohttp client in a second process. RSS from /proc: idle before the burst,
with every request in flight, and the peak (VmHWM).

{CAPACITY_HEAD}
{table}

Goal: >= {GOAL} concurrent slow requests, all in flight at once and answered: {"met" if met else "MISSED"}.
Threads stay flat (no thread per connection); `simulator.max_in_flight` (default 10,000) bounds
the requests answered at once, more get 503.
"""
    print(body)
    write_section("Simulator capacity", body)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
