"""``suture calibrate``: a model's hidden rates recovered within their intervals, and the policy
they imply."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from suture.config.settings import Settings, load_settings
from suture.workers.batch.evaluation import EvalCase, run_eval
from suture.workers.cli.calibrate_cmd import DEFAULT_POLICIES, candidate_policies
from suture.workers.documents import Section, iter_documents
from suture.workers.model.client import get_model_client
from suture.workers.reports.eval_summary import suggest
from suture.workers.simulator.configure import start_from_settings
from suture.workers.simulator.serving import SimulatorHandle

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
# The model the simulator plays, with rates unlike any default (nano@low's are 0.367, 0.95, 0.90, 0.95).
HIDDEN = {
    "imbalance_rate": 0.25,
    "slice_fix_rate": 0.8,
    "reask_fix_rate": 0.6,
    "reask_keep_rate": 0.85,
    "duplicate_rate": 0.0,
}
RECOVERED = {  # the profile file's measured figure for each hidden rate
    "imbalance_rate": ("first_attempt_failure_rate_per_question", "imbalanced_options"),
    "slice_fix_rate": ("slice_fix_rate", None),
    "reask_fix_rate": ("reask_fix_rate", None),
    "reask_keep_rate": ("reask_keep_rate", None),
}


def _hidden_settings(tmp_path: Path) -> Settings:
    hidden = tmp_path / "hidden.yaml"
    hidden.write_text(yaml.safe_dump({"models": {"gpt-5-nano": HIDDEN}}), encoding="utf-8")
    settings = load_settings()
    simulator = settings.simulator.model_copy(update={"profile_file": str(hidden), "seed": 3})
    return settings.model_copy(update={"simulator": simulator})


@pytest.fixture
def hidden_model(tmp_path: Path) -> Iterator[tuple[SimulatorHandle, Settings]]:
    """A simulator playing gpt-5-nano with the hidden rates (an OpenAI-compatible endpoint)."""
    settings = _hidden_settings(tmp_path)
    handle = start_from_settings(settings, latency_scale=0)
    try:
        yield handle, settings
    finally:
        handle.stop()


def calibrate(tmp_path: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "sk-test-calibrate",
    }
    return subprocess.run(
        [sys.executable, "-m", "suture", "calibrate", str(EXAMPLES), "--model", "gpt-5-nano", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _requests(handle: SimulatorHandle) -> int:
    with urllib.request.urlopen(f"{handle.base_url}/_stats", timeout=10) as reply:
        stats: dict[str, Any] = json.load(reply)
    return int(stats["requests"])


def test_the_hidden_rates_are_recovered_and_the_policy_is_the_one_eval_prefers(
    tmp_path: Path, hidden_model: tuple[SimulatorHandle, Settings]
) -> None:
    handle, settings = hidden_model
    # Given a model whose failure and repair rates are hidden from suture
    # When suture calibrates on it with --yes
    done = calibrate(
        tmp_path,
        handle.base_url,
        "--yes",
        "--samples",
        "12",
        "--questions",
        "20",
        "--max-slices",
        "20",
        "--runs",
        "1",
    )
    assert done.returncode == 0, done.stderr
    # Then every recovered rate's 95 % interval holds the hidden truth
    measured = yaml.safe_load((tmp_path / "calibration-gpt-5-nano.yaml").read_text(encoding="utf-8"))[
        "measured"
    ]
    for rate, (field, code) in RECOVERED.items():
        figure = measured[field][code] if code else measured[field]
        low, high = figure["ci95"]
        assert figure["trials"] >= 30, (rate, figure)
        assert low <= HIDDEN[rate] <= high, (rate, figure)
    assert (
        measured["tokens"]["first"]["completion"]["value"]
        > measured["tokens"]["slice"]["completion"]["value"]
    )
    # ...and the policy it names is the one eval prefers on the simulator playing the hidden model itself
    named = re.search(r"for gpt-5-nano \(on the simulator with these rates\): ([\w-]+):", done.stdout)
    assert named, done.stdout
    local = settings.model_copy(
        update={"openai_base_url": handle.base_url, "openai_api_key": SecretStr("sk-test")}
    )
    texts = [s.text for s in iter_documents([EXAMPLES], settings.batch) if isinstance(s, Section)][:12]
    policies = candidate_policies(DEFAULT_POLICIES, "gpt-5-nano", "low", local)
    cases = [EvalCase(f"s{i}", text, 20) for i, text in enumerate(texts)]
    truth = run_eval(cases, policies, get_model_client(local).call, local, runs=1, simulated=True)
    assert named.group(1) == suggest(truth.summaries(), 0.02).chosen


def test_without_yes_it_shows_the_plan_and_calls_no_model(
    tmp_path: Path, hidden_model: tuple[SimulatorHandle, Settings]
) -> None:
    handle, _ = hidden_model
    # When calibrate runs without --yes
    done = calibrate(tmp_path, handle.base_url, "--samples", "3")
    # Then it prints the planned calls and an estimate, and no request reached the model
    assert done.returncode == 0, done.stderr
    assert re.search(r"at most \d+ calls to gpt-5-nano@low .* estimated \$\d", done.stdout), done.stdout
    assert "add --yes" in done.stdout
    assert _requests(handle) == 0
    assert not (tmp_path / "calibration-gpt-5-nano.yaml").exists()


def test_it_stops_at_the_budget(tmp_path: Path, hidden_model: tuple[SimulatorHandle, Settings]) -> None:
    handle, _ = hidden_model
    # When the budget covers about two first attempts
    done = calibrate(
        tmp_path, handle.base_url, "--yes", "--samples", "6", "--budget-usd", "0.004", "--runs", "1"
    )
    # Then it stops before passing it, and says so
    assert done.returncode == 0, done.stderr
    measured = yaml.safe_load((tmp_path / "calibration-gpt-5-nano.yaml").read_text(encoding="utf-8"))[
        "measured"
    ]
    assert measured["stopped_by_budget"] is True
    assert 0 < measured["spent_usd"] <= 0.004
    assert "stopped by the budget" in done.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--contract", "outline"], "measures the quiz contract only"),
        (["--budget-usd", "0"], "--budget-usd 0.0: must be more than 0"),
        (["--effort", "extreme"], "--effort 'extreme'"),
    ],
)
def test_unusable_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    # When calibrate is given an unusable option (no model is reachable, none is needed)
    done = calibrate(tmp_path, "http://127.0.0.1:9/v1", *args)
    # Then it exits 2 with one line saying why
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
