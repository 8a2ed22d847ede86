"""The order in which test files are handed to pytest-xdist's processes: the longest first.

`make test` and `make test-fast` give each process a file at a time (``--dist loadfile``). A file that
takes a minute and starts last leaves the other processes idle at the end, so files are ordered longest
first (the classic longest-processing-time rule), by the seconds each took in a recent run, as kept in
``tests/file_durations.json``. The order is only a schedule: a file missing from it (new, renamed) runs
at a default place, and a stale figure costs minutes of wall time, never a result.

``make durations`` runs the suite and rewrites the file (``--store-file-durations``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

DURATIONS_FILE = Path(__file__).with_name("file_durations.json")
# Where a file with no recorded duration goes: an integration file (it starts processes) as a middling
# one of its kind, any other as a short one.
DEFAULT_INTEGRATION_FILE_S = 20.0
DEFAULT_FAST_FILE_S = 1.0

_measured: defaultdict[str, float] = defaultdict(float)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-file-durations",
        action="store_true",
        help=f"write each test file's total seconds to {DURATIONS_FILE.name} (the order of later runs)",
    )


def recorded_durations() -> dict[str, float]:
    """Seconds per test file (its path from the repository root) from the kept run; empty if none."""
    try:
        loaded = json.loads(DURATIONS_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return {str(name): float(seconds) for name, seconds in loaded.items()} if isinstance(loaded, dict) else {}


@pytest.hookimpl(trylast=True)  # after tests/conftest.py has marked the integration tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sort ``items`` so that files run longest first; a file's tests stay together, in order."""
    durations = recorded_durations()
    root = config.rootpath

    def expected_s(item: pytest.Item) -> float:
        name = item.path.relative_to(root).as_posix()
        if name in durations:
            return durations[name]
        return DEFAULT_INTEGRATION_FILE_S if item.get_closest_marker("integration") else DEFAULT_FAST_FILE_S

    by_file: dict[Path, float] = {}
    for item in items:
        by_file[item.path] = max(by_file.get(item.path, 0.0), expected_s(item))
    items.sort(key=lambda item: -by_file[item.path])


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add each phase's duration to its file's total (in the process that sees every report)."""
    _measured[report.nodeid.split("::", 1)[0]] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With ``--store-file-durations``, write the totals (from the controller only, under xdist)."""
    config = session.config
    if not config.getoption("--store-file-durations") or hasattr(config, "workerinput"):
        return
    kept = {name: round(seconds, 1) for name, seconds in sorted(_measured.items())}
    DURATIONS_FILE.write_text(json.dumps(kept, indent=1) + "\n")
