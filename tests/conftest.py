"""Suite-wide fixtures: each fixture module under tests/fixtures registers itself here."""

pytest_plugins: list[str] = [
    # "tests.fixtures.redis_server",
    # "tests.fixtures.simulator",
    # "tests.fixtures.workers",
]
