"""Symbolic links in inputs are never followed: a link to a secret never reaches the model or the results.

Issue 33's first row: ``ln -s ~/secret.env course/notes.txt`` then ``suture batch course/`` sent the
secret to the model and wrote 1,848 copies of it into the quizzes; ``--dry-run`` listed a link to
``/etc/shadow`` as a document. Every test here runs the real CLI in a child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.simulator import ScriptedServer

ROOT = Path(__file__).parents[3]
CANARY = "sk-canary-7f3a9c1e2b4d6f80-DO-NOT-SEND"
GOOD = (
    "# Glaciers\n\n" + "Glaciers carve U-shaped valleys as they flow downhill under their own weight. " * 12
)
pytestmark = pytest.mark.integration


def suture(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
    base |= {"SUTURE_SIMULATOR__LATENCY_SCALE": "0"} | (env or {})
    argv = [sys.executable, "-m", "suture", *map(str, args)]
    return subprocess.run(argv, env=base, cwd=ROOT, capture_output=True, text=True, timeout=150, check=False)


def _course(tmp_path: Path) -> tuple[Path, Path]:
    """A course folder with one real document and links (file, folder, nested) to a secret outside it."""
    secret = tmp_path / "home" / "secret.env"
    secret.parent.mkdir()
    secret.write_text(("# Keys\n\n" + f"OPENAI_API_KEY={CANARY} is the production key of the team. ") * 30)
    (secret.parent / "more.md").write_text(f"# More\n\n{CANARY} " * 60)
    course = tmp_path / "course"
    (course / "week1").mkdir(parents=True)
    (course / "glaciers.md").write_text(GOOD)
    (course / "notes.txt").symlink_to(secret)
    (course / "shadow.md").symlink_to(secret)
    (course / "week1" / "keys.md").symlink_to(secret)  # inside a subfolder too
    (course / "home").symlink_to(secret.parent, target_is_directory=True)  # a linked folder
    return course, secret


def test_a_dry_run_lists_every_link_as_skipped_and_never_as_a_document(tmp_path: Path) -> None:
    # Given a course folder holding links to a secret file and to the folder holding it
    course, _ = _course(tmp_path)
    # When it is batched with --dry-run
    run = suture(
        "batch", course, "--out", tmp_path / "out", "--dry-run", env={"REDIS_URL": "redis://127.0.0.1:1/0"}
    )
    # Then each link is listed as skipped with the reason `symlink`, the real document is listed, exit 3
    assert run.returncode == 3, run.stderr
    out = run.stdout
    for link in ("notes.txt", "shadow.md", "week1/keys.md", "home"):
        assert any(link in line and "symlink" in line for line in out.splitlines()), (link, out)
    assert "glaciers.md: 1 section(s)" in out
    assert "shadow.md: 1 section(s)" not in out and "more.md" not in out
    # ...and the secret is nowhere in what was printed
    assert CANARY not in out + run.stderr


def test_a_batch_never_sends_a_linked_secret_to_the_model_or_writes_it_out(
    redis_url: str, tmp_path: Path
) -> None:
    # Given the same course folder
    course, _ = _course(tmp_path)
    out = tmp_path / "out"
    # When it is batched for real (the simulator quotes its source: a secret read would be in the quizzes)
    run = suture("batch", course, "--out", out, "--questions", "2", env={"REDIS_URL": redis_url})
    # Then only the real document was quizzed, the links are in the report as skipped `symlink`
    assert run.returncode == 3, run.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["jobs"] == 1
    quizzes = [json.loads(line) for line in (out / "quizzes.jsonl").read_text().splitlines()]
    assert [Path(q["source"]["file"]).name for q in quizzes] == ["glaciers.md"]
    assert "Glaciers" in (out / "quizzes.jsonl").read_text()  # the source is quoted: the check can fail
    reasons = {Path(item["file"]).name: item["reason"] for item in report["input_issues"]}
    assert reasons == {
        "notes.txt": "symlink",
        "shadow.md": "symlink",
        "keys.md": "symlink",
        "home": "symlink",
    }
    # ...and the canary is in no file the batch wrote, nor in its output
    for path in out.rglob("*"):
        if path.is_file():
            assert CANARY not in path.read_text(errors="replace"), path
    assert CANARY not in run.stdout + run.stderr


def test_a_link_named_on_the_command_line_is_read_only_with_follow_symlinks(tmp_path: Path) -> None:
    # Given a link to a real document, named directly
    (tmp_path / "real.md").write_text(GOOD)
    link = tmp_path / "lecture.md"
    link.symlink_to(tmp_path / "real.md")
    env = {"REDIS_URL": "redis://127.0.0.1:1/0"}
    # When it is batched without, then with --follow-symlinks
    refused = suture("batch", link, "--out", tmp_path / "out", "--dry-run", env=env)
    followed = suture("batch", link, "--out", tmp_path / "out", "--dry-run", "--follow-symlinks", env=env)
    # Then the first skips it as `symlink` (exit 3), the second reads it
    assert refused.returncode == 3, refused.stderr
    assert "symlink" in refused.stdout and "1 section(s)" not in refused.stdout
    assert followed.returncode == 0, followed.stderr
    assert "lecture.md: 1 section(s)" in followed.stdout


def test_generate_enqueue_and_validate_refuse_a_link_before_reading_it(
    scripted_server: Callable[[list[object]], ScriptedServer], tmp_path: Path
) -> None:
    # Given a link to a secret and a model endpoint that records every request
    _, secret = _course(tmp_path)
    link = tmp_path / "notes.md"
    link.symlink_to(secret)
    model = scripted_server([])
    env = {
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "sk-test",
        "REDIS_URL": "redis://127.0.0.1:1/0",
    }
    # When each command is given the link
    runs = [
        suture("generate", link, "--inline", env=env),
        suture("enqueue", link, env=env | {"SUTURE_BROKER_URL": "redis://127.0.0.1:1/0"}),
        suture("validate", link, env=env),
        suture("validate", tmp_path / "course" / "glaciers.md", "--source", link, env=env),
    ]
    # Then each is a usage error (exit 2) naming the reason, and nothing reached the model
    for run in runs:
        assert run.returncode == 2, (run.args, run.stdout, run.stderr)
        assert "symlink" in run.stderr and "--follow-symlinks" in run.stderr
        assert CANARY not in run.stdout + run.stderr
    assert model.requests == []
