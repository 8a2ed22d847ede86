"""The Redis job store: a job's spec, engine state, slice replies and result, keyed by job id.

Celery messages carry only job ids; everything else lives here, and every write that must happen once
(an attempt applied, a slice stored, a merge, a delivery) is one atomic Lua script: no second record.

Layout (``{p}`` is the key prefix, ``suture`` by default)::

    {p}:job:<id>            hash: spec, state, version, status, round, created_s, deadline_s, result, meta,
                            round_started_s, tenant (the producer's, when it gave one: ``idempotency``)
    {p}:job:<id>:history    list: results delivered before each resume (raw JSON, oldest first)
    {p}:job:<id>:flags      hash: once-flags (merge:<n>; callback:<tag> an outbox state, see outbox.py;
                            task-callback:<round> leased "owner|until_s", then "sent"; alerted:<what>,
                            notes.py)
                            and each task's unfinished executions (exec:<task_key>|<token>,
                            unfinished:<task_key>)
    {p}:job:<id>:slices:<n> hash: pointer -> slice reply JSON of surgical attempt n
    {p}:idem:<key>          string: "<job id> <sha256 of its request>" (idempotency: same request, same job)
    {p}:batch:<b>:accepted  list: a batch's valid outputs for example tier 2 (workers/accepted.py)
    {p}:deadlines           sorted set: running job ids scored by their deadline (the watchdog's list)
    {p}:progress            sorted set: job ids scored by the last time one of their tasks opened
    {p}:workers             sorted set: worker names scored by their last heartbeat (its watchdog clock)
    {p}:review              sorted set: soft-delivered job ids waiting for a person, by delivery time
    {p}:review:t:<tenant>   sorted set: the same, of one tenant ("" the operator's: no tenant given)
    {p}:review:indexed      string: the last delivery time of {p}:review indexed per tenant (``reads``)
    {p}:callbacks           sorted set: callbacks owed, "<id>|<tag>", by when they need attention (outbox.py)
    {p}:last_accepted       string: the last job id a producer waited for replicas on (a write for WAIT)
    {p}:gone:<id>           string: set once a worker warned that the job is gone (a Redis restarted empty)
    {p}:done:<id>           pub/sub channel: the status, published once when the result is stored
    {p}:waiting:...         new jobs waiting for the dispatcher, and its lease (``waiting.py``,
    ``JobStore.waiting``)

``version`` counts the attempts applied to ``state``; applying attempt ``n`` is a compare-and-set
from version ``n - 1``. This module holds the writes; beside it: ``reads`` (the base of ``JobStore``),
``watchlist`` (the watchdog's reads), ``scripts`` (the Lua), ``records`` and ``keys`` (the names above).
Errors (``suture.workers.store.errors``, re-exported here)::

    StoreError
     ├── JobNotFound        (job_id)         unknown or expired job
     └── StoreUnavailable   (reason)         Redis cannot be reached (URL password never shown)
"""

from __future__ import annotations

import json
import time
import uuid
from functools import cache
from typing import Any

import redis

from suture.config.network_settings import NetworkSettings
from suture.config.settings import Settings
from suture.tasks.vocabulary import FINAL_STATUSES as FINAL_STATUSES
from suture.workers.errors import JobNotFound, NoBrokerConfigured, StoreUnavailable
from suture.workers.store.connection import SENTINEL_SCHEME, Pool, Sentinels, least_pool_size, redis_client
from suture.workers.store.durability import Durability, ReplicaAck
from suture.workers.store.errors import guarded
from suture.workers.store.keys import Keys
from suture.workers.store.notes import JobNotes
from suture.workers.store.outbox import Outbox
from suture.workers.store.reads import JobReads
from suture.workers.store.records import JobRecord, SliceOutcome, TaskOpening
from suture.workers.store.scripts import (
    CLOSE_TASK,
    CONCLUDE_REVIEW,
    CREATE,
    DELIVER,
    DISCARD,
    LEASE,
    OPEN_TASK,
    PUT_SLICE,
    RESUME,
    SAVE_AND_DELIVER,
    SAVE_STATE,
)
from suture.workers.store.waiting import WaitingJobs, WaitingSlot
from suture.workers.store.watchlist import Watchlist


