"""The batch report: counts, rates, what fixed which failure, and a self-contained HTML page."""

from __future__ import annotations

import re
from typing import Any

import pytest

from suture.workers.reports.batch_html import render
from suture.workers.reports.batch_report import BatchReport, outcome, percentiles, step_label

IMBALANCED = {"kind": "rule", "pointer": "/questions/3/options", "code": "imbalanced_options", "message": "m"}
SKEW = {"kind": "rule", "pointer": "/questions/1", "code": "answer_position_skew", "message": "m"}


def attempt(
    n: int, mode: str, model: str, failures: list[dict[str, Any]], tier: int | None = None
) -> dict[str, Any]:
    return {
        "n": n,
        "step": n,
        "mode": mode,
        "model": model,
        "reasoning_effort": "low",
        "targets": [],
        "patch": [],
        "rolled_back": [],
        "failures": failures,
        "usage": {"input_tokens": 1000, "output_tokens": 500, "reasoning_tokens": 100},
        "cost_usd": 0.001,
        "latency_ms": 1000.0,
        "transport_retries": 0,
        "example_tier": tier,
        "outcome": "valid" if not failures else "invalid",
    }


@pytest.mark.parametrize(
    ("step", "expected"),
    [(2, "2:surgical:gpt-5-nano@low"), ("2:surgical:gpt-5-nano", "2:surgical:gpt-5-nano@low")],
)
def test_step_labels_read_the_same_for_numbered_and_labelled_steps(step: Any, expected: str) -> None:
    assert step_label(attempt(2, "surgical", "gpt-5-nano", []) | {"step": step}) == expected


