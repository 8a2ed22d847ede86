"""Entry point for ``celery -A suture.workers worker``: suture's app configured from the settings.

Celery's ``-A workers`` finds ``suture.workers.celery.app``; loading the settings here (and only here,
not in ``suture.workers.runtime.app``) keeps the producer import free of side effects.
"""

from __future__ import annotations

from suture.config.settings import load_settings
from suture.workers.errors import NoBrokerConfigured
from suture.workers.local.discovery import resolve_for_worker
from suture.workers.runtime.app import app, configure
from suture.workers.runtime.kombu_patches import patch_redis_transport

patch_redis_transport()  # the worker side's fixes, before any broker connection (see kombu_patches)
# Configured settings, else the running `suture up` (kept for the tasks), else NoBrokerConfigured:
# `celery -A suture.workers ...` then exits with its one line, not an import traceback.
try:
    configure(resolve_for_worker(load_settings()))
except NoBrokerConfigured as exc:
    raise SystemExit(f"suture: {exc}") from None

__all__ = ["app"]
