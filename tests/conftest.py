"""Suite-wide fixtures: each fixture module under tests/fixtures registers itself here."""

pytest_plugins: list[str] = [
    "tests.fixtures.sentry_endpoint",
    "tests.fixtures.redis_server",
    "tests.fixtures.flower",
    "tests.fixtures.workers",
    "tests.fixtures.scripted_model",
    "tests.fixtures.simulator",
]