def result(job: str, status: str, attempts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    final = attempts[-1]["failures"] if attempts else []
    return {
        "job_id": job,
        "status": status,
        "reason": extra.get("reason", status),
        "output": None if status in ("failed", "refused") else {"title": "t", "questions": []},
        "failures": final if status == "soft_delivered" else [],
        "attempts": attempts,
        "usage": {"input_tokens": 1000 * len(attempts), "output_tokens": 500 * len(attempts)},
        "cost_usd": extra.get("cost_usd", 0.001 * len(attempts)),
        "latency_ms": extra.get("latency_ms", 1000.0 * len(attempts)),
        "simulated": extra.get("simulated", True),
    }


FIRST = result("j1", "delivered", [attempt(1, "full", "gpt-5-nano", [], tier=1)])
SURGICAL = result(
    "j2",
    "delivered",
    [attempt(1, "full", "gpt-5-nano", [IMBALANCED, SKEW], tier=1), attempt(2, "surgical", "gpt-5-nano", [])],
)
ESCALATED = result(
    "j3",
    "delivered",
    [attempt(1, "full", "gpt-5-nano", [SKEW], tier=1), attempt(2, "full", "gpt-5-mini", [], tier=2)],
)
SOFT = result("j4", "soft_delivered", [attempt(1, "full", "gpt-5-nano", [IMBALANCED], tier=1)])
FAILED = result("j5", "failed", [attempt(1, "full", "gpt-5-nano", [])], reason="no parseable output")
SOURCE = {"file": "examples/<b>x</b>.md", "section": 1, "title": None, "pages": None}


@pytest.mark.parametrize(
    ("res", "expected"),
    [
        (FIRST, "first_try"),
        (SURGICAL, "repaired_surgically"),
        (ESCALATED, "escalated"),
        (SOFT, "soft_delivered"),
        (FAILED, "failed"),
    ],
)
def test_each_result_has_one_outcome(res: dict[str, Any], expected: str) -> None:
    assert outcome(res) == expected


def _report() -> BatchReport:
    report = BatchReport()
    for r in (FIRST, SURGICAL, ESCALATED, SOFT, FAILED):
        report.add_result(SOURCE, r, f"traces/{r['job_id']}.json")
    report.add_issue({"file": "bad.pdf", "reason": "encrypted", "detail": "password", "skipped": True})
    return report


def test_summary_counts_rates_and_costs() -> None:
    # Given five jobs and one skipped file
    summary = _report().summary()
    # Then the required keys carry the totals
    assert {
        k: summary[k] for k in ("total", "delivered", "soft_delivered", "failed", "refused", "skipped")
    } == {
        "total": 6,
        "delivered": 3,
        "soft_delivered": 1,
        "failed": 1,
        "refused": 0,
        "skipped": 1,
    }
    assert summary["cost_usd"] == pytest.approx(0.001 * 7)
    assert summary["simulated"] is True and "SIMULATION" in summary["notice"]
    assert summary["rates"]["first_pass"] == 0.2 and summary["rates"]["failure"] == 0.2
    # Per delivered quiz (4 of them): latency 1, 2, 2, 1 s
    assert summary["per_quiz"]["latency_ms"] == {"mean": 1500.0, "p50": 1000.0, "p95": 2000.0}
    assert [f["jobs"] for f in summary["funnel"]] == [5, 2]


def test_report_json_and_html_show_the_repair_overhead() -> None:
    # Given the five jobs (three valid: 1, 2 and 2 attempts of the same cost)
    summary = _report().summary()
    # Then the repair overhead of the valid quizzes is in report.json and on the page
    assert summary["repair_overhead"]["quizzes"] == 3
    assert summary["repair_overhead"]["overall"] == pytest.approx(5 / 3, abs=1e-4)
    assert (summary["repair_overhead"]["median"], summary["repair_overhead"]["max"]) == (2.0, 2.0)
    page = render(summary)
    assert "Repair overhead" in page and "1.67x" in page


def test_a_quiz_repaired_by_a_deterministic_fix_alone_is_counted_as_fixed() -> None:
    fixed = result(
        "j6", "delivered", [attempt(1, "full", "gpt-5-nano", [SKEW]), attempt(2, "fix", "fixer", [])]
    )
    assert outcome(fixed) == "fixed"
    report = BatchReport()
    report.add_result(SOURCE, fixed, "traces/j6.json")
    assert report.summary()["rates"]["fixed_without_model"] == 1.0


def test_failure_codes_say_which_step_fixed_them() -> None:
    codes = _report().summary()["failure_codes"]
    assert codes["imbalanced_options"] == {
        "occurrences": 2,
        "fixed_by": {"2:surgical:gpt-5-nano@low": 1},
        "remaining": 1,
    }
    assert codes["answer_position_skew"]["fixed_by"] == {
        "2:surgical:gpt-5-nano@low": 1,
        "2:full:gpt-5-mini@low": 1,
    }


def test_example_tier_success_rates() -> None:
    tiers = _report().summary()["example_tiers"]
    assert tiers["1"] == {"used": 4, "passed": 1, "improved": 0, "success_rate": 0.25}
    assert tiers["2"]["success_rate"] == 1.0


def test_lists_are_capped_so_memory_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("suture.workers.reports.batch_report.MAX_LISTED", 3)
    report = BatchReport()
    for n in range(10):
        report.add_result(SOURCE, SOFT | {"job_id": f"s{n}"}, "traces/x.json")
    summary = report.summary()
    assert len(summary["review"]) == 3 and summary["unlisted"] == {"review": 7}
    assert summary["soft_delivered"] == 10


@pytest.mark.parametrize(
    ("values", "p95"), [([], None), ([5.0], 5.0), ([float(i) for i in range(1, 101)], 95.0)]
)
def test_percentiles_nearest_rank(values: list[float], p95: float | None) -> None:
    assert percentiles(values)["p95"] == p95


def test_html_is_self_contained_labelled_and_escaped() -> None:
    # Given a simulated report with a soft-delivered quiz and a source name containing markup
    page = render(_report().summary())
    # Then the simulation banner comes first, soft deliveries link to their trace, and nothing is fetched
    assert page.index("SIMULATION") < page.index("<h1>")
    assert "href='traces/j4.json'" in page
    assert "<svg" in page and "<style>" in page
    assert not re.search(r"(src|href)=['\"]?https?:", page)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "no parseable output" in page and "encrypted" in page


def test_a_real_model_run_has_no_simulation_banner() -> None:
    report = BatchReport()
    report.add_result(SOURCE, FIRST | {"simulated": False}, "traces/j1.json")
    summary = report.summary()
    assert summary["simulated"] is False and "SIMULATION" not in render(summary)


def test_a_rolled_back_slice_is_no_failure_a_later_step_fixed() -> None:
    rolled = {
        "kind": "preserve",
        "pointer": "/questions/3/options/1",
        "code": "preserve_violated",
        "message": "m",
    }
    repaired = result(
        "j7",
        "delivered",
        [
            attempt(1, "full", "gpt-5-nano", [IMBALANCED]),
            attempt(2, "surgical", "gpt-5-nano", [IMBALANCED, rolled]),
            attempt(3, "surgical", "gpt-5-nano", []),
        ],
    )
    report = BatchReport()
    report.add_result(SOURCE, repaired, "traces/j7.json")
    codes = report.summary()["failure_codes"]
    assert codes["preserve_violated"]["occurrences"] == 1 and codes["preserve_violated"]["fixed_by"] == {}
    assert codes["imbalanced_options"]["fixed_by"] == {"3:surgical:gpt-5-nano@low": 1}


def test_served_and_metered_tokens_and_budget_deferrals_per_model() -> None:
    # Given a job whose full call asked for 2,000 completion tokens and whose slice reply was cut off once
    attempts = [
        {
            "mode": "full",
            "model": "gpt-5-nano",
            "usage": {"input_tokens": 900, "output_tokens": 1_100},
            "asked_completion_tokens": 2_000,
            "cap_retries": 0,
        },
        {"mode": "fix", "model": "gpt-5-nano", "usage": {}},
        {
            "mode": "surgical",
            "model": "gpt-5-mini",
            "usage": {"input_tokens": 600, "output_tokens": 150},
            "asked_completion_tokens": 300,
            "cap_retries": 1,
        },
    ]
    report = BatchReport()
    report.add_result(SOURCE, {"job_id": "j", "status": "delivered", "attempts": attempts}, "traces/j.json")
    # And the cluster's counters say three nano calls waited 4.5 s for the budget over the run
    report.deferred = {"gpt-5-nano": {"deferred_budget": 3, "deferred_budget_s": 4.5, "rate_limited": 0}}
    # Then report.json has served ÷ metered per model (what OpenAI counts: prompt + asked completion)
    provider = report.summary()["provider_tokens"]
    assert provider["gpt-5-nano"] == {
        "served_tokens": 2_000,
        "metered_tokens": 2_900,
        "served_per_metered": 0.69,
        "cap_retries": 0,
        "deferred_for_budget": 3,
        "deferred_for_budget_s": 4.5,
        "rate_limited": 0,
    }
    assert (provider["gpt-5-mini"]["served_per_metered"], provider["gpt-5-mini"]["cap_retries"]) == (0.833, 1)
    # And the page shows them
    page = render(report.summary())
    assert "Tokens served and metered" in page and "0.69" in page and "2,900" in page
