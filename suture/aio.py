"""suture for asyncio programs: ``await enqueue(...)``, ``await handle.result(timeout_s=...)``,
``async for event in handle.events()``; ``await close()`` at shutdown (``suture.workers.aio``)."""

from suture.workers.aio import AsyncJobHandle, close, enqueue, get_job

__all__ = ["AsyncJobHandle", "close", "enqueue", "get_job"]
