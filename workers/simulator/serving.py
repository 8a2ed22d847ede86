"""Running an aiohttp application: in a background thread (tests, ``suture generate``) or in the foreground (CLI)."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import Callable

from aiohttp import web

from config.settings import QuizRules
from workers.simulator.profiles import Profile, get_profile
from workers.simulator.prompt_cache import PromptCache
from workers.simulator.server import SimulatorServer

BACKLOG = 2048  # hundreds of slow requests may be in flight at once
STOP_TIMEOUT_S = 10.0
SHUTDOWN_TIMEOUT_S = 0.5  # in-flight slow requests are cut off at stop, not awaited


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free one. Raises OSError if the address is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(BACKLOG)
    return sock


def base_url(sock: socket.socket, suffix: str = "/v1") -> str:
    """The URL a client uses to reach a bound socket."""
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}{suffix}"


class ServerThread:
    """An aiohttp application served from its own event loop in a daemon thread."""

    def __init__(
        self, app_factory: Callable[[], web.Application], host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self._sock = bind(host, port)
        self.base_url = base_url(self._sock)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runner = web.AppRunner(app_factory(), access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
        self._thread = threading.Thread(target=self._serve, name=f"aiohttp {self.base_url}", daemon=True)
        self._startup_error: BaseException | None = None
        self._thread.start()
        if not self._ready.wait(STOP_TIMEOUT_S) or self._startup_error is not None:
            self._sock.close()
            raise RuntimeError(f"server at {self.base_url} did not start: {self._startup_error}")

    def __repr__(self) -> str:
        return f"ServerThread({self.base_url})"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._runner.setup())
            site = web.SockSite(self._runner, self._sock, backlog=BACKLOG)
            self._loop.run_until_complete(site.start())
        except BaseException as exc:  # handed to the starting thread, which raises it
            self._startup_error = exc
            self._ready.set()
            self._loop.close()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    def stop(self) -> None:
        """Stop serving, close the socket and join the thread (idempotent)."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(STOP_TIMEOUT_S)
        self._sock.close()


class SimulatorHandle(ServerThread):
    """A running in-process simulator; ``.base_url`` ends in ``/v1``, ``.stop()`` shuts it down."""

    def __init__(self, server: SimulatorServer, host: str, port: int) -> None:
        self.server = server
        super().__init__(server.application, host, port)

    def __repr__(self) -> str:
        return f"SimulatorHandle({self.base_url}, {self.server!r})"


def start_simulator(
    profile: str | Profile = "realistic",
    latency_scale: float = 1.0,
    seed: int = 0,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    api_key: str | None = None,
    rules: QuizRules | None = None,
    prompt_cache: PromptCache | None = None,
) -> SimulatorHandle:
    """Start a simulated model server in a background thread of this process.

    ``prompt_cache`` defaults to a fresh ``PromptCache()`` with the packaged limits; see
    ``configure.start_from_settings`` for a simulator built from settings.
    """
    chosen = profile if isinstance(profile, Profile) else get_profile(profile, rules)
    if latency_scale < 0:
        raise ValueError(f"latency_scale must be >= 0, got {latency_scale}")
    return SimulatorHandle(SimulatorServer(chosen, latency_scale, seed, api_key, prompt_cache), host, port)


def serve_forever(server: SimulatorServer, sock: socket.socket, on_ready: Callable[[], None]) -> None:
    """Serve in the foreground until SIGINT or SIGTERM, then shut down cleanly."""

    async def main() -> None:
        runner = web.AppRunner(server.application(), access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
        await runner.setup()
        await web.SockSite(runner, sock, backlog=BACKLOG).start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        on_ready()
        await stop.wait()
        await runner.cleanup()

    asyncio.run(main())
