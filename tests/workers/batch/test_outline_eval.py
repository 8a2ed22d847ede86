"""``suture eval --contract outline`` over the sample documents: surgery beats full regeneration.

Against the built-in simulator (a simulation): the default policy delivers at least 99 % valid
outlines and beats ``full-only`` on valid rate and on cost per valid output (docs/benchmarks.md,
"Policy comparison: outline", has the figures of a longer run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from suture.workers.cli import main
from tests.contract_packages import REPO


def test_eval_on_outline_default_beats_full_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("SUTURE_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    command = [
        "eval",
        str(REPO / "examples"),
        "--contract",
        "outline",
        "--policy",
        "full-only",
        "--policy",
        "default",
        "--runs",
        "4",
        "--latency-scale",
        "0",
        "--out",
        "out",
    ]
    assert main(command) == 0
    assert "SIMULATOR" in capsys.readouterr().err
    report = json.loads((tmp_path / "out" / "eval.json").read_text())
    assert report["simulated"] is True and report["settings"]["contract"] == "outline"
    full, default = report["policies"]["full-only"], report["policies"]["default"]
    assert default["jobs"] >= 30
    assert default["valid_rate"] >= 0.99
    assert default["valid_rate"] > full["valid_rate"]
    assert default["cost_per_valid_usd"] < full["cost_per_valid_usd"]
