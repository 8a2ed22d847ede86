"""suture: contract-checked structured LLM output with surgical repair, on Celery and Redis.

The public API a web app or a contract author needs, and nothing else::

    from suture import enqueue, get_job, cancel, JobHandle      # producers
    from suture import ProducerError, InvalidJob, JobNotFound   # ... and what they raise
    from suture import Contract, Failure                        # contract authors

Every error the producer API raises is a ``ProducerError``; ``suture.workers.errors`` draws the
hierarchy and lists the public errors once (its ``__all__``), which this module exports as they are
(they load nothing but the standard library), with ``NoBrokerConfigured``.

The repository's top-level folders ``contracts/``, ``tasks/``, ``workers/`` and ``config/`` are the
subpackages ``suture.contracts``, ``suture.tasks``, ``suture.workers`` and ``suture.config``
(symbolic links in this folder, real directories in an installed wheel), so an application with its
own ``config`` or ``tasks`` package can import suture beside it. Names are imported on first use:
``import suture`` alone loads no Celery, Redis client or model SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from suture.workers import errors as _errors
from suture.workers.errors import *  # noqa: F403 - the public errors, listed once in their module

if TYPE_CHECKING:
    from suture.contracts.contract import Contract
    from suture.contracts.failure import Failure
    from suture.workers.local.errors import NoBrokerConfigured
    from suture.workers.producer import JobHandle, cancel, enqueue, get_job

_HOMES = {
    "enqueue": "suture.workers.producer",
    "get_job": "suture.workers.producer",
    "cancel": "suture.workers.producer",
    "JobHandle": "suture.workers.producer",
    "Contract": "suture.contracts.contract",
    "Failure": "suture.contracts.failure",
    "NoBrokerConfigured": "suture.workers.local.errors",
}
__all__ = ["Contract", "Failure", "JobHandle", "NoBrokerConfigured", "cancel", "enqueue", "get_job"]
__all__ += _errors.__all__


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'suture' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
