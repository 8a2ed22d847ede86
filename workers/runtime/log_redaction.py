"""Credentials never reach a worker's log: every record and the start-up banner are redacted.

Celery prints the broker and result backend URLs in its banner and may log them in errors; it masks
a ``user:pass@`` password but not a ``?password=`` query. This module (one of the app's ``include``
modules, so every worker imports it) adds a logging filter to the root logger's handlers once Celery
set them up, and wraps the worker's banner, both with ``suture.config.redaction.redact`` and the
settings' secrets (API keys, DSN, passwords in URLs in any form).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from celery import signals

from suture.config.redaction import redact


class RedactingFilter(logging.Filter):
    """Rewrites each record's message with credentials masked (the arguments are merged in first)."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__("suture-redaction")
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, self.secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def _secrets() -> list[str]:
    from suture.workers.runtime.tasks import worker_settings

    return worker_settings().secrets()


@signals.after_setup_logger.connect
@signals.after_setup_task_logger.connect
def _filter_handlers(logger: logging.Logger | None = None, **_: Any) -> None:
    secrets = _secrets()
    for target in {logging.getLogger(), *([logger] if logger else [])}:
        for handler in target.handlers:
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(RedactingFilter(secrets))


@signals.celeryd_after_setup.connect
def _redact_banner(instance: Any = None, **_: Any) -> None:
    if instance is None:
        return
    secrets = _secrets()
    startup_info = instance.startup_info
    instance.startup_info = lambda *args, **kwargs: redact(startup_info(*args, **kwargs), secrets)
