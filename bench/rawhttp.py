"""A lean HTTP/1.1 client for benchmarks whose load is a sequence of JSON requests per user.

Why: wrk plays one request over and over, and httpx spends about 10 ms of CPU per buyer of
``bench/shop_rush.py`` (a cart, then its checkout), more than the server it measures; on the
2-core machine the client then sets the rate. This one writes each request as bytes on a kept
connection and reads the answer by its ``Content-Length`` (or chunks), about a tenth of that.
Only what the benchmarks send: JSON bodies, keep-alive, one request at a time per connection.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit


class Answer:
    __slots__ = ("body", "status")

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One kept connection to ``base`` (``http://host:port``)."""

    def __init__(self, base: str, headers: Mapping[str, str] | None = None) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._fixed = f"Host: {self.host}:{self.port}\r\n{extra}".encode()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> Answer:
        """The answer to one request; a connection the server closed is opened anew once."""
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\n".encode() + self._fixed
        if body is not None:
            head += b"Content-Type: application/json\r\n"
        head += b"Content-Length: %d\r\n\r\n" % len(payload)
        for attempt in (1, 2):
            if self._writer is None:
                self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
            try:
                self._writer.write(head + payload)
                return await self._read()
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _read(self) -> Answer:
        assert self._reader is not None
        head = await self._reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self._reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._chunks()
        else:
            body = b""
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Answer(status, body)

    async def _chunks(self) -> bytes:
        assert self._reader is not None
        parts = []
        while True:
            size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self._reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await self._reader.readexactly(size))
            await self._reader.readexactly(2)

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
