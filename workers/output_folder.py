"""Files written under a folder the user named (``--out``), and never anywhere else.

Whatever lives in the folder may have been put there by someone else, and a job id read back from
Redis is data like any other. So:

- ``check_out_dir(path)`` runs before anything starts (a stack, a model call): the folder exists or
  can be made, is writable, and the names suture will write there are not symbolic links; else
  ``OutputFolderError``, one line for the user (the CLI exits 2).
- ``OutputFolder(root)`` opens every file relative to the folder, one path component at a time,
  with ``O_NOFOLLOW``: a symbolic link (file or folder) is refused, never followed, and so is a
  file with a second hard link (writing it would change the other name's content too).
- ``check_job_id(job_id, asked=...)`` is the gate before a job id becomes part of a path: 32
  lower-case hex characters, and the id that was asked for.

Errors::

    OutputFolderError(path, problem)   a path under --out suture refuses to write, or --out itself
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import IO

JOB_ID = re.compile(r"[0-9a-f]{32}")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class OutputFolderError(Exception):
    """A path suture refuses to write (a link, outside the folder, a bad job id); str() is one line."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"refusing to write {path}: {problem}")
        self.path = str(path)
        self.problem = problem


def check_job_id(job_id: object, *, asked: str | None = None) -> str:
    """``job_id`` if it is a job id (32 hex characters) and, given ``asked``, the one asked for."""
    if not isinstance(job_id, str) or not JOB_ID.fullmatch(job_id):
        raise OutputFolderError(f"a file named after job id {str(job_id)[:80]!r}", "not a job id")
    if asked is not None and job_id != asked:
        raise OutputFolderError(f"a file of job {asked}", f"the stored record names another job ({job_id})")
    return job_id


def check_out_dir(path: str | Path, names: Iterable[str] = ()) -> Path:
    """The output folder, made if missing; ``OutputFolderError`` if it cannot be written safely.

    ``names`` are the entries the command will write (``quizzes.jsonl``, ``traces``): each must be
    absent or a real file or folder, never a symbolic link.
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise OutputFolderError(folder, "it exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(folder, f"cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputFolderError(folder, "the folder is not writable")
    for name in names:
        if (folder / name).is_symlink():
            raise OutputFolderError(
                folder / name, "it is a symbolic link (suture never follows links in --out)"
            )
    return folder


class OutputFolder:
    """Opens files under ``root`` without following links; ``relative`` paths use ``/`` separators."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"OutputFolder({str(self.root)!r})"

    def open(self, relative: str, mode: str = "w") -> IO[str]:
        """A UTF-8 text stream on ``relative``: ``w`` truncates, ``a`` appends; parents are made."""
        if mode not in ("w", "a"):
            raise ValueError(f"mode must be 'w' or 'a', got {mode!r}")
        fd = self._open_file(relative, append=mode == "a")
        return os.fdopen(fd, mode, encoding="utf-8", newline="\n")

    def write_text(self, relative: str, text: str) -> None:
        """Write ``relative`` whole (UTF-8)."""
        with self.open(relative, "w") as stream:
            stream.write(text)

    def job_file(self, folder: str, job_id: object, suffix: str, *, asked: str | None = None) -> str:
        """``folder/<job id><suffix>``, once the id passed ``check_job_id``."""
        return f"{folder}/{check_job_id(job_id, asked=asked)}{suffix}"

    def _open_file(self, relative: str, *, append: bool) -> int:
        parts = _parts(relative)
        shown = self.root / relative
        dir_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for index, part in enumerate(parts[:-1]):
                inner = _enter(dir_fd, part, self.root.joinpath(*parts[: index + 1]))
                os.close(dir_fd)
                dir_fd = inner
            flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_APPEND if append else 0)
            try:
                fd = os.open(parts[-1], flags, 0o666, dir_fd=dir_fd)
            except OSError as exc:
                raise _refusal(shown, exc, dir_fd, parts[-1]) from None
        finally:
            os.close(dir_fd)
        _check_plain_file(fd, shown, truncate=not append)
        return fd


def _parts(relative: str) -> tuple[str, ...]:
    path = PurePosixPath(relative)
    parts = path.parts
    if not parts or path.is_absolute() or any(part in ("", ".", "..") for part in parts):
        raise OutputFolderError(relative, "not a plain path inside the output folder")
    return parts


def _enter(dir_fd: int, name: str, shown: Path) -> int:
    """The folder ``name`` inside ``dir_fd`` (made if missing, never a link), opened."""
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=dir_fd)
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(shown, exc, dir_fd, name) from None


def _check_plain_file(fd: int, shown: Path, *, truncate: bool) -> None:
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "it is not a regular file"
    elif info.st_nlink > 1:
        problem = "it has another hard link (writing it would change that file too)"
    if problem is not None:
        os.close(fd)
        raise OutputFolderError(shown, problem)
    if truncate:
        os.ftruncate(fd, 0)


def _refusal(shown: Path, exc: OSError, dir_fd: int, name: str) -> OutputFolderError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
        try:
            mode = os.lstat(name, dir_fd=dir_fd).st_mode
        except OSError:
            mode = 0
        if stat.S_ISLNK(mode):
            return OutputFolderError(shown, "it is a symbolic link (suture never follows links in --out)")
        return OutputFolderError(shown, "it is a folder" if stat.S_ISDIR(mode) else "it is not a folder")
    return OutputFolderError(shown, exc.strerror or str(exc))
