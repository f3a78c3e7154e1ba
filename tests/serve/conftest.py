"""Fixtures of the serve tests: the app around a scripted model, driven by Starlette's TestClient.

Nothing here imports starlette at module level: without the ``serve`` extra the tests that need
it skip (their ``serve`` marker) instead of failing to import.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pytest

from copygram import Copy, Gen, Program, resolve
from copygram.session import EditSession
from copygram.testing import ScriptedBackend

if TYPE_CHECKING:
    from starlette.testclient import TestClient

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\n"
PROGRAM = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 5)])
EDITED = resolve(PROGRAM, DOCUMENT)
MODEL = "scripted"


@dataclass
class FlakyBackend(ScriptedBackend):
    """A scripted model whose next ``failures`` prefills raise, and whose forwards wait for
    ``gate`` when one is set (a model busy for as long as a test wants)."""

    failures: int = 0
    gate: threading.Event | None = None
    entered: threading.Event | None = None

    def splice(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        if self.entered is not None:
            self.entered.set()
        if self.gate is not None and not self.gate.wait(30):
            raise RuntimeError("the test never opened the gate")
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the model blew up")
        return super().splice(ids)


MakeClient = Callable[..., "TestClient"]


@pytest.fixture
def make_client() -> Iterator[MakeClient]:
    """``make_client(backend=None, syntax="lines", on_damage="rewrite", mode="program",
    **options of create_app)``: a started TestClient (its lifespan run) around
    ``EditSession(backend, syntax=syntax, on_damage=on_damage, mode=mode)`` (the scripted
    programs are copy tags; ``None``: program mode's default, head blocks); the default backend
    edits :data:`DOCUMENT`."""
    from starlette.testclient import TestClient

    from copygram.serve.app import create_app

    clients: list[TestClient] = []

    def make(backend: ScriptedBackend | None = None, *, api_key: str | None = None,
             max_body_bytes: int = 1 << 16, max_waiting: int = 16,
             timeout_s: float = 60.0, cors_origins: Sequence[str] = (),
             model_id: str = MODEL, syntax: str | None = "lines",
             on_damage: str = "rewrite", mode: str = "program") -> TestClient:
        model = backend if backend is not None else FlakyBackend(DOCUMENT, PROGRAM)
        app = create_app(lambda: EditSession(model, syntax=syntax, on_damage=on_damage,
                                             mode=mode),
                         model_id=model_id,
                         api_key=api_key, max_body_bytes=max_body_bytes, max_waiting=max_waiting,
                         timeout_s=timeout_s, cors_origins=cors_origins)
        client = TestClient(app, raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def live_server() -> Iterator[str]:
    """``copygram serve``'s app around the scripted model (program mode, copy tags) on a
    loopback port, served by uvicorn in a thread: its base URL."""
    import uvicorn

    from copygram.serve.app import create_app

    backend = FlakyBackend(DOCUMENT, PROGRAM)
    app = create_app(lambda: EditSession(backend, syntax="lines", mode="program"),
                     model_id="scripted")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
