"""quizzes.jsonl is written in plan order whatever order the jobs finish in."""

from __future__ import annotations

import json
from pathlib import Path

from suture.workers.batch.outputs import BatchOutputs

IDS = {name: name * 32 for name in "abcd"}  # job ids are 32 hex characters


def _result(job: str, status: str) -> dict[str, object]:
    output = {"title": job, "questions": []} if status != "failed" else None
    return {"job_id": IDS[job], "status": status, "output": output, "failures": []}


def _write(outputs: BatchOutputs, seq: int, source: dict[str, object], job: str, status: str) -> None:
    outputs.write_job(seq, source, _result(job, status), asked=IDS[job])


def _ids(lines: list[str]) -> list[str]:
    return [json.loads(line)["job_id"][0] for line in lines]


def test_lines_wait_for_every_earlier_job_then_go_out_in_plan_order(tmp_path: Path) -> None:
    # Given four jobs in the plan, finishing as 3, 1, 0, 2 (job 1 failed: it writes no line)
    outputs = BatchOutputs(tmp_path, fresh_manifest=True)
    quizzes = tmp_path / "quizzes.jsonl"
    _write(outputs, 3, {"section": 4}, "d", "delivered")
    _write(outputs, 1, {"section": 2}, "b", "failed")
    # Then nothing is written while job 0 runs
    assert quizzes.read_text() == ""
    _write(outputs, 0, {"section": 1}, "a", "soft_delivered")
    # ...and once it finished, the lines up to the next gap go out, in order
    assert _ids(quizzes.read_text().splitlines()) == ["a"]
    _write(outputs, 2, {"section": 3}, "c", "delivered")
    assert _ids(quizzes.read_text().splitlines()) == ["a", "c", "d"]
    # ...and every job has its trace
    assert sorted(p.stem[0] for p in (tmp_path / "traces").iterdir()) == ["a", "b", "c", "d"]
    outputs.finish(None)


def test_finish_writes_what_still_waits_in_order(tmp_path: Path) -> None:
    # Given a batch stopped while job 0 never finished
    outputs = BatchOutputs(tmp_path, fresh_manifest=True)
    _write(outputs, 2, {}, "c", "delivered")
    _write(outputs, 1, {}, "b", "delivered")
    # When it finishes, Then the finished jobs' lines are kept, in plan order
    outputs.finish(None)
    lines = (tmp_path / "quizzes.jsonl").read_text().splitlines()
    assert _ids(lines) == ["b", "c"]
