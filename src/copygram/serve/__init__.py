"""``copygram serve``: an OpenAI-compatible HTTP server over one :class:`~copygram.EditSession`.

Modules, lowest first: :mod:`~copygram.serve.schemas` (request bodies parsed and checked into
frozen dataclasses, OpenAI-style error bodies), :mod:`~copygram.serve.queue` (one model, requests
run one at a time in arrival order on one worker thread), :mod:`~copygram.serve.engine` (what a
request runs on the session: chat completions, edits), :mod:`~copygram.serve.app` (the Starlette
app, :func:`~copygram.serve.app.create_app`) and :mod:`~copygram.serve.cli` (the command).
docs/serve.md describes the endpoints and limits.

This package needs the ``serve`` extra (starlette, uvicorn): ``pip install 'copygram[serve]'``.
``import copygram`` never imports it; only :mod:`~copygram.serve.app` and the command's ``run``
import starlette and uvicorn.
"""

from __future__ import annotations