class JobStore(JobReads):
    """Jobs in one Redis database: the reads of ``JobReads`` and the once-only writes (scripts)."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        ttl_s: float,
        prefix: str = "suture",
        durability: Durability | None = None,
    ) -> None:
        keys = Keys(prefix)
        super().__init__(client, keys)
        self._ttl = max(1, int(ttl_s))
        self.watchlist = Watchlist(client, keys)
        self.notes = JobNotes(client, keys, self._ttl)
        self.replica_ack = ReplicaAck(client, durability or Durability())
        self.outbox = Outbox(client, keys, ttl_s=self._ttl, replica_ack=self.replica_ack)
        self.waiting = WaitingJobs(client, keys)
        # Key names, bound once: each script call reads as the layout it touches.
        self._job, self._flags, self._slices = keys.job, keys.flags, keys.slices
        self._history, self._done = keys.history, keys.done
        self._progress, self._deadlines, self._review = keys.progress, keys.deadlines, keys.review
        self._create = client.register_script(CREATE)
        self._discard = client.register_script(DISCARD)
        self._save = client.register_script(SAVE_STATE)
        self._put_slice = client.register_script(PUT_SLICE)
        self._deliver = client.register_script(DELIVER)
        self._resume = client.register_script(RESUME)
        self._lease = client.register_script(LEASE)
        self._open_task = client.register_script(OPEN_TASK)
        self._close_task = client.register_script(CLOSE_TASK)
        self._save_and_deliver = client.register_script(SAVE_AND_DELIVER)
        self._conclude_review = client.register_script(CONCLUDE_REVIEW)

    def create(
        self,
        job_id: str,
        spec: dict[str, Any],
        *,
        deadline_s: float,
        idempotency_key: str | None = None,
        request_sha256: str = "",
        meta: dict[str, Any] | None = None,
        tenant: str | None = None,
        waiting: WaitingSlot | None = None,
    ) -> tuple[str, bool, str]:
        """Store a new job (one round trip); with a known idempotency key, return that job instead.

        Returns ``(job_id, created, request_sha256)``; ``created`` is False when the key already
        named a job, and the hash is then the one stored with the key ("" for a key stored without).
        With ``waiting``, a created job's id joins that waiting list in the same step (the dispatcher sends
        it).
        """
        idem = self._keys.idempotency(idempotency_key) if idempotency_key else self._job(job_id)
        args = [job_id, _dumps(spec), time.time(), deadline_s, self._ttl, _dumps(meta or {})]
        args += ["1" if idempotency_key else "0", request_sha256, tenant or ""]
        keys = [self._job(job_id), idem, self._deadlines()]
        keys += [waiting.list_key, waiting.tenants_key] if waiting else [self._job(job_id)] * 2
        args += ["1", waiting.tenant] if waiting else ["0", ""]
        found, created = self._create_acknowledged(job_id, keys, args)
        found_id, _, found_hash = str(found).partition(" ")
        return found_id, bool(created), found_hash if not created else request_sha256

    def _create_acknowledged(self, job_id: str, keys: list[str], args: list[Any]) -> Any:
        """Run the create script; with replicas to wait for, WAIT on the same connection (a pipeline)."""
        wanted = guarded(self.replica_ack.wanted)
        if not wanted:
            return self._call(self._create, keys, args)
        pipe = self._r.pipeline(transaction=False)
        self._create(keys=keys, args=args, client=pipe)
        # A write after it, so WAIT covers a job found by its idempotency key too (written earlier, maybe
        # by a connection whose WAIT failed): replication is in order, and WAIT waits for this one.
        pipe.set(self._keys.last_accepted(), job_id)
        pipe.wait(wanted, self.replica_ack.durability.wait_timeout_ms)
        (found, created), _, acked = guarded(pipe.execute)
        # Not accepted below it: the primary may be on its way out with the job; retry with the same key.
        self.replica_ack.check(f"job {str(found).partition(' ')[0]}", wanted, int(acked))
        return found, created

    def discard(self, job_id: str, idempotency_key: str | None = None) -> bool:
        """Remove a job no task has opened yet (its first message could not be sent), with its
        idempotency key if that still names it; False if a task opened it meanwhile, or it is gone."""
        idem = self._keys.idempotency(idempotency_key) if idempotency_key else self._job(job_id)
        keys = [self._job(job_id), self._deadlines(), idem]
        return bool(self._call(self._discard, keys, [job_id, "1" if idempotency_key else "0"]))

    def open_task(
        self,
        job_id: str,
        task_key: str,
        *,
        token: str | None = None,
        n: int = 0,
        pointer: str | None = None,
        slices: bool = False,
    ) -> TaskOpening:
        """Count an execution of a task as unfinished and read its job, in one round trip; raises JobNotFound.

        ``token`` names the execution (the same token counts once; None: a new execution). With
        ``pointer``, also whether that slice reply of attempt ``n`` is stored (then the task is not
        counted); with ``slices``, every stored slice reply of attempt ``n``.
        """
        keys = [self._job(job_id), self._flags(job_id), self._slices(job_id, n), self._progress()]
        args = [task_key, self._ttl, pointer or "", "1" if slices else "0", time.time(), job_id]
        args.append(token or uuid.uuid4().hex)
        flat_job, count, stored, flat_slices = self._call(self._open_task, keys, args)
        raw = _pairs(flat_job)
        if "spec" not in raw:
            raise JobNotFound(job_id)
        replies = {p: json.loads(v) for p, v in _pairs(flat_slices).items()}
        return TaskOpening(JobRecord.from_hash(job_id, raw), int(count), bool(stored), replies)

    def close_task(self, job_id: str, task_key: str, token: str) -> int:
        """Take an execution that ended without applying its work off the task's unfinished count; returns
        it."""
        return int(self._call(self._close_task, [self._flags(job_id)], [task_key, token]))

    def save_state(
        self,
        job_id: str,
        expected_version: int,
        state: dict[str, Any],
        *,
        action: tuple[int, dict[str, Any]] | None = None,
    ) -> bool:
        """Compare-and-set: store ``state`` as version ``expected_version + 1``; False if it moved on.

        ``action`` is ``(n, action)``: the surgical action of attempt ``n`` the new state asks for,
        stored once (as ``put_action``) in the same atomic step, so the step costs one round trip.
        """
        args = [expected_version, expected_version + 1, _dumps(state)]
        args += [action[0], _dumps(action[1])] if action else ["", ""]
        outcome = int(self._acked(self._save, [self._job(job_id)], args, f"job {job_id}'s attempt"))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    def save_and_deliver(
        self, job_id: str, expected_version: int, state: dict[str, Any], result: dict[str, Any]
    ) -> bool:
        """``save_state`` and ``deliver`` in one atomic step (an attempt that ends its job); False if
        the version moved on or the job was already delivered."""
        keys = [self._job(job_id), self._deadlines(), self._done(job_id), self._review()]
        args = [expected_version, expected_version + 1, _dumps(state), _dumps(result), result["status"]]
        args += [job_id, self._ttl, time.time(), self._keys.review_tenants()]
        outcome = int(self._acked(self._save_and_deliver, keys, args, f"job {job_id}'s result"))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    def put_slice(
        self, job_id: str, n: int, pointer: str, reply: dict[str, Any], expected: int
    ) -> SliceOutcome:
        """Store one slice reply of surgical attempt ``n`` once; claim the merge when all are in.

        An empty ``reply``: the caller found it stored already (counts only); StoreUnavailable if it is not
        there (the task's opening read a primary a failover then replaced), so the task re-runs and pays for
        it rather than store an empty reply (measured: 34 internal errors, merges reading an empty reply).
        """
        keys = [self._slices(job_id, n), self._flags(job_id)]
        args = [pointer, _dumps(reply) if reply else "", expected, n, self._ttl]
        added, count, claimed = self._acked(self._put_slice, keys, args, f"job {job_id}'s slice")
        if int(added) == -1:  # no reply given: the task's opening saw it stored, on another primary?
            raise StoreUnavailable(
                f"job {job_id}'s slice {pointer} of attempt {n} is not stored (a failover?)"
            )
        return SliceOutcome(stored=bool(added), count=int(count), merge_claimed=bool(claimed))

    def deliver(self, job_id: str, result: dict[str, Any]) -> bool:
        """Store the final result once; True only for the call that stored it."""
        return self._store_result(job_id, result, "", "") == 1

    def deliver_at(
        self, job_id: str, version: int, result: dict[str, Any], *, due_s: float | None = None
    ) -> bool | None:
        """``deliver`` a result built from state ``version``: None (nothing stored) if the state moved on.

        With ``due_s`` the job stays on the watchdog's list, due then, so its ``suture.deliver`` is
        sent (and its callback fired) even if the caller cannot publish it.
        """
        outcome = self._store_result(job_id, result, version, "" if due_s is None else due_s)
        return None if outcome == -3 else outcome == 1

    def _store_result(self, job_id: str, result: dict[str, Any], version: int | str, due: float | str) -> int:
        args = [_dumps(result), result["status"], job_id, self._ttl, version, due, time.time()]
        args.append(self._keys.review_tenants())
        keys = [self._job(job_id), self._deadlines(), self._done(job_id), self._review()]
        outcome = int(self._acked(self._deliver, keys, args, f"job {job_id}'s result"))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome

    def conclude_review(self, job_id: str, job_round: int, result: dict[str, Any]) -> bool:
        """Replace a soft-delivered result of round ``job_round`` by a reviewer's (delivered as is, or
        cancelled); False if the job is not soft-delivered (any more) or has moved to another round."""
        keys = [self._job(job_id), self._done(job_id), self._review()]
        args = [_dumps(result), job_round, self._ttl, job_id, result["status"], self._keys.review_tenants()]
        outcome = int(self._acked(self._conclude_review, keys, args, f"job {job_id}'s reviewed result"))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    def lease(self, job_id: str, flag: str, owner: str, lease_s: float) -> bool:
        """Hold a re-takable once-flag: True unless it is done or another owner's lease still runs."""
        args = [flag, owner, time.time(), lease_s, self._ttl]
        return bool(self._acked(self._lease, [self._flags(job_id)], args, f"job {job_id}'s {flag}"))

    def mark_done(self, job_id: str, flag: str) -> None:
        """Mark a leased flag done for good (no later lease is granted)."""
        guarded(lambda: self._r.hset(self._flags(job_id), flag, "sent"))

    def put_action(self, job_id: str, n: int, action: dict[str, Any]) -> dict[str, Any]:
        """Store the action of attempt ``n`` once (first writer wins); returns the stored one."""
        key, field = self._job(job_id), f"action:{n}"
        pipe = self._r.pipeline(transaction=True)
        pipe.hsetnx(key, field, _dumps(action))
        pipe.hget(key, field)
        return dict(json.loads(guarded(pipe.execute)[1]))

    def resume(self, job_id: str, spec: dict[str, Any], state: dict[str, Any], deadline_s: float) -> bool:
        """Re-open a soft-delivered job with a new spec/state; False if it is not soft-delivered."""
        keys = [self._job(job_id), self._deadlines(), self._history(job_id), self._review()]
        args = [_dumps(spec), _dumps(state), deadline_s, job_id, self._ttl, time.time()]
        args.append(self._keys.review_tenants())
        outcome = int(self._call(self._resume, keys, args))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    @staticmethod
    def _call(script: Any, keys: list[str], args: list[Any]) -> Any:
        return guarded(lambda: script(keys=keys, args=args))

    def _acked(self, script: Any, keys: list[str], args: list[Any], what: str) -> Any:
        """A write an outside effect follows: acknowledged by the replicas asked for, else StoreUnavailable
        (``suture.workers.store.durability``)."""
        return self.replica_ack.call(script, keys, args, what)


