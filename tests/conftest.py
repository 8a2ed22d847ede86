"""Suite-wide fixtures: each fixture module under tests/fixtures registers itself here."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest_plugins: list[str] = [
    "tests.schedule",
    "tests.fixtures.sentry_endpoint",
    "tests.fixtures.redis_server",
    "tests.fixtures.sentinel",
    "tests.fixtures.flower",
    "tests.fixtures.workers",
    "tests.fixtures.scripted_model",
    "tests.fixtures.simulator",
    "tests.fixtures.receivers",  # before api_server, which imports its webhook secret
    "tests.fixtures.api_server",
    "tests.fixtures.rabbitmq",
]


@pytest.fixture(scope="session", autouse=True)
def private_runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A runtime dir of the test run's own, inherited by every command a test starts.

    A `suture up` the developer runs publishes itself in $XDG_RUNTIME_DIR (workers/local/discovery.py);
    without this, a command a test starts with no broker configured would find and use it.
    """
    runtime = tmp_path_factory.mktemp("xdg-runtime")
    runtime.chmod(0o700)
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    yield
    if before is None:
        os.environ.pop("XDG_RUNTIME_DIR", None)
    else:
        os.environ["XDG_RUNTIME_DIR"] = before


# Fixtures that start a Redis, a worker, a server process or need a broker: a test using any of them,
# directly or through another fixture, is an integration test. Marked here from what each test
# uses, so the fast tier (`make test-fast`: not integration) cannot drift from the fixtures.
PROCESS_FIXTURES = frozenset(
    {
        "redis_url",
        "redis_factory",
        "password_redis",
        "sentinel_group",
        "celery_stack",
        "module_celery_stack",
        "flower",
        "api_server",
        "module_api_server",
        "require_rabbitmq",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that uses a process-starting fixture as ``integration`` (before tests/schedule.py
    orders the files, which places a file it has no figure for by that marker)."""
    for item in items:
        if PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
