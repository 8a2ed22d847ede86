"""A loud warning at worker start-up when the job store's Redis keeps nothing across a restart.

A Redis without AOF that restarts (a crash, an OOM kill, a host reboot, a container recreated) comes back
empty or as old as its last snapshot: every accepted job it held is gone, finished ones included, and their
producers never get a result (docs/reliability.md measured 31 of 90 jobs lost). suture cannot make that
safe, so it says so where an operator looks first, the worker's start-up log, once per worker. It warns
rather than refuses: a throwaway Redis is fine for a demo, and a managed Redis may hide its settings (then
INFO decides). ``store.warn_no_persistence: false`` silences it. The fix is in docs/operations.md ("Redis").
"""

from __future__ import annotations

import logging

import redis

from suture.config.redaction import mask_url
from suture.config.settings import Settings

log = logging.getLogger(__name__)

BANNER = "!" * 78


def persistence_problem(client: redis.Redis) -> str | None:
    """What a restart of this Redis would lose (None: it writes an AOF)."""
    info = client.info("persistence")
    if int(info.get("aof_enabled", 0)):
        return None
    try:
        save = str(client.config_get("save").get("save", ""))
    except redis.exceptions.ResponseError:  # CONFIG refused (a managed Redis): INFO said no AOF
        return "no AOF (appendonly no): a restart loses every job written since its last snapshot, if any"
    if save.strip():
        return (
            f"no AOF, only RDB snapshots (save {save}): a restart loses every job written since the last "
            "snapshot"
        )
    return "no persistence at all (appendonly no, no save points): a restart loses every job"


def warn_if_not_persistent(settings: Settings) -> str | None:
    """Log the warning if the store's Redis would lose jobs in a restart; returns the problem (or None)."""
    from suture.workers.store.job_store import get_store, store_url

    if not settings.store.warn_no_persistence:
        return None
    try:
        problem = persistence_problem(get_store(settings).redis)
    except redis.exceptions.RedisError as exc:  # unreachable now: the worker reconnects, and says so itself
        log.info("could not check the job store's persistence: %s", type(exc).__name__)
        return None
    if problem is not None:
        log.warning(
            "\n%s\nTHE JOB STORE'S REDIS (%s) HAS %s.\nAccepted jobs and their results live there: run it "
            "with appendonly yes (appendfsync everysec or always), or a managed Redis with persistence "
            "(docs/operations.md, Redis). store.warn_no_persistence: false silences this.\n%s",
            BANNER,
            mask_url(store_url(settings)),
            problem.upper(),
            BANNER,
        )
    return problem