def store_url(settings: Settings) -> str:
    """The store's Redis URL: SUTURE_REDIS_URL, else a redis:// broker URL; raises NoBrokerConfigured.

    Never a guessed default Redis: settings that name none were not resolved
    (``suture.workers.local.discovery.resolve`` finds a running ``suture up``, or says how to name one).
    """
    if settings.redis_url:
        return settings.redis_url
    if settings.broker_url and settings.broker_url.startswith(("redis://", "rediss://", SENTINEL_SCHEME)):
        return settings.broker_url
    raise NoBrokerConfigured()


def sentinels_of(settings: Settings) -> Sentinels:
    """The ``sentinel.*`` settings a ``sentinel://`` URL is read with."""
    password = settings.sentinel.password
    return Sentinels(settings.sentinel.master_name, password.get_secret_value() if password else None)


def get_store(settings: Settings) -> JobStore:
    """The process-wide store for these settings' Redis URL (one connection pool per URL)."""
    worker = settings.worker
    pool = Pool(
        max(worker.redis_pool_size, least_pool_size()), worker.redis_pool_timeout_s, worker.redis_timeout_s
    )
    durability = Durability(settings.store.wait_replicas, settings.store.wait_timeout_ms)
    return _store_for(
        store_url(settings), worker.store_ttl_s, pool, settings.network, sentinels_of(settings), durability
    )


@cache
def _store_for(
    url: str, ttl_s: float, pool: Pool, network: NetworkSettings, sentinels: Sentinels, durability: Durability
) -> JobStore:
    return JobStore(redis_client(url, pool, network, sentinels=sentinels), ttl_s=ttl_s, durability=durability)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _pairs(flat: list[str]) -> dict[str, str]:
    """A Redis HGETALL reply returned through Lua (a flat key, value list) as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))
