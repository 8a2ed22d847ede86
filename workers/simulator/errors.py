"""Errors of the simulated model server, one small hierarchy.

SimulatorError                 base; str() is one line
├── UnknownProfileError(name)  programmer/config error: no such profile
├── FaultRatesError            config error: an unknown fault, a share outside 0..1, or shares
│                              adding up to more than 1
├── LimitsError                config error: a rate limit that cannot be used (``--limit`` text)
└── RequestRejected(status, code, message)
                               an HTTP request the simulator answers with an OpenAI-shaped
                               error body (400 invalid request or context_length_exceeded,
                               401 bad key, 404 unknown model or file, 409 a batch that cannot
                               be cancelled, 413 an upload over its cap, 429 over a rate limit,
                               503 too many requests in flight)
"""

from __future__ import annotations


class SimulatorError(Exception):
    """Base of everything the simulator raises."""


class UnknownProfileError(SimulatorError):
    """The named behaviour profile does not exist."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown simulator profile {name!r} (known: {', '.join(known)})")


class FaultRatesError(SimulatorError):
    """Chaos fault shares that cannot be used: unknown name, outside 0..1, or more than 1 in all."""


class LimitsError(SimulatorError):
    """A per-model rate limit that cannot be used, e.g. ``--limit gpt-5-nano=fast``."""


class RequestRejected(SimulatorError):
    """A request the simulator refuses; carries the HTTP status and OpenAI error fields."""

    def __init__(
        self,
        status: int,
        code: str | None,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        param: str | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.error_type = error_type
        self.param = param
        super().__init__(f"HTTP {status} {code or error_type}: {message}")

    def body(self) -> dict[str, object]:
        """The error body in the shape OpenAI's API returns it."""
        error = {"message": self.message, "type": self.error_type, "param": self.param, "code": self.code}
        return {"error": error}
