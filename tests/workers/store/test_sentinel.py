"""The job store on Redis with Sentinel: it finds the primary, follows a failover, and a new job is on a
replica before enqueue answers (``WAIT``)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
import redis

from suture.config.settings import Settings
from suture.workers.errors import StoreUnavailable
from suture.workers.runtime.app import CeleryConfigError, sentinel_options
from suture.workers.store.connection import (
    Pool,
    Sentinels,
    SentinelUrlError,
    parse_sentinel_url,
    redis_client,
)
from suture.workers.store.durability import Durability
from suture.workers.store.job_store import JobStore
from tests.fixtures.redis_server import RedisServer
from tests.fixtures.sentinel import MASTER_NAME, PRIMARY_PASSWORD, SENTINEL_PASSWORD, SentinelGroup

SPEC = {"contract": "quiz", "params": {"questions": 3}, "input": "Cells divide by mitosis.", "policy": None}
POOL = Pool(size=4, wait_s=2.0, timeout_s=2.0)


def test_a_sentinel_url_names_every_sentinel_and_the_primarys_password_and_db() -> None:
    url = "sentinel://:p%40ss@10.0.0.1:26380/3;sentinel://10.0.0.2;sentinel://10.0.0.3:26381"
    hosts, params = parse_sentinel_url(url)
    assert hosts == [("10.0.0.1", 26380), ("10.0.0.2", 26379), ("10.0.0.3", 26381)]
    assert params == {"password": "p@ss", "db": 3}


@pytest.mark.parametrize("url", ["sentinel://", "sentinel://a:1;redis://b:2"])
def test_a_sentinel_url_without_sentinels_is_refused(url: str) -> None:
    with pytest.raises(SentinelUrlError):
        parse_sentinel_url(url)


def test_a_sentinel_url_needs_the_primarys_name() -> None:
    with pytest.raises(SentinelUrlError, match=r"sentinel\.master_name"):
        redis_client("sentinel://127.0.0.1:1", POOL, sentinels=Sentinels(None))
    with pytest.raises(CeleryConfigError, match=r"sentinel\.master_name"):
        sentinel_options("sentinel://127.0.0.1:1", Settings())


def test_kombu_and_celery_get_the_primarys_name_and_the_sentinels_password() -> None:
    settings = Settings(sentinel={"master_name": "m", "password": "pw"})
    options = sentinel_options("sentinel://127.0.0.1:1", settings)
    assert options["master_name"] == "m"
    assert options["sentinel_kwargs"]["password"] == "pw"
    assert sentinel_options("redis://127.0.0.1:1/0", settings) == {}
    assert "pw" in settings.secrets()


def _store(group: SentinelGroup, durability: Durability) -> JobStore:
    client = redis_client(group.url(), POOL, sentinels=Sentinels(MASTER_NAME, SENTINEL_PASSWORD))
    return JobStore(client, ttl_s=600, prefix=f"t{uuid.uuid4().hex}", durability=durability)


def test_a_new_job_is_on_the_replica_when_create_returns(sentinel_group: Callable[[], SentinelGroup]) -> None:
    # Given a primary with a replica, reached through the sentinels
    group = sentinel_group()
    store = _store(group, Durability(wait_replicas=1, wait_timeout_ms=2000))
    primary = group.primary_port()
    (replica_port,) = [port for port in group.servers if port != primary]
    replica = redis.Redis(port=replica_port, password=PRIMARY_PASSWORD, decode_responses=True)
    # When jobs are created
    assert store.replica_ack.wanted() == 1
    for _ in range(20):
        job_id, created, _ = store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)
        # Then each is on the replica as soon as create returned
        assert created and replica.hexists(f"{store.prefix}:job:{job_id}", "spec")
    replica.close()


def test_a_lone_redis_is_never_waited_for(redis_factory: Callable[..., RedisServer]) -> None:
    # Given a Redis with no replica and a store that would wait for one
    server = redis_factory()
    client = redis.Redis.from_url(server.url, decode_responses=True)
    store = JobStore(client, ttl_s=600, durability=Durability(wait_replicas=1, wait_timeout_ms=60_000))
    # When a job is created / Then it does not wait (WAIT 1 would run the whole minute)
    assert store.replica_ack.wanted() == 0
    _, created, _ = store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)
    assert created


# The sentinels' conversion of the returning primary has taken over 100 s on the loaded suite (see
# SentinelGroup.wait_for_replica), so this test may take longer than the suite's 120 s default.
@pytest.mark.timeout(300)
def test_the_store_follows_a_failover_and_never_writes_to_the_old_primary(
    sentinel_group: Callable[[], SentinelGroup],
) -> None:
    # Given a store on the sentinels' primary, with jobs in it
    group = sentinel_group()
    store = _store(group, Durability(wait_replicas=1, wait_timeout_ms=2000))
    before = [store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)[0] for _ in range(5)]
    # When the primary is SIGKILLed, a replica promoted, and the old primary comes back (as a replica)
    old = group.kill_primary()
    new = group.wait_for_new_primary(old)
    group.servers[old].start()
    group.wait_for_replica(old, timeout_s=240)
    # Then the same store writes and reads on the new primary: an outage while it lasted, never ReadOnlyError
    after: list[str] = []
    deadline = time.monotonic() + 30
    while len(after) < 5:
        try:
            after.append(store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)[0])
        except StoreUnavailable as exc:
            assert "READONLY" not in str(exc).upper(), exc
            assert time.monotonic() < deadline, f"the store never reached the new primary: {exc}"
            time.sleep(0.2)
    assert [store.load(job_id).status for job_id in before + after] == ["queued"] * 10
    assert group.primary_port() == new


def test_a_plain_url_whose_server_was_demoted_reconnects_instead_of_keeping_a_read_only_connection(
    redis_factory: Callable[..., RedisServer],
) -> None:
    # Given a store on a fixed address (a managed Redis's endpoint), one pooled connection
    server, other = redis_factory(), redis_factory()
    client = redis_client(server.url, Pool(size=1, wait_s=2.0, timeout_s=2.0))
    store = JobStore(client, ttl_s=600, prefix=f"t{uuid.uuid4().hex}")
    store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)
    before = client.client_id()
    admin = redis.Redis.from_url(server.url)
    # When the server is demoted to a replica, a write is an outage (READONLY), not an error of its own
    admin.replicaof("127.0.0.1", other.port)
    with pytest.raises(StoreUnavailable, match="demoted"):
        store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)
    # Then once the address is a primary again, the store writes on a new connection
    admin.replicaof("no", "one")
    store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)
    assert client.client_id() != before
    admin.close()


def test_a_primary_that_just_lost_its_replica_does_not_accept_a_job_alone(
    redis_factory: Callable[..., RedisServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a primary with a replica, and a store that re-reads the replica count at every create
    monkeypatch.setattr("suture.workers.store.durability.REPLICAS_TTL_S", 0.0)
    primary = redis_factory()
    replica = redis_factory(extra=("--replicaof", "127.0.0.1", str(primary.port)))
    admin = redis.Redis.from_url(primary.url)
    deadline = time.monotonic() + 20
    replica_admin = redis.Redis.from_url(replica.url)
    while replica_admin.info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline, "the replica never synced"
        time.sleep(0.1)
    replica_admin.close()
    client = redis.Redis.from_url(primary.url, decode_responses=True)
    store = JobStore(client, ttl_s=600, prefix=f"t{uuid.uuid4().hex}", durability=Durability(1, 1000))
    store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)
    # When the replica goes (as when it is promoted in a failover)
    replica.kill()
    while admin.info("replication").get("connected_slaves", 0) > 0:
        time.sleep(0.05)
    # Then a create is not answered as accepted: the job may be lost with this primary, a retry is safe
    with pytest.raises(StoreUnavailable, match="not acknowledged by a replica"):
        store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10, idempotency_key="k")
    admin.close()
