"""Typed clients generated from the served OpenAPI document compile and make a call against `suture serve`.

The document is the contract a web developer's tooling reads; these tests generate a Python client
with openapi-python-client (a dev dependency) and enqueue and read a job through it.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from tests.fixtures.api_server import ApiServer
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent


@pytest.fixture
def served_schema(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer], tmp_path: Path
) -> Iterator[tuple[ApiServer, Path]]:
    """`suture serve` over a fresh Redis (no workers: jobs stay queued) and its OpenAPI document on disk."""
    server = api_server(celery_stack("http://127.0.0.1:9/v1"))
    path = tmp_path / "openapi.json"
    path.write_bytes(requests.get(server.url + "/openapi.json", timeout=10).content)
    yield server, path


def test_a_python_client_generated_by_openapi_python_client_enqueues_and_reads_a_job(
    served_schema: tuple[ApiServer, Path], tmp_path: Path
) -> None:
    server, schema = served_schema
    # When openapi-python-client generates a client from the served document
    out = tmp_path / "suture_client"
    env = os.environ | {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff post-hook
    command = [str(BIN / "openapi-python-client"), "generate", "--path", str(schema)]
    done = subprocess.run(
        [*command, "--output-path", str(out), "--meta", "none"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        client_module = importlib.import_module("suture_client")
        create_job = importlib.import_module("suture_client.api.jobs.create_job_v1_jobs_post")
        read_job = importlib.import_module("suture_client.api.jobs.read_job_v1_jobs_job_id_get")
        models = importlib.import_module("suture_client.models")
        with client_module.AuthenticatedClient(base_url=server.url, token=server.key) as client:
            # Then its typed calls enqueue a job and read it back, as typed objects
            accepted = create_job.sync(client=client, body=models.JobRequest(input_=document(2), questions=2))
            assert isinstance(accepted, models.JobAccepted) and accepted.status.value == "queued"
            view = read_job.sync(job_id=accepted.job_id, client=client)
            assert isinstance(view, models.JobView) and view.job_id == accepted.job_id
            assert view.status.value == "queued" and view.callback is None
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "suture_client" or m.startswith("suture_client.")]:
            del sys.modules[name]


TYPESCRIPT = Path(__file__).resolve().parents[2] / "clients" / "typescript"


def node_modules() -> Path:
    """The TypeScript check's npm packages (tests/clients/typescript, `npm ci`): needed in CI, skipped
    elsewhere."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        message = "node and npm not found: install Debian's nodejs and npm (`make test` does, as root)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    installed = TYPESCRIPT / "node_modules"
    if not (installed / "typescript").is_dir():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=TYPESCRIPT, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return installed


def test_a_typescript_client_generated_by_openapi_typescript_compiles_strict_and_reads_a_job(
    served_schema: tuple[ApiServer, Path], tmp_path: Path
) -> None:
    server, schema = served_schema
    packages = node_modules()
    work = tmp_path / "ts"
    work.mkdir()
    for name in ("client.ts", "tsconfig.json", "package.json"):
        shutil.copy(TYPESCRIPT / name, work / name)
    (work / "node_modules").symlink_to(packages)

    def node(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["node", *args], cwd=work, capture_output=True, text=True, timeout=120)

    # When openapi-typescript generates the API's types, and a client using them compiles (strict, no flag)
    generated = node("node_modules/openapi-typescript/bin/cli.js", str(schema), "-o", "suture-api.d.ts")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    compiled = node("node_modules/typescript/bin/tsc", "-p", ".")
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr

    # Then it enqueues a job (only `input` and `questions` given) and reads it back
    ran = node("dist/client.js", server.url, server.key, document(2))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    shown = json.loads(ran.stdout)
    assert (shown["accepted"], shown["status"], shown["callback"]) == ("queued", "queued", None)
