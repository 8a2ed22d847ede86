"""A job's priority class as a producer gives it: ``interactive`` or ``bulk``, checked at enqueue.

The classes and the order the dispatcher sends them in are ``suture.tasks.dispatch_order``'s; a value
that names neither is ``InvalidJob`` (field ``priority``), so nothing is stored.
"""

from __future__ import annotations

from typing import Any

from suture.tasks.dispatch_order import PRIORITY_CLASSES, PriorityClass
from suture.workers.errors import InvalidJob


def check_priority(priority: Any) -> PriorityClass:
    """``priority`` if it names a class; else ``InvalidJob`` naming the classes."""
    for job_class in PRIORITY_CLASSES:
        if priority == job_class:
            return job_class
    shown = repr(priority)[:60]
    raise InvalidJob(
        f"priority {shown} is not one of {', '.join(PRIORITY_CLASSES)}",
        field="priority",
        value=priority if isinstance(priority, str) else None,
        known=PRIORITY_CLASSES,
    )
