"""An answer as an inner ASGI application sent it, for the layers that keep or judge one
(stored idempotent answers, ETags of the current state, kept list pages)."""

from __future__ import annotations

from starlette.types import Message, Send


class Captured:
    """Collects ``http.response.*`` messages: the status, the headers and the body."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: list[bytes] = []
        self.complete = False  # the last body message came

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            self.chunks.append(message.get("body", b""))
            self.complete = not message.get("more_body", False)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def passing_to(self, send: Send) -> Send:
        """A ``send`` that collects each message and passes it on."""

        async def both(message: Message) -> None:
            await self.send(message)
            await send(message)

        return both
