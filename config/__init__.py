"""Typed settings for suture: one object, loaded at the edge with precedence CLI > ENV > YAML > defaults."""

from suture.config.settings import (
    ClientSettings,
    ModelPrice,
    QuizRules,
    Settings,
    SimulatorSettings,
    WorkerSettings,
    load_settings,
)

__all__ = [
    "ClientSettings",
    "ModelPrice",
    "QuizRules",
    "Settings",
    "SimulatorSettings",
    "WorkerSettings",
    "load_settings",
]
