"""docker-compose.yml cannot run here (no Docker engine), so it is parsed and checked against the code."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import AliasChoices, BaseModel

from suture.config.settings import Settings
from suture.workers.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]

# Names compose itself or Flower reads; everything else must be a suture setting.
NON_SETTINGS_ENV = {"REDIS_PASSWORD", "REDISCLI_AUTH", "FLOWER_BASIC_AUTH", "FLOWER_BIND"}


def settings_env_names(model: type[BaseModel] = Settings, prefix: str = "SUTURE_") -> set[str]:
    """Every environment variable name Settings reads, nested ones included."""
    names: set[str] = set()
    for field_name, field in model.model_fields.items():
        names.add(f"{prefix}{field_name.upper()}")
        if isinstance(field.validation_alias, AliasChoices):
            names.update(str(a).upper() for a in field.validation_alias.choices)
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.update(settings_env_names(annotation, f"{prefix}{field_name.upper()}__"))
    return names


def env_example_names() -> set[str]:
    names = set()
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = re.match(r"^#?\s*([A-Z][A-Z0-9_]*)=", line)
        if match:
            names.add(match.group(1))
    return names


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_every_service_command_exists_in_the_cli(service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a service's command, and a broker configured as compose configures one (nothing connects)
    monkeypatch.setenv("SUTURE_BROKER_URL", "redis://redis:6379/0")
    monkeypatch.setenv("SUTURE_REDIS_URL", "redis://redis:6379/0")
    command = SERVICES[service]["command"]
    program, args = command[0], command[1:]

    # Then suture commands parse with the real CLI parser, and celery ones name suture's Celery app
    if program == "suture":
        parsed = build_parser().parse_args(args)
        assert parsed.command == args[0]
        assert callable(parsed.func)
    elif program == "celery":
        assert args[:2] == ["-A", "suture.workers"]
        assert args[2] in {"worker", "flower"}
        assert importlib.import_module("suture.workers.celery").app.main is not None
    else:
        assert program == "redis-server", f"{service} runs an unknown program {program}"


@pytest.mark.parametrize(
    ("name", "where"),
    [
        (name, f"{service}.environment")
        for service, spec in SERVICES.items()
        for name in spec.get("environment", {})
    ]
    + [(name, ".env.example") for name in sorted(env_example_names())],
)
def test_environment_names_are_suture_settings(name: str, where: str) -> None:
    # Given an environment variable compose sets or .env.example documents
    # Then suture's Settings (or compose/Flower itself) reads exactly that name
    assert name in settings_env_names() | NON_SETTINGS_ENV, f"{where}: {name} is read by nothing"


def test_redis_persists_with_aof_and_never_evicts_queued_tasks() -> None:
    command = " ".join(SERVICES["redis"]["command"])
    assert "--appendonly yes" in command
    assert "--maxmemory-policy noeviction" in command
    assert "/data" in SERVICES["redis"]["volumes"][0]


def test_worker_scales_and_flower_requires_auth_and_simulator_is_optional() -> None:
    worker, flower, simulator = SERVICES["worker"], SERVICES["flower"], SERVICES["simulator"]
    # A fixed name or host port would make `--scale worker=N` fail.
    assert "container_name" not in worker
    assert "ports" not in worker
    assert ":?" in flower["environment"]["FLOWER_BASIC_AUTH"]
    assert simulator["profiles"] == ["simulator"]
    assert "worker" not in simulator.get("profiles", [])


def test_flower_publishes_on_loopback_unless_configured_otherwise() -> None:
    # Given the compose file's Flower ports, with FLOWER_BIND unset
    ports = SERVICES["flower"]["ports"]
    # Then each binds the host's loopback by default, and only FLOWER_BIND can change that
    assert ports == ["${FLOWER_BIND:-127.0.0.1}:5555:5555"]


def test_the_api_serves_on_loopback_with_a_health_check_and_keys_from_env() -> None:
    api = SERVICES["api"]
    parsed = build_parser().parse_args(api["command"][1:])
    assert parsed.command == "serve" and parsed.port == 8080
    assert all(port.startswith("127.0.0.1:") for port in api["ports"])
    assert "/healthz" in " ".join(api["healthcheck"]["test"])
    assert "SUTURE_API__KEYS" in env_example_names()


def test_no_secret_is_hard_coded_in_compose() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    # Every password in a URL is interpolated from .env, never written literally.
    for password in re.findall(r"redis://:([^@]*)@", text):
        assert password.startswith("${REDIS_PASSWORD")
    assert "sk-" not in text
