"""The shipped Prometheus alert rules load, fire as their unit tests say, and name only series suture
exports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.workers.runtime.test_metrics import exported_series

DOCS = Path(__file__).resolve().parents[3] / "docs"
RULES = DOCS / "prometheus-rules.yaml"


def promtool() -> str:
    """Debian's promtool (package prometheus; `make test` installs it): required in CI, skipped elsewhere."""
    found = shutil.which("promtool")
    if found is None:
        message = "promtool not found: install Debian's prometheus package (`make test` does, as root)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.mark.parametrize(
    "command", [["check", "rules", RULES.name], ["test", "rules", "prometheus-rules.test.yaml"]]
)
def test_the_alert_rules_pass_promtool(command: list[str]) -> None:
    # When promtool checks the rules and runs their unit tests (the first failure of a cause fires, ...)
    done = subprocess.run([promtool(), *command], cwd=DOCS, capture_output=True, text=True, timeout=60)

    # Then it finds no problem
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_the_alert_rules_name_only_series_suture_exports() -> None:
    # Given the rules shipped in docs/
    text = RULES.read_text()

    # Then every suture series they name exists, and each alert the issue asks for is there
    assert {name for name in re.findall(r"\bsuture_[a-z_]+", text)} <= exported_series()
    alerts = set(re.findall(r"alert: (\w+)", text))
    assert {
        "SutureJobsFailing",
        "SutureSoftDeliveryRateHigh",
        "SutureCallbacksGivenUp",
        "SutureBacklogOld",
        "SutureNoLiveWorker",
        "SutureBudgetDeferrals",
    } <= alerts
