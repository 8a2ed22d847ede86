"""The HTTP face of OpenAI's Files and Batch APIs on the simulator (aiohttp handlers).

Routes: ``POST /v1/files`` (multipart: ``file``, ``purpose=batch``), ``GET /v1/files``,
``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``,
``POST /v1/batches``, ``GET /v1/batches``, ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel``. Bodies and errors have OpenAI's shapes, so the unmodified
openai SDK (``client.files``, ``client.batches``) works against it; every reply is labelled a
simulation. Lists are cursor pages (``data``, ``first_id``, ``last_id``, ``has_more``; ``after``
and ``limit`` query parameters), batches newest first.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import BodyPartReader, web

from suture.workers.simulator import batch_state
from suture.workers.simulator.batch_registry import BatchRegistry
from suture.workers.simulator.connections import READ_TIMEOUT_S, within
from suture.workers.simulator.errors import RequestRejected
from suture.workers.simulator.files import FileStore, too_large
from suture.workers.simulator.replies import SIMULATED_HEADERS, error_reply, json_reply

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_CHUNK_BYTES = 256 * 1024
_MAX_FIELD_BYTES = 1024  # a form field other than the file (``purpose``)


class BatchApi:
    """Handlers over one file store and batch registry; ``check_key`` answers a bad API key."""

    def __init__(
        self,
        files: FileStore,
        batches: BatchRegistry,
        check_key: Callable[[web.Request], RequestRejected | None],
        *,
        read_timeout_s: float = READ_TIMEOUT_S,
        state_file: Path | None = None,
    ) -> None:
        self.read_timeout_s = read_timeout_s
        self.state_file = state_file  # files and batches kept across restarts (``batch_state``); None: none
        self.files = files
        self.batches = batches
        self._check_key = check_key

    def register(self, app: web.Application) -> None:
        """Add the Files and Batch routes to ``app``, and stop running batches when it shuts down."""
        routes = [
            ("POST", "/v1/files", self.upload_file),
            ("GET", "/v1/files", self.list_files),
            ("GET", "/v1/files/{id}", self.get_file),
            ("GET", "/v1/files/{id}/content", self.file_content),
            ("DELETE", "/v1/files/{id}", self.delete_file),
            ("POST", "/v1/batches", self.create_batch),
            ("GET", "/v1/batches", self.list_batches),
            ("GET", "/v1/batches/{id}", self.get_batch),
            ("POST", "/v1/batches/{id}/cancel", self.cancel_batch),
        ]
        for method, path, handler in routes:
            app.router.add_route(method, path, self._guarded(handler))
        app.on_shutdown.append(self.batches.shutdown)
        if self.state_file is not None:
            app.on_startup.append(self._load)
            app.on_shutdown.append(self._save)  # after the running batches were stopped

    async def _load(self, _: web.Application) -> None:
        assert self.state_file is not None
        batch_state.load(self.state_file, self.files, self.batches)

    async def _save(self, _: web.Application) -> None:
        assert self.state_file is not None
        batch_state.save(self.state_file, self.files, self.batches)

    def _guarded(self, handler: Handler) -> Handler:
        async def guarded(request: web.Request) -> web.StreamResponse:
            try:
                rejected = self._check_key(request)
                if rejected is not None:
                    raise rejected
                return await handler(request)
            except RequestRejected as exc:
                return error_reply(exc)

        return guarded

    async def upload_file(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/files``: store a ``.jsonl`` file with purpose ``batch``."""
        reading = _read_upload(request, self.files.limits.max_file_bytes)
        filename, purpose, content = await within(request, self.read_timeout_s, reading)
        return json_reply(self.files.upload(filename, purpose, content).object())

    async def list_files(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/files``: newest first unless ``order=asc``; ``purpose`` filters."""
        files = self.files.listing(request.query.get("purpose"))
        if request.query.get("order", "desc") == "desc":
            files.reverse()
        page = _page([f.object() for f in files], request.query, default_limit=10_000)
        return json_reply(page)

    async def get_file(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/files/{id}``: the ``FileObject``."""
        return json_reply(self.files.get(request.match_info["id"]).object())

    async def file_content(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/files/{id}/content``: the file's bytes."""
        stored = self.files.get(request.match_info["id"])
        return web.Response(
            body=stored.content, content_type="application/octet-stream", headers=SIMULATED_HEADERS
        )

    async def delete_file(self, request: web.Request) -> web.StreamResponse:
        """``DELETE /v1/files/{id}``: forget the file and free its memory."""
        stored = self.files.delete(request.match_info["id"])
        return json_reply({"id": stored.id, "object": "file", "deleted": True})

    async def create_batch(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/batches``: a new batch, ``validating``, that runs on its own."""
        try:
            params = json.loads(await within(request, self.read_timeout_s, request.read()))
        except ValueError:
            raise RequestRejected(400, None, "We could not parse the JSON body of your request.") from None
        return json_reply(self.batches.create(params).object())

    async def list_batches(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/batches``: newest first, 20 a page unless ``limit`` says otherwise."""
        page = _page([b.object() for b in self.batches.listing()], request.query, default_limit=20)
        return json_reply(page)

    async def get_batch(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/batches/{id}``: the ``Batch`` object."""
        return json_reply(self.batches.get(request.match_info["id"]).object())

    async def cancel_batch(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/batches/{id}/cancel``: the batch, now ``cancelling`` (or already stopped)."""
        return json_reply(self.batches.cancel(request.match_info["id"]).object())


async def _read_upload(request: web.Request, max_bytes: int) -> tuple[str, str, bytes]:
    """``(filename, purpose, content)`` of a multipart upload, read in chunks up to ``max_bytes``."""
    if not request.content_type.startswith("multipart/"):
        raise RequestRejected(400, None, "Uploads must be multipart/form-data with 'file' and 'purpose'.")
    filename, purpose, content = None, None, None
    async for part in await request.multipart():
        if not isinstance(part, BodyPartReader):
            raise RequestRejected(400, None, "Nested multipart uploads are not supported.")
        if part.name == "file":
            filename = part.filename or "upload.jsonl"
            content = await _read_part(part, max_bytes, too_large(max_bytes))
        elif part.name == "purpose":
            field_error = RequestRejected(400, None, "Invalid 'purpose'.", param="purpose")
            purpose = (await _read_part(part, _MAX_FIELD_BYTES, field_error)).decode("utf-8", "replace")
        else:
            await part.release()
    for name, value in (("file", content), ("purpose", purpose)):
        if value is None:
            raise RequestRejected(400, None, f"Missing required parameter: '{name}'.", param=name)
    assert filename is not None and purpose is not None and content is not None
    return filename, purpose, content


async def _read_part(part: BodyPartReader, max_bytes: int, over: RequestRejected) -> bytes:
    """The part's bytes; past ``max_bytes`` the rest is read and dropped (memory stays bounded,
    and the client, still sending, gets the refusal instead of a reset connection)."""
    chunks: list[bytes] = []
    size = 0
    while chunk := await part.read_chunk(_CHUNK_BYTES):
        size += len(chunk)
        if size <= max_bytes:
            chunks.append(chunk)
        else:
            chunks.clear()
    if size > max_bytes:
        raise over
    return b"".join(chunks)


def _page(items: Sequence[dict[str, Any]], query: Any, *, default_limit: int) -> dict[str, Any]:
    """A cursor page of ``items`` after the ``after`` id, at most ``limit`` long."""
    try:
        limit = int(query.get("limit", default_limit))
    except ValueError:
        limit = 0
    if not 1 <= limit <= max(default_limit, 100):
        raise RequestRejected(400, None, "Invalid 'limit': out of range.", param="limit")
    after = query.get("after")
    start = 0
    if after is not None:
        start = next((i + 1 for i, item in enumerate(items) if item["id"] == after), len(items))
    data = list(items[start : start + limit])
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": start + limit < len(items),
    }
