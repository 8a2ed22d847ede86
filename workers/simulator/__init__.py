"""A SIMULATED OpenAI-compatible model server: grounded, biased, deterministic quiz answers over real HTTP.

It lets suture run its production client path with no model access (demo, tests, benchmarks),
and it is labelled a simulation wherever it shows. Modules: ``profiles`` (per-model bias, speed,
chaos rates), ``prompt`` / ``request`` (what a request asks), ``document`` / ``quizgen`` / ``bias``
(the answer), ``faults``, ``completion`` (tokens, latency, response body), ``server`` (HTTP),
``serving`` (threads and the foreground loop). Errors: see ``workers.simulator.errors``.
"""

from workers.simulator.errors import RequestRejected, SimulatorError, UnknownProfileError
from workers.simulator.profiles import PROFILES, FaultRates, ModelTraits, Profile, get_profile
from workers.simulator.serving import ServerThread, SimulatorHandle, start_simulator

__all__ = [
    "PROFILES",
    "FaultRates",
    "ModelTraits",
    "Profile",
    "RequestRejected",
    "ServerThread",
    "SimulatorError",
    "SimulatorHandle",
    "UnknownProfileError",
    "get_profile",
    "start_simulator",
]
