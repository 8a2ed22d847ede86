"""Entry point for ``celery -A workers worker``: suture's app configured from the settings.

Celery's ``-A workers`` finds ``workers.celery.app``; loading the settings here (and only here,
not in ``workers.celery_app``) keeps the producer import free of side effects.
"""

from __future__ import annotations

from config.settings import load_settings
from workers.celery_app import app, configure

configure(load_settings())

__all__ = ["app"]
