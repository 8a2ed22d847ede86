"""A silent network partition between the workers and Redis, in the middle of 200 jobs: nothing lost,
nothing twice, nothing stuck, and work resuming within seconds of the link's return.

Redis (AOF everysec, noeviction, as in the compose file) runs in one network namespace, two
``suture worker``-equivalent Celery workers (``-c 20``, every queue) in another; the simulator (latency
scale 0.1) and the test itself reach each side on links of their own (tests/fixtures/netns.py). Mid-run
the Redis end of the workers' link goes down while the workers keep a permanent neighbour entry: their
packets vanish with no error, as when a host disappears. Without timeouts and short keep-alive a worker
then sat blocked on a socket for up to 15 minutes (issue 38); with them (``network:`` settings) it must
notice, reconnect when the link returns and carry on.

Model calls are counted at the simulator and in the traces; the difference (calls paid that no trace
records: a reply lost with the link) is reported as a figure.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from suture.config.settings import Settings
from suture.workers.producer import enqueue
from suture.workers.simulator import start_simulator
from suture.workers.store.job_store import get_store
from tests.fixtures.netns import PartitionHosts, silent_partition_hosts
from tests.fixtures.redis_server import free_port, redis_server_binary
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import (
    DeliveryCounter,
    trace_problems,
    traced_calls,
    varied_document,
    wait_until,
)
from tests.reliability.soak_report import write_section

pytestmark = pytest.mark.integration

JOBS = 200
LATENCY_SCALE = 0.1
RESUME_WITHIN_S = 10.0
STUCK_AFTER_S = 60.0
# What the workers run with here beyond the suite's fixture: the defaults of the stall backstop's
# ancestors would leave a job waiting for minutes, which is what this test must not need.
ENV = {"SUTURE_WORKER__JOB_DEADLINE_S": "900", "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "2"}


@pytest.fixture
def hosts() -> Iterator[PartitionHosts]:
    if os.geteuid() != 0:
        pytest.fail("the partition test needs root (network namespaces); CI runs as root")
    with silent_partition_hosts() as made:
        yield made


@pytest.fixture
def redis_port(hosts: PartitionHosts, tmp_path: Path) -> Iterator[int]:
    """A redis-server on the Redis host (AOF everysec, noeviction, as in the compose file): its port.

    Requested before ``delivery_counter``, so it stops after the test's subscription to it.
    """
    port = free_port()
    command = [*hosts.in_redis_ns(), redis_server_binary(), "--port", str(port), "--bind", "0.0.0.0"]
    command += ["--protected-mode", "no", "--dir", str(tmp_path), "--save", ""]
    command += ["--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory-policy", "noeviction"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(host=hosts.redis_for_test, port=port, socket_connect_timeout=1)
        wait_until(lambda: _answers(client), 20, "redis-server in its namespace")
        client.close()
        yield port
    finally:
        process.kill()
        process.wait(timeout=10)


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.RedisError:
        return False


@pytest.mark.parametrize(
    "partition_s",
    [
        pytest.param(30.0, id="30s", marks=pytest.mark.timeout(600)),
        pytest.param(120.0, id="120s", marks=[pytest.mark.soak, pytest.mark.timeout(900)]),
    ],
)
def test_a_silent_partition_mid_run_loses_nothing_and_work_resumes_within_seconds(
    partition_s: float,
    hosts: PartitionHosts,
    redis_port: int,
    celery_stack: Callable[..., CeleryStack],
    delivery_counter: Callable[[str], DeliveryCounter],
) -> None:
    # Given Redis on one host, two workers on another, the simulator reachable from the workers
    simulator = start_simulator("realistic", LATENCY_SCALE, seed=5, host=hosts.simulator_host)
    try:
        _run(partition_s, hosts, redis_port, simulator, celery_stack, delivery_counter)
    finally:
        simulator.stop()


def _run(
    partition_s: float,
    hosts: PartitionHosts,
    port: int,
    simulator: Any,
    celery_stack: Callable[..., CeleryStack],
    delivery_counter: Callable[[str], DeliveryCounter],
) -> None:
    for_workers = f"redis://{hosts.redis_for_workers}:{port}/0"
    for_test = f"redis://{hosts.redis_for_test}:{port}/0"
    urls = {"SUTURE_REDIS_URL": for_workers, "SUTURE_RESULT_BACKEND": for_workers}
    stack = celery_stack(simulator.base_url, broker_url=for_workers, **urls, **ENV)
    workers = [stack.start_worker(concurrency=20, prefix=tuple(hosts.in_worker_ns())) for _ in range(2)]
    producer: Settings = stack.settings.model_copy(
        update={"broker_url": for_test, "redis_url": for_test, "result_backend": for_test}
    )
    deliveries = delivery_counter(for_test)
    # ...and 200 jobs enqueued
    handles = [enqueue("quiz", varied_document(i), questions=3, settings=producer) for i in range(JOBS)]
    job_ids = {h.id for h in handles}
    started = time.monotonic()

    def delivered() -> int:
        return len(set(deliveries.snapshot()) & job_ids)

    # When the workers' link to Redis goes silent for partition_s once a third of the jobs are done
    wait_until(lambda: delivered() >= JOBS // 3, 300, "a third of the jobs delivered")
    at_partition = delivered()
    hosts.partition()
    time.sleep(partition_s)
    during = delivered() - at_partition
    hosts.heal()
    healed = time.monotonic()
    at_heal = delivered()
    # Then work resumes within 10 s of the link's return
    wait_until(
        lambda: delivered() > at_heal or delivered() == JOBS, 120, "work resuming after the link returned"
    )
    resumed_s = time.monotonic() - healed
    # ...no job is stuck 60 s after it
    deadline = healed + STUCK_AFTER_S
    while delivered() < JOBS and time.monotonic() < deadline:
        time.sleep(0.2)
    stuck = JOBS - delivered()
    finished_s = time.monotonic() - healed
    wait_until(lambda: delivered() == JOBS, 240, "every job delivered in the end (0 lost)")
    elapsed_s = time.monotonic() - started
    time.sleep(2)  # a second delivery notice of a job, if any, has time to arrive

    store = get_store(producer)
    results = {h.id: store.result(h.id) for h in handles}
    lost = [j for j, r in results.items() if r is None]
    twice = {j: n for j, n in deliveries.snapshot().items() if j in job_ids and n != 1}
    final = {j: r for j, r in results.items() if r is not None}
    statuses = Counter(r["status"] for r in final.values())
    bad_traces = {j: p for j, r in final.items() if (p := trace_problems(r))}
    stats = simulator.server.stats.snapshot()
    calls_in_traces = sum(traced_calls(r) for r in final.values())
    dead = {w.name: (w.process.returncode, w.log()[-1500:]) for w in workers if w.process.poll() is not None}
    figures = {
        "jobs accepted / delivered": f"{JOBS} / {len(final)}",
        "lost": len(lost),
        "delivered twice": len(twice),
        f"stuck {STUCK_AFTER_S:g} s after the link returned": stuck,
        "delivered at the partition / during it": f"{at_partition} / {during}",
        "work resumed after the link returned (s)": f"{resumed_s:.1f}",
        "last job delivered after the link returned (s)": f"{finished_s:.1f}",
        "statuses": dict(statuses),
        "model calls at the simulator / in traces": f"{stats['requests']} / {calls_in_traces}",
        "model calls paid that no trace records": int(str(stats["requests"])) - calls_in_traces,
        "workers that exited": len(dead),
        "wall time (s)": f"{elapsed_s:.1f}",
    }
    print(f"\nsilent partition {partition_s:g} s: " + "; ".join(f"{k}: {v}" for k, v in figures.items()))
    assert not dead, f"workers exited: {dead}"
    assert not lost, f"{len(lost)} jobs lost, e.g. {lost[:3]}"
    assert not twice, f"jobs delivered more than once: {twice}"
    assert not bad_traces, f"bad traces: {list(bad_traces.items())[:3]}"
    assert stuck == 0, f"{stuck} jobs not delivered {STUCK_AFTER_S:g} s after the link returned"
    assert resumed_s <= RESUME_WITHIN_S, f"work resumed {resumed_s:.1f} s after the link returned"
    if partition_s >= 120:
        write_section(
            f"Silent partition ({partition_s:g} s, workers cut from Redis)",
            {"jobs": JOBS, "latency_scale": LATENCY_SCALE, "workers": "2 x threads -c 20", **ENV},
            figures,
        )
