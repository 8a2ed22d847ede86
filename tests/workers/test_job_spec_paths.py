"""The user's contract rules travel with every job, through real processes: Redis, workers, the CLI.

A rule set in the environment (``SUTURE_QUIZ__OPTIONS_PER_QUESTION=3``) gives the same output shape
and the same verdict through ``generate --inline``, ``enqueue`` + a worker, ``batch``, ``eval`` and
``validate``; a worker started with other settings judges an enqueued job by the job's rules; and
enqueue refuses what no worker could run, storing nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from suture.config.settings import QuizRules
from suture.workers.errors import (
    InputTooLarge,
    InvalidJob,
    InvalidParams,
    UnknownContract,
    UnknownPolicy,
    UnusableInput,
)
from suture.workers.producer import enqueue
from tests.fixtures.workers import REPO, CeleryStack

pytestmark = pytest.mark.integration

DOCUMENT = REPO / "examples" / "photosynthesis.md"
RULES = {"SUTURE_QUIZ__OPTIONS_PER_QUESTION": "3"}
# The simulator a CLI command starts in-process when no model is configured: deterministic and instant.
SIMULATOR = {"SUTURE_SIMULATOR__PROFILE": "perfect", "SUTURE_SIMULATOR__LATENCY_SCALE": "0"}


def suture(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``suture ARGS`` as a user runs it, with no model configured (the simulator) and ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
    command = [sys.executable, "-m", "suture", *args]
    return subprocess.run(
        command, cwd=cwd, env=base | env, capture_output=True, text=True, timeout=90, check=False
    )


def option_counts(quiz: dict[str, Any]) -> list[int]:
    return [len(question["options"]) for question in quiz["questions"]]


def verdict(quiz: dict[str, Any], env: dict[str, str], tmp_path: Path) -> tuple[int, set[str]]:
    """``suture validate``'s exit code and failure codes for ``quiz`` under the rules of ``env``."""
    path = tmp_path / "quiz.json"
    path.write_text(json.dumps(quiz), encoding="utf-8")
    done = suture("validate", "--contract", "quiz", "--questions", "3", str(path), env=env, cwd=tmp_path)
    return done.returncode, {failure["code"] for failure in json.loads(done.stdout)["failures"]}


@pytest.fixture
def stack(celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]) -> CeleryStack:
    """Redis, and one worker with the packaged rules (4 options) on the perfect simulated model."""
    stack = celery_stack(simulator("perfect"))
    stack.start_worker(concurrency=8)
    return stack


