"""The ASGI app: OpenAI's chat completions, copygram's edits, models and health, on Starlette.

:func:`create_app` builds it around a session factory (called once, on the model's worker
thread). Every request's model work goes through one :class:`~copygram.serve.queue.ModelQueue`;
every error, whatever raised it, leaves as OpenAI's error body with its status code. Endpoints and
limits: docs/serve.md.
"""

from __future__ import annotations

import hmac
import importlib.resources
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from copygram.errors import missing_dependency
from copygram.serve import engine
from copygram.serve.engine import SessionHolder
from copygram.serve.items import Delta, Finished, Item, Progress, Started
from copygram.serve.legacy import parse_completion
from copygram.serve.queue import ClientGone, Job, ModelQueue
from copygram.serve.schemas import (
    ApiError,
    JSONObject,
    parse_body,
    parse_chat,
    parse_edit,
)
from copygram.serve.sse import EventStream, comment, sse

try:
    from starlette.applications import Starlette
    from starlette.datastructures import Headers
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - the serve extra is missing
    raise missing_dependency(exc.name or "starlette", "serve") from exc

if TYPE_CHECKING:
    from copygram.session import EditSession

logger = logging.getLogger("copygram.serve")

MAX_BODY_BYTES = 8 << 20
FINGERPRINT = "copygram-serve-1"


def error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


