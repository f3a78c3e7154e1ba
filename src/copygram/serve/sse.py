"""Server-sent events: the stream a ``"stream": true`` request gets (docs/serve.md), which stops
as soon as its client goes away."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

from copygram.errors import missing_dependency
from copygram.serve.schemas import JSONObject

try:
    import anyio
    from starlette.responses import StreamingResponse
    from starlette.types import Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - the serve extra is missing
    raise missing_dependency(exc.name or "starlette", "serve") from exc


def sse(data: JSONObject | str) -> str:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"


class EventStream(StreamingResponse):
    """Server-sent events that stop, and call ``on_close``, as soon as the client disconnects
    (whether the server reports it as a message or as a failed send)."""

    def __init__(self, chunks: AsyncIterator[str], on_close: Callable[[], None]) -> None:
        super().__init__(chunks, media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    await self.listen_for_disconnect(receive)
                    group.cancel_scope.cancel()

                group.start_soon(watch)
                try:
                    await self.stream_response(send)
                except OSError:
                    pass  # the client went away during a send
                group.cancel_scope.cancel()
        finally:
            self._on_close()


def comment(text: str) -> str:
    """An event-stream comment line: every client skips it, and it keeps a connection that waits
    on a long prompt from looking idle to a proxy or a client's read timeout."""
    return f": {text}\n\n"


__all__ = ["EventStream", "comment", "sse"]