def test_one_rule_set_gives_one_shape_and_one_verdict_on_every_path(
    stack: CeleryStack, tmp_path: Path
) -> None:
    # Given the rule "3 options per question" in the user's environment (the worker runs with 4)
    quizzes: dict[str, dict[str, Any]] = {}

    # When one document goes through generate --inline...
    done = suture(
        "generate", str(DOCUMENT), "--inline", "--questions", "3", env=RULES | SIMULATOR, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    quizzes["generate --inline"] = json.loads(done.stdout)["output"]

    # ...enqueue and a worker (result and trace show the job's rules)...
    enqueued = stack.cli("enqueue", str(DOCUMENT), "--questions", "3", **RULES)
    assert enqueued.returncode == 0, enqueued.stderr
    job_id = enqueued.stdout.strip()
    result = json.loads(stack.cli("result", job_id, "--timeout", "50").stdout)
    assert result["status"] == "delivered" and result["contract_params"]["rules"]["options_per_question"] == 3
    traced = json.loads(stack.cli("trace", job_id, "--spec").stdout)
    assert traced["spec"] == {
        "contract": "quiz",
        "contract_params": result["contract_params"],
        "policy": "default",
        "priority": "interactive",  # `suture enqueue`'s default class (spec version 4)
    }
    assert traced["attempts"] == result["attempts"]
    quizzes["enqueue + worker"] = result["output"]

    # ...batch on the same cluster...
    out = tmp_path / "batch"
    batched = stack.cli("batch", str(DOCUMENT), "--questions", "3", "--out", str(out), **RULES)
    assert batched.returncode == 0, batched.stderr
    lines = [json.loads(text) for text in (out / "quizzes.jsonl").read_text().splitlines()]
    assert lines and all(line["status"] == "delivered" for line in lines)
    quizzes |= {f"batch {line['source']['section']}": line["quiz"] for line in lines}

    # ...and eval, inline
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    shutil.copy(DOCUMENT, dataset)
    evaluated = suture(
        "eval",
        str(dataset),
        "--policy",
        "default",
        "--questions",
        "3",
        "--out",
        str(tmp_path / "eval"),
        env=RULES | SIMULATOR,
        cwd=tmp_path,
    )
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads((tmp_path / "eval" / "eval.json").read_text())

    # Then every path wrote 3 questions of 3 options, and validate with the same rules calls each valid
    for path, quiz in quizzes.items():
        assert option_counts(quiz) == [3, 3, 3], path
        assert verdict(quiz, RULES, tmp_path) == (0, set()), path
        # ...while the packaged rules (4 options) would call each one invalid, for its option count
        assert verdict(quiz, {}, tmp_path) == (1, {"option_count"}), path
    # ...and eval judged its jobs by those rules too: all valid, the rules it used on record
    assert report["settings"]["contract_params"]["rules"]["options_per_question"] == 3
    assert report["policies"]["default"]["valid_rate"] == 1.0


def test_a_worker_with_other_settings_judges_a_job_by_the_jobs_rules(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given a worker whose settings say 5 options per question
    stack = celery_stack(simulator("perfect"))
    stack.env = stack.env | {"SUTURE_QUIZ__OPTIONS_PER_QUESTION": "5"}
    stack.start_worker(concurrency=4)

    # When a producer whose settings say 3 enqueues a job
    producer = stack.settings.model_copy(update={"quiz": QuizRules(options_per_question=3)})
    handle = enqueue("quiz", DOCUMENT.read_text(), questions=2, settings=producer)
    result = handle.result(timeout_s=50)

    # Then the worker wrote and judged it by the job's 3-option rule, and says so
    assert result["status"] == "delivered", result["reason"]
    assert option_counts(result["output"]) == [3, 3]
    # (language "auto" is stored as the document's, detected at enqueue)
    assert result["contract_params"]["rules"] == QuizRules(options_per_question=3, language="en").model_dump()
    assert handle.spec()["contract_params"] == result["contract_params"]


def stored(stack: CeleryStack) -> list[str]:
    """Every job-store key and queued message in the stack's Redis."""
    client = redis.Redis.from_url(str(stack.settings.redis_url), decode_responses=True)
    return sorted(client.scan_iter(match="suture*"))


BINARY_FILES: dict[str, bytes] = {
    "random.txt": bytes(range(256)) * 80,
    "pdf-as-text.txt": (REPO / "examples" / "plate_tectonics.pdf").read_bytes(),
    "empty.txt": b"",
}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--contract", "nosuch"), "unknown contract 'nosuch' (known: outline, quiz)"),
        (("--policy", "nosuch"), "policy 'nosuch'"),
        (("--questions", "500"), "parameter 'questions' = 500: must be a whole number from 1 to 100"),
    ],
)
def test_cli_enqueue_refuses_a_job_no_worker_could_run_and_stores_nothing(
    celery_stack: Callable[..., CeleryStack], args: tuple[str, ...], message: str
) -> None:
    stack = celery_stack("http://127.0.0.1:9/v1")
    done = stack.cli("enqueue", str(DOCUMENT), *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("suture: ") and message in done.stderr and done.stderr.count("\n") == 1
    assert stored(stack) == []


@pytest.mark.parametrize(
    ("name", "reason"), [("random.txt", "binary"), ("pdf-as-text.txt", "file_format"), ("empty.txt", "empty")]
)
def test_cli_enqueue_refuses_an_unusable_file_and_stores_nothing(
    celery_stack: Callable[..., CeleryStack], tmp_path: Path, name: str, reason: str
) -> None:
    stack = celery_stack("http://127.0.0.1:9/v1")
    path = tmp_path / name
    path.write_bytes(BINARY_FILES[name])
    done = stack.cli("enqueue", str(path))
    assert done.returncode == 2 and reason in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert stored(stack) == []


def test_cli_enqueue_reads_a_pdf_and_standard_input_as_generate_does(
    celery_stack: Callable[..., CeleryStack],
) -> None:
    stack = celery_stack("http://127.0.0.1:9/v1")
    from_pdf = stack.cli("enqueue", str(REPO / "examples" / "plate_tectonics.pdf"))
    assert from_pdf.returncode == 0, from_pdf.stderr
    command = [sys.executable, "-m", "suture", "enqueue", "-"]
    piped = subprocess.run(
        command, cwd=REPO, env=stack.env, input=DOCUMENT.read_bytes(), capture_output=True, timeout=60
    )
    assert piped.returncode == 0, piped.stderr
    sources = [stack_source(stack, job) for job in (from_pdf.stdout.strip(), piped.stdout.decode().strip())]
    assert (
        "plate" in sources[0].lower() and sources[1] == DOCUMENT.read_text().strip()
    ) or "Photosynthesis" in sources[1]


def stack_source(stack: CeleryStack, job_id: str) -> str:
    client = redis.Redis.from_url(str(stack.settings.redis_url), decode_responses=True)
    return str(json.loads(str(client.hget(f"suture:job:{job_id}", "spec")))["source"])


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"contract": "nosuch"}, UnknownContract),
        ({"policy": "nosuch"}, UnknownPolicy),
        ({"questions": 0}, InvalidParams),
        ({"input": os.urandom(20_000).decode("utf-8", errors="replace")}, UnusableInput),
        (
            {"input": (REPO / "examples" / "plate_tectonics.pdf").read_bytes().decode("latin-1")},
            UnusableInput,
        ),
        ({"input": "Mitose: Gr\ufffd\ufffde, \ufffdu\ufffdere Teilung. " * 40}, UnusableInput),
        ({"input": "Cells divide by mitosis; the spindle pulls chromatids apart. " * 90_000}, UnusableInput),
        ({"input": "Cells divide by mitosis; the spindle pulls chromatids apart. " * 30_000}, InputTooLarge),
    ],
    ids=[
        "contract",
        "policy",
        "questions",
        "random-bytes",
        "pdf-as-text",
        "latin1-as-utf8",
        "5-MB",
        "1.9-MB",
    ],
)
def test_the_python_api_refuses_from_one_hierarchy_and_stores_nothing(
    celery_stack: Callable[..., CeleryStack], kwargs: dict[str, Any], error: type[InvalidJob]
) -> None:
    # Given a Redis broker and store / When a job no worker could run is enqueued
    stack = celery_stack("http://127.0.0.1:9/v1")
    call: dict[str, Any] = {"contract": "quiz", "input": DOCUMENT.read_text()} | kwargs
    contract, text = call.pop("contract"), call.pop("input")
    with pytest.raises(error) as caught:
        enqueue(contract, text, settings=stack.settings, **call)
    # Then the error is an InvalidJob of one line, and nothing was stored or published
    assert isinstance(caught.value, InvalidJob) and "\n" not in str(caught.value)
    assert stored(stack) == []