class RequireKey:
    """Every HTTP request needs ``Authorization: Bearer <key>``; 401 otherwise."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app, self._key = app, key.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The live view's page holds no data: a browser opening it cannot send a bearer token
        # (the page asks for the key and sends it with its requests).
        if scope["type"] == "http" and scope["path"] != UI_PATH:
            scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                    token.strip().encode("utf-8", "replace"), self._key):
                error = ApiError(401, "Incorrect or missing API key: send the server's key as "
                                 "'Authorization: Bearer KEY'", code="invalid_api_key",
                                 headers={"WWW-Authenticate": "Bearer"})
                await error_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Server:
    """The endpoints, over one session holder and one queue."""

    def __init__(self, holder: SessionHolder, queue: ModelQueue, model_id: str,
                 aliases: Sequence[str], max_body_bytes: int) -> None:
        self.holder, self.queue, self.model_id = holder, queue, model_id
        self.names = {model_id, *aliases}
        self.max_body_bytes = max_body_bytes
        self.created = int(time.time())

    # -- plumbing -------------------------------------------------------------------------------

    async def read_json(self, request: Request) -> JSONObject:
        """The body as a JSON object, refused with 413 past the size limit (before reading it
        all when the client declared its length)."""
        too_big = ApiError(413, f"the request body is larger than the server's limit of "
                           f"{self.max_body_bytes} bytes", code="request_too_large")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            raise too_big
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise too_big
            chunks.append(chunk)
        return parse_body(b"".join(chunks))

    def check_model(self, name: str | None) -> None:
        if name is not None and name not in self.names:
            raise ApiError(404, f"The model '{name}' does not exist: this server serves "
                           f"'{self.model_id}' (GET /v1/models)", param="model",
                           code="model_not_found")

    async def run(self, request: Request, work: Callable[[EditSession], Iterator[Item]],
                  stream: bool, render: Callable[[Finished], JSONObject],
                  render_item: Callable[[Item], list[JSONObject]]) -> Response:
        """Queue ``work``, then answer with its result or stream its items as events."""
        job = self.queue.submit(lambda: work(self.holder.get()))
        handed_over = False  # to the event stream, which cancels the job when it ends
        try:
            first = await job.next(request.is_disconnected)
            if not isinstance(first, Started):
                raise ApiError(500, "the model produced no output", kind="server_error")
            if stream:
                handed_over = True
                return EventStream(self.chunks(job, first, render_item), job.cancel)
            while (item := await job.next(request.is_disconnected)) is not None:
                if isinstance(item, Finished):
                    return JSONResponse(render(item))
            raise ApiError(500, "the model ended without a result", kind="server_error")
        except ClientGone:
            return Response(status_code=499)  # nobody reads it
        except (ApiError, ClientDisconnect):
            raise
        except Exception as exc:
            logger.exception("a generation failed")
            raise internal(exc) from exc
        finally:
            if not handed_over:
                job.cancel()  # a no-op once done; frees the model when the handler fails

    async def chunks(self, job: Job[Item], first: Item,
                     render_item: Callable[[Item], list[JSONObject]]) -> AsyncIterator[str]:
        item: Item | None = first
        try:
            while item is not None:
                events = render_item(item)
                for event in events:
                    yield sse(event)
                if isinstance(item, Progress) and not events:  # an OpenAI stream's prefill
                    yield comment(str(item.event["type"]))
                item = await job.next()
            yield sse("[DONE]")
        except ApiError as error:
            yield sse(error.body())
        except Exception as exc:
            logger.exception("a streamed generation failed")
            yield sse(internal(exc).body())

    # -- endpoints ------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        status = "error" if self.holder.error else "ok" if self.holder.ready else "loading"
        body: JSONObject = {"status": status, "model": self.model_id,
                            "running": self.queue.running, "waiting": self.queue.waiting,
                            "max_waiting": self.queue.max_waiting, "served": self.queue.served,
                            # which process answered: `serve --replicas` runs several
                            "pid": os.getpid()}
        if self.holder.error:
            body["error"] = self.holder.error
        return JSONResponse(body, status_code=503 if self.holder.error else 200)

    def model_card(self) -> JSONObject:
        return {"id": self.model_id, "object": "model", "created": self.created,
                "owned_by": "copygram"}

    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [self.model_card()]})

    async def model(self, request: Request) -> Response:
        self.check_model(request.path_params["name"])
        return JSONResponse(self.model_card())

    async def chat_completions(self, request: Request) -> Response:
        chat = parse_chat(await self.read_json(request))
        self.check_model(chat.model)
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        head: JSONObject = {"id": ident, "object": "chat.completion.chunk", "created": created,
                            "model": self.model_id, "system_fingerprint": FINGERPRINT}

        def chunk(delta: JSONObject, finish: str | None = None) -> JSONObject:
            return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                         "finish_reason": finish}]}

        def render(done: Finished) -> JSONObject:
            message = {"role": "assistant", "content": done.text, "refusal": None}
            return {**head, "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "logprobs": None,
                                 "finish_reason": done.finish_reason}],
                    "usage": done.usage.as_dict()}

        def render_item(item: Item) -> list[JSONObject]:
            if isinstance(item, Started):
                return [chunk({"role": "assistant", "content": ""})]
            if isinstance(item, Delta):
                return [chunk({"content": item.text})] if item.text else []
            if isinstance(item, Finished):
                last = [chunk({}, item.finish_reason)]
                if chat.include_usage:
                    last.append({**head, "choices": [], "usage": item.usage.as_dict()})
                return last
            return []

        return await self.run(request, lambda session: engine.chat(session, chat), chat.stream,
                              render, render_item)

    async def completions(self, request: Request) -> Response:
        """OpenAI's legacy ``/v1/completions``: the prompt string continued as it is (its
        special tokens read as such; Continue sends its edits here as one ChatML string)."""
        completion = parse_completion(await self.read_json(request))
        self.check_model(completion.model)
        head: JSONObject = {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion",
                            "created": int(time.time()), "model": self.model_id,
                            "system_fingerprint": FINGERPRINT}

        def choice(text: str, finish: str | None) -> JSONObject:
            return {**head, "choices": [{"index": 0, "text": text, "logprobs": None,
                                         "finish_reason": finish}]}

        def render(done: Finished) -> JSONObject:
            return {**choice(done.text or "", done.finish_reason),
                    "usage": done.usage.as_dict()}

        def render_item(item: Item) -> list[JSONObject]:
            if isinstance(item, Delta):
                return [choice(item.text, None)] if item.text else []
            if isinstance(item, Finished):
                last = [choice("", item.finish_reason)]
                if completion.include_usage:
                    last.append({**head, "choices": [], "usage": item.usage.as_dict()})
                return last
            return []

        return await self.run(request, lambda session: engine.chat(session, completion),
                              completion.stream, render, render_item)

    async def edits(self, request: Request) -> Response:
        edit = parse_edit(await self.read_json(request))
        self.check_model(edit.model)
        head: JSONObject = {"id": f"edit-{uuid.uuid4().hex}", "object": "copygram.edit",
                            "created": int(time.time()), "model": self.model_id}

        def render(done: Finished) -> JSONObject:
            body: JSONObject = {**head, "mode": done.mode, "text": done.text,
                                "finish_reason": done.finish_reason}
            if done.program is not None:
                body["program"] = done.program
            return {**body, "usage": done.usage.as_dict(), "stats": done.stats}

        def render_item(item: Item) -> list[JSONObject]:
            if isinstance(item, Progress):
                return [item.event]
            if isinstance(item, Delta):
                return [{"type": "text", "text": item.text}] if item.text else []
            if isinstance(item, Finished):
                return [{"type": "done", **render(item)}]
            return []

        return await self.run(request, lambda session: engine.edit(session, edit), edit.stream,
                              render, render_item)


def internal(exc: BaseException) -> ApiError:
    return ApiError(500, f"the server failed on this request: {type(exc).__name__}: {exc}",
                    kind="server_error", code="internal_error")


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code)
    path = request.url.path
    message = (f"no such endpoint: {request.method} {path} (see docs/serve.md)"
               if exc.status_code in (404, 405) else str(exc.detail))
    return error_response(ApiError(exc.status_code, message, code=code,
                                   headers=dict(exc.headers or {})))


async def _client_gone(request: Request, exc: Exception) -> Response:
    return Response(status_code=499)


async def _crash(request: Request, exc: Exception) -> Response:
    logger.error("request %s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(internal(exc))


UI_PATH = "/ui"


async def _ui(request: Request) -> Response:
    """The live view (``ui.html``, package data): a page that streams an edit from
    ``/v1/edits``. Read once per request (microseconds), so an edited page shows on reload."""
    page = importlib.resources.files("copygram.serve").joinpath("ui.html")
    return HTMLResponse(page.read_text(encoding="utf-8"),
                        headers={"Content-Security-Policy": "default-src 'self'; "
                                 "style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
                                 "img-src 'self' blob:"})


def create_app(session_factory: Callable[[], EditSession], *, model_id: str = "copygram",
               aliases: Sequence[str] = (), api_key: str | None = None,
               max_body_bytes: int = MAX_BODY_BYTES, max_waiting: int = 16,
               timeout_s: float = 300.0, cors_origins: Sequence[str] = ()) -> Starlette:
    """The server's ASGI app around one session.

    ``session_factory`` is called once, on the model's worker thread, at startup (or on the
    first request when the app runs without its lifespan). ``model_id`` is the name
    ``/v1/models`` lists; requests may name it or one of ``aliases``. ``api_key``: every request
    must carry it as a bearer token. ``max_waiting`` requests wait behind the running one before
    the queue answers 429; ``timeout_s`` bounds each request, queueing included (504).
    ``cors_origins``: the web origins (``"*"``: any) whose pages may call the server from a
    browser; none by default."""
    holder = SessionHolder(session_factory)
    queue = ModelQueue(max_waiting=max_waiting, timeout_s=timeout_s)
    server = Server(holder, queue, model_id, aliases, max_body_bytes)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            await queue.call(holder.get)
        except ApiError as error:
            logger.error("%s", error.message)
        yield
        queue.close()

    routes = [
        Route("/health", server.health, methods=["GET"]),
        Route("/v1/models", server.models, methods=["GET"]),
        Route("/v1/models/{name:path}", server.model, methods=["GET"]),
        Route("/v1/chat/completions", server.chat_completions, methods=["POST"]),
        Route("/v1/completions", server.completions, methods=["POST"]),
        Route("/v1/edits", server.edits, methods=["POST"]),
        Route(UI_PATH, _ui, methods=["GET"]),
    ]
    middleware = [Middleware(RequireKey, key=api_key)] if api_key else []
    if cors_origins:
        # Outermost, so that a preflight (which carries no key) is answered before the key
        # check, and so that errors, a 401 included, carry the headers a page needs to read
        # them. No cookies are involved, so any request header may be allowed; Retry-After is
        # exposed for the 429s.
        middleware.insert(0, Middleware(CORSMiddleware, allow_origins=list(cors_origins),
                                        allow_methods=["GET", "POST"], allow_headers=["*"],
                                        expose_headers=["Retry-After"]))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={ApiError: _api_error, HTTPException: _http_error,
                                        ClientDisconnect: _client_gone, Exception: _crash})
    app.state.server = server
    return app


__all__ = ["MAX_BODY_BYTES", "UI_PATH", "EventStream", "RequireKey", "Server", "create_app"]
