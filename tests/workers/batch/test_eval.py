"""`suture eval`: policy comparison over a dataset, its statistics, variants, suggestion and outputs.

The end-to-end tests run the real CLI in-process against the real simulator (started by the
command itself, latency scale 0) through the real openai client; the statistics tests feed
result-schema dicts to the pure functions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from suture.config.settings import load_settings
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.policy import Policy, Step, load_policy
from suture.tasks.policy_variants import variants
from suture.workers.batch.evaluation import load_dataset, run_eval
from suture.workers.cli import main
from suture.workers.model.client import ModelClient
from suture.workers.reports.eval_summary import EvaluationError, JobOutcome, PolicySummary, suggest, summarise

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ENDING_KEYS = ("first_try_rate", "repaired_rate", "soft_delivered_rate", "failed_rate", "refused_rate")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No model, no user config: the command must fall back to the simulator."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SUTURE_OPENAI_API_KEY", "SUTURE_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SUTURE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """Two example documents (one section each at default sizes) and an expected.yaml."""
    folder = tmp_path / "dataset"
    folder.mkdir()
    for name in ("photosynthesis.md", "tcp_congestion_control.txt"):
        (folder / name).write_text((EXAMPLES / name).read_text(encoding="utf-8")[:2500], encoding="utf-8")
    (folder / "expected.yaml").write_text(
        "photosynthesis.md: {questions: 3, status: [delivered]}\n", encoding="utf-8"
    )
    return folder


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_eval_compares_the_two_shipped_policies_on_the_simulator(
    clean_env: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a small dataset and no model configured
    out_dir = clean_env / "out"
    # When both shipped policies are compared at latency scale 0
    code, out, err = run_cli(
        [
            "eval",
            str(dataset),
            "--policy",
            "full-only",
            "--policy",
            "default",
            "--latency-scale",
            "0",
            "--questions",
            "4",
            "--runs",
            "2",
            "--out",
            str(out_dir),
        ],
        capsys,
    )
    # Then it says it uses the simulator, prints the table and writes both reports
    assert code == 0, err
    assert "SIMULATOR" in err
    assert "SIMULATION" in out and "full-only" in out and "default" in out
    report = json.loads((out_dir / "eval.json").read_text(encoding="utf-8"))
    assert report["simulated"] is True
    assert list(report["policies"]) == ["full-only", "default"]
    jobs = report["settings"]["sections"] * 2
    assert report["settings"]["documents"] == 2 and report["settings"]["jobs_per_policy"] == jobs
    for figures in report["policies"].values():
        assert figures["jobs"] == jobs
        assert sum(figures[k] for k in ENDING_KEYS) == pytest.approx(1.0, abs=1e-3)
        assert figures["valid_rate"] == pytest.approx(figures["first_try_rate"] + figures["repaired_rate"])
        assert figures["latency_p50_ms"] <= figures["latency_p95_ms"]
        assert figures["expectations_met_rate"] is not None
    # ...and the surgical step is costed as its slices, far cheaper than a full mini attempt
    steps = report["policies"]["default"]["steps"]
    surgical = [s for s in steps.values() if s["mode"] == "surgical" and s["runs"]]
    assert surgical and all(s["calls"] >= s["runs"] for s in surgical)
    full_mini = report["policies"]["full-only"]["steps"]["2:full:gpt-5-mini"]
    assert surgical[0]["mean_cost_usd"] < full_mini["mean_cost_usd"]
    # ...each policy's repair overhead is reported, and the simulator's settings say the scale it ran at
    for figures in report["policies"].values():
        overhead = figures["repair_overhead"]
        if overhead["quizzes"]:
            assert 1.0 <= overhead["median"] <= overhead["p90"] <= overhead["max"]
            assert overhead["overall"] >= 1.0
    assert report["settings"]["simulator"]["latency_scale"] == 0
    assert "overhead" in out


def test_eval_compares_a_policy_with_and_without_its_fixers(
    clean_env: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the default policy and --compare-fixers
    out_dir = clean_env / "out"
    argv = ["eval", str(dataset), "--policy", "default", "--compare-fixers", "--latency-scale", "0"]
    code, _, err = run_cli([*argv, "--questions", "8", "--out", str(out_dir)], capsys)
    # Then both run, and only the first may run a fix step
    assert code == 0, err
    report = json.loads((out_dir / "eval.json").read_text(encoding="utf-8"))
    assert list(report["policies"]) == ["default", "default~no-fixers"]
    assert not any(label.startswith("fix:") for label in report["policies"]["default~no-fixers"]["steps"])


def test_eval_html_is_self_contained_and_labelled_simulated(
    clean_env: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an evaluation run on the simulator
    out_dir = clean_env / "out"
    code, _, err = run_cli(
        ["eval", str(dataset), "--latency-scale", "0", "--questions", "3", "--out", str(out_dir)], capsys
    )
    assert code == 0, err
    # When eval.html is read
    html = (out_dir / "eval.html").read_text(encoding="utf-8")
    # Then it has inline charts, no external assets or scripts, and the simulation notice
    assert html.count("<svg") >= 3
    assert not re.search(r"(src|href)\s*=|<script|@import|url\(", html, re.IGNORECASE)
    assert "SIMULATION" in html


def test_suggest_names_the_cheapest_policy_within_the_margin(
    clean_env: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the shipped policies and --suggest with a 5-point margin
    out_dir = clean_env / "out"
    code, out, err = run_cli(
        [
            "eval",
            str(dataset),
            "--latency-scale",
            "0",
            "--questions",
            "3",
            "--suggest",
            "--margin",
            "5",
            "--out",
            str(out_dir),
        ],
        capsys,
    )
    assert code == 0, err
    # Then the chosen policy is within the margin of the best and no eligible one is cheaper
    report = json.loads((out_dir / "eval.json").read_text(encoding="utf-8"))
    suggestion, figures = report["suggestion"], report["suggestion"]["figures"]
    assert report["variants"], "variants were evaluated"
    chosen = figures[suggestion["chosen"]]
    assert chosen["valid_rate"] >= suggestion["best_valid_rate"] - 0.05
    for name in suggestion["eligible"]:
        cost = figures[name]["cost_per_valid_usd"]
        assert cost is None or cost >= chosen["cost_per_valid_usd"]
    assert "Suggestion" in out and suggestion["chosen"] in out


@pytest.mark.parametrize(
    ("setup", "argv_tail", "message"),
    [
        ("missing", [], "dataset is not a folder"),
        ("empty", [], "no usable documents"),
        ("bad_expected", [], "expected.yaml"),
        ("ok", ["--policy", "no-such-policy"], "no such policy"),
        ("ok", ["--policy", "default", "--policy", "default"], "given twice"),
        ("unpriced", ["--policy", "POLICY"], "has no price"),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(
    clean_env: Path,
    dataset: Path,
    capsys: pytest.CaptureFixture[str],
    setup: str,
    argv_tail: list[str],
    message: str,
) -> None:
    # Given a dataset or policy the command cannot use
    folder = {"missing": clean_env / "nope", "empty": clean_env / "empty"}.get(setup, dataset)
    if setup == "empty":
        folder.mkdir()
    if setup == "bad_expected":
        (dataset / "expected.yaml").write_text("photosynthesis.md: {questions: zero}\n", encoding="utf-8")
    if setup == "unpriced":
        policy_file = clean_env / "unpriced.yaml"
        policy_file.write_text("steps: [{mode: full, model: gpt-9-turbo}]\n", encoding="utf-8")
        argv_tail = ["--policy", str(policy_file)]
    # When eval runs
    code, _, err = run_cli(["eval", str(folder), "--latency-scale", "0", *argv_tail], capsys)
    # Then it exits 2 with one line that says why
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# --- statistics (pure) ------------------------------------------------------------------------------


def attempt(
    n: int, step: str, outcome: str, codes: list[str], *, cost: float | None = 0.001, targets: int = 0
) -> dict[str, Any]:
    mode = "surgical" if targets else "full"
    return {
        "n": n,
        "step": step,
        "mode": mode,
        "model": "gpt-5-nano",
        "targets": [f"/questions/{i}" for i in range(targets)],
        "failures": [{"kind": "rule", "pointer": "/questions/0", "code": c, "message": "m"} for c in codes],
        "cost_usd": cost,
        "latency_ms": 1000.0 * n,
        "outcome": outcome,
    }


def job(status: str, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    costs = [a["cost_usd"] for a in attempts]
    return {
        "status": status,
        "attempts": attempts,
        "cost_usd": None if None in costs else sum(costs),
        "latency_ms": sum(a["latency_ms"] for a in attempts),
        "usage": {"input_tokens": 100, "output_tokens": 50, "reasoning_tokens": 10},
    }


FIRST_TRY = job("delivered", [attempt(1, "1:full", "valid", [])])
REPAIRED = job(
    "delivered",
    [
        attempt(
            1, "1:full", "improved", ["imbalanced_options", "imbalanced_options", "answer_position_skew"]
        ),
        attempt(2, "2:surgical", "valid", [], cost=0.0002, targets=3),
    ],
)
SOFT = job(
    "soft_delivered",
    [
        attempt(1, "1:full", "improved", ["imbalanced_options", "imbalanced_options"]),
        attempt(2, "2:surgical", "improved", ["imbalanced_options"], targets=2),
        attempt(3, "3:full", "no_better", ["imbalanced_options", "question_count"]),
    ],
)
FAILED = job("failed", [attempt(1, "1:full", "unparseable", ["invalid_json"])])


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ([FIRST_TRY], {"valid_rate": 1.0, "first_try_rate": 1.0, "repaired_rate": 0.0}),
        ([FIRST_TRY, REPAIRED], {"valid_rate": 1.0, "first_try_rate": 0.5, "repaired_rate": 0.5}),
        (
            [REPAIRED, SOFT, FAILED, FAILED],
            {"valid_rate": 0.25, "soft_delivered_rate": 0.25, "failed_rate": 0.5},
        ),
        ([FAILED], {"valid_rate": 0.0, "cost_per_valid_usd": None}),
    ],
)
def test_summary_shares(results: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    # Given job results of one policy / When summarised
    summary = summarise("p", [JobOutcome("p", f"doc{i}", 0, r) for i, r in enumerate(results)])
    # Then the shares are as counted and always sum to one
    for key, value in expected.items():
        assert getattr(summary, key) == value
    assert sum(getattr(summary, k) for k in ENDING_KEYS) == pytest.approx(1.0)


def test_summary_credits_fixes_to_the_step_that_made_them_and_counts_slices() -> None:
    # Given a job repaired surgically and one soft-delivered after a partial surgical fix
    summary = summarise("p", [JobOutcome("p", "a", 0, REPAIRED), JobOutcome("p", "b", 0, SOFT)])
    # Then the surgical step fixed 2 + 1 imbalanced options and 1 skew; the rejected full step fixed nothing
    surgical = summary.steps["2:surgical"]
    assert surgical["fixed"] == {"answer_position_skew": 1, "imbalanced_options": 3}
    assert surgical["calls"] == 5 and surgical["runs"] == 2
    assert summary.steps["3:full"]["fixed"] == {}
    # ...and the cost per valid quiz charges every job, including the soft-delivered one
    total = REPAIRED["cost_usd"] + SOFT["cost_usd"]
    assert summary.cost_per_valid_usd == pytest.approx(total)


def test_unknown_price_makes_cost_unknown_not_zero() -> None:
    unpriced = job("delivered", [attempt(1, "1:full", "valid", [], cost=None)])
    summary = summarise("p", [JobOutcome("p", "a", 0, FIRST_TRY), JobOutcome("p", "b", 0, unpriced)])
    assert summary.cost_usd is None and summary.cost_per_valid_usd is None


def test_expectations_met_share() -> None:
    outcomes = [
        JobOutcome("p", "a", 0, FIRST_TRY, ("delivered",)),
        JobOutcome("p", "b", 0, FAILED, ("delivered",)),
        JobOutcome("p", "c", 0, FAILED),
    ]
    assert summarise("p", outcomes).expectations_met_rate == 0.5


def figures(name: str, valid: float, cost: float | None) -> PolicySummary:
    return PolicySummary(
        name, 10, valid, valid, 0.0, 0.0, 1 - valid, 0.0, None, cost, 0.0, 0.0, 1.0, {}, {}, None
    )


@pytest.mark.parametrize(
    ("table", "margin", "chosen"),
    [
        ([("a", 0.95, 0.010), ("b", 0.94, 0.002)], 0.02, "b"),
        ([("a", 0.95, 0.010), ("b", 0.90, 0.002)], 0.02, "a"),
        ([("a", 0.95, 0.010), ("b", 0.90, 0.002)], 0.05, "b"),
        ([("a", 0.95, None), ("b", 0.95, 0.004)], 0.0, "b"),
        ([("a", 1.0, 0.003), ("b", 1.0, 0.003)], 0.02, "a"),
        ([("a", 0.0, None)], 0.02, None),
    ],
)
def test_suggest_picks_the_cheapest_within_margin(
    table: list[tuple[str, float, float | None]], margin: float, chosen: str | None
) -> None:
    summaries = {name: figures(name, valid, cost) for name, valid, cost in table}
    suggestion = suggest(summaries, margin)
    assert suggestion.chosen == chosen
    assert suggestion.reason


@pytest.mark.parametrize(("summaries", "margin"), [({}, 0.02), ({"a": figures("a", 1.0, 0.1)}, 2.0)])
def test_suggest_rejects_bad_input(summaries: dict[str, PolicySummary], margin: float) -> None:
    with pytest.raises(EvaluationError):
        suggest(summaries, margin)


def test_variants_of_the_shipped_policies_are_valid_distinct_one_change_chains() -> None:
    # Given the two shipped policies
    settings = load_settings(overrides={})
    given = [load_policy("full-only", settings), load_policy("default", settings)]
    # When their variants are built with the priced models
    found = variants(given, sorted(settings.prices))
    names = [p.name for p in found]
    # Then there are drops, swaps and added surgical steps; none starts with a surgical step or repeats
    assert "full-only~+surgical@2" in names and "default~drop2" in names and "full-only~2=gpt-5-nano" in names
    assert all(p.steps[0].mode == "full" for p in found)
    assert len(set(names)) == len(names)
    added = next(p for p in found if p.name == "full-only~+surgical@2")
    assert [s.mode for s in added.steps] == ["full", "surgical", "full"]
    assert added.steps[1].model == "gpt-5-nano"
    # ...and whole re-asks with the failures: in place of a surgical step, or as feedback turned on
    reask = next(p for p in found if p.name == "default~2=reask")
    assert (
        reask.feedback and reask.steps[1].mode == "full" and reask.steps[1].model == given[1].steps[1].model
    )
    plain = next(p for p in found if p.name == "full-only~+feedback")
    assert plain.feedback and plain.steps == given[0].steps


def test_variants_that_coincide_are_listed_once() -> None:
    # Given a policy whose steps 2 and 3 are the same surgical step
    twice = Step(mode="surgical", model="gpt-5-nano", target="parent")
    policy = Policy(name="p", steps=(Step(mode="full"), twice, twice))
    # When its variants are built / Then dropping either surgical step gives one variant, not two
    names = [v.name for v in variants([policy], ["gpt-5-nano"])]
    assert names.count("p~drop2") == 1 and "p~drop3" not in names
    assert "p~drop1" not in names  # a chain cannot start with a surgical step


def test_eval_jobs_are_bulk_work(dataset: Path, simulator: Any) -> None:
    # Given a dataset and the simulator behind the real model client
    settings = load_settings().model_copy(
        update={"openai_base_url": simulator(), "openai_api_key": SecretStr("sk-test")}
    )
    cases = load_dataset(dataset, settings, questions=3).cases
    client = ModelClient(settings)
    classes: list[str] = []

    def recording(call: ModelCall) -> ModelReply:
        classes.append(call.priority)
        return client.call(call)

    # When a policy is evaluated over it
    run = run_eval(cases, [load_policy("default", settings)], recording, settings, simulated=True)

    # Then every model call it made was of the bulk class (the default for suture eval)
    assert not run.errors and classes
    assert set(classes) == {"bulk"}
