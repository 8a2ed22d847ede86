"""A lean HTTP/1.1 load generator for the API bench: pre-built requests on keep-alive connections.

The bench's client shares the machine's 2 cores with the server it measures, so every millisecond it
spends is taken from the server: aiohttp spent about as much CPU per request as the server's own
handler. This one writes one pre-encoded request and reads the status line, the headers and a
``Content-Length`` body, nothing more (the API answers every request with a length, never chunked).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import urlsplit


def post_request(base: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    """The bytes of one ``POST`` with a JSON body, sent again and again as it is."""
    host = urlsplit(base).netloc
    payload = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()] + [f"Content-Length: {len(payload)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


class Connection:
    """One keep-alive connection that sends a request and returns the answer's status code."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    async def open(cls, base: str) -> Connection:
        parts = urlsplit(base)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        return cls(reader, writer)

    async def send(self, request: bytes) -> int:
        self._writer.write(request)
        head = await self._reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length:
            await self._reader.readexactly(length)
        return status

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()
