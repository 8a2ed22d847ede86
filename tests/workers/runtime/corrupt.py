"""A document with a canary, and a job whose stored state is corrupt: an internal error on purpose.

The canary must never reach Sentry, Flower or a job's reason, whichever error path the job takes.
"""

from __future__ import annotations

import json
import time
import uuid

from suture.config.settings import Settings
from suture.workers.store.job_store import get_store
from suture.workers.store.keys import Keys
from tests.fixtures.scripted_model import document

CANARY = "CANARY-7f3a9d1e-the-secret-fact-of-the-course"
DOCUMENT = document(4) + f"\nFact 99: {CANARY} is topic number 99."


def corrupt_job(settings: Settings) -> str:
    """A queued job whose stored engine state fails validation, with the canary where a number belongs."""
    store = get_store(settings)
    job_id = uuid.uuid4().hex
    spec = {"contract": "quiz", "params": {"questions": 4}, "input": DOCUMENT, "policy": None, "feedback": []}
    store.create(job_id, spec, deadline_s=time.time() + 600)
    state = {"spec": {"job_id": job_id, "source": DOCUMENT}, "attempts": [{"n": f"{CANARY} (not a number)"}]}
    store.redis.hset(Keys(store.prefix).job(job_id), "state", json.dumps(state))
    return job_id
