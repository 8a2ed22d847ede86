"""OutputFolder writes only regular files under its folder: links and hard links are refused, never
followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from suture.workers.output_folder import OutputFolder, OutputFolderError, check_job_id, check_out_dir

JOB = "0123456789abcdef0123456789abcdef"


def test_files_and_folders_are_made_under_the_root(tmp_path: Path) -> None:
    folder = OutputFolder(tmp_path)
    folder.write_text("traces/a.json", "{}")
    with folder.open("quizzes.jsonl", "a") as stream:
        stream.write("line\n")
    assert (tmp_path / "traces" / "a.json").read_text() == "{}"
    assert (tmp_path / "quizzes.jsonl").read_text() == "line\n"


@pytest.mark.parametrize("relative", ["report.html", "traces/a.json"])
def test_a_link_planted_after_the_check_is_refused_at_open(tmp_path: Path, relative: str) -> None:
    # Given a link where a file (or the folder holding it) will be written, pointing outside the root
    root = tmp_path / "out"
    root.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "a.json").write_text("keep")
    (victim / "report.html").write_text("keep")
    first = relative.split("/")[0]
    (root / first).symlink_to(victim / first if "/" not in relative else victim)

    # When it is written, Then the write is refused naming the link, and the target keeps its content
    with pytest.raises(OutputFolderError, match="symbolic link"):
        OutputFolder(root).write_text(relative, "overwritten")
    assert (victim / "a.json").read_text() == "keep" and (victim / "report.html").read_text() == "keep"


def test_a_hard_link_is_refused_before_anything_is_truncated(tmp_path: Path) -> None:
    # Given quizzes.jsonl hard-linked to a file elsewhere
    root = tmp_path / "out"
    root.mkdir()
    (tmp_path / "victim").write_text("keep")
    os.link(tmp_path / "victim", root / "quizzes.jsonl")

    # When it is opened for writing, Then it is refused and the other name's content is intact
    with pytest.raises(OutputFolderError, match="hard link"):
        OutputFolder(root).open("quizzes.jsonl", "w")
    assert (tmp_path / "victim").read_text() == "keep"


@pytest.mark.parametrize("relative", ["../x", "/etc/x", "a/../../x", ""])
def test_a_path_that_is_not_plain_and_inside_is_refused(tmp_path: Path, relative: str) -> None:
    with pytest.raises(OutputFolderError, match="not a plain path"):
        OutputFolder(tmp_path).write_text(relative, "x")


@pytest.mark.parametrize("job_id", ["../../../X", JOB.upper(), JOB[:-1], JOB + "0", None, 7, f"{JOB[:31]}/"])
def test_only_a_job_id_names_a_file(job_id: object) -> None:
    with pytest.raises(OutputFolderError, match="not a job id"):
        check_job_id(job_id)


def test_a_job_id_must_be_the_one_asked_for() -> None:
    assert check_job_id(JOB, asked=JOB) == JOB
    with pytest.raises(OutputFolderError, match="names another job"):
        check_job_id(JOB, asked="f" * 32)


def test_check_out_dir_makes_the_folder_and_refuses_a_file_or_a_listed_link(tmp_path: Path) -> None:
    assert check_out_dir(tmp_path / "new" / "out") == tmp_path / "new" / "out"
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputFolderError, match="exists and is not a folder"):
        check_out_dir(tmp_path / "file")
    (tmp_path / "new" / "out" / "report.html").symlink_to(tmp_path / "file")
    with pytest.raises(OutputFolderError, match=r"report\.html: it is a symbolic link"):
        check_out_dir(tmp_path / "new" / "out", ["quizzes.jsonl", "report.html"])
