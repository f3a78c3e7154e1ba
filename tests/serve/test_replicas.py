"""``copygram serve --replicas 2`` as a real process on loopback (SmolLM2-135M): two replica
processes behind the one port, each with its own model; uvicorn's supervisor replaces one that
dies while the other keeps answering. Greedy decoding: every replica writes the same reply."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from copygram.errors import BackendError
from tests.serve.test_real_server import EDIT_MESSAGES, KEY, MODEL, free_port, http, stop

pytestmark = [pytest.mark.serve, pytest.mark.llamacpp, pytest.mark.slow]


def _health(url: str) -> dict[str, object] | None:
    try:
        status, body = http("GET", f"{url}/health")
    except OSError:
        return None
    answer: dict[str, object] = json.loads(body)
    return answer if status == 200 and answer.get("status") == "ok" else None


def _replicas(parent: int) -> set[int]:
    """The parent's live child processes that serve (multiprocessing's spawned workers)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    out = set()
    for pid in map(int, children):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            out.add(pid)
    return out


def _wait(check: object, what: str, limit_s: float = 120.0) -> object:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        value = check()  # type: ignore[operator]
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"{what} within {limit_s:.0f} s")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    from copygram.catalog import resolve_model

    if not Path("/proc/self/task").is_dir():
        pytest.skip("reads the process tree from /proc (Linux)")
    try:
        resolve_model("default")
    except BackendError as exc:
        pytest.skip(str(exc))
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "copygram", "serve", "--model", MODEL, "--port", str(port),
         "--api-key", KEY, "--replicas", "2", "--log-level", "warning", "--timeout", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(lambda: process.poll() is not None or len(_replicas(process.pid)) == 2,
              "two replica processes")
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        _wait(lambda: _health(url), "/health ok")
        yield process, url
    finally:
        stop(process, 30)


def _edit(url: str) -> str:
    body = json.dumps({"model": MODEL, "messages": EDIT_MESSAGES, "max_tokens": 24,
                       "temperature": 0}).encode()
    status, reply = http("POST", f"{url}/v1/chat/completions", body)
    assert status == 200, reply
    text: str = json.loads(reply)["choices"][0]["message"]["content"]
    return text


def test_two_replicas_serve_one_port_and_answer_alike(
        server: tuple[subprocess.Popen[str], str]) -> None:
    process, url = server
    replicas = _replicas(process.pid)
    assert len(replicas) == 2
    answers = {_edit(url) for _ in range(4)}
    assert len(answers) == 1 and next(iter(answers)).strip()
    seen = {(_health(url) or {}).get("pid") for _ in range(10)}
    assert seen <= replicas  # every answer came from one of the two replica processes


def test_a_replica_that_dies_is_replaced_and_the_port_keeps_answering(
        server: tuple[subprocess.Popen[str], str]) -> None:
    process, url = server
    before = _replicas(process.pid)
    expected = _edit(url)
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    assert _edit(url) == expected  # the other replica answers meanwhile

    def replaced() -> bool:
        now = _replicas(process.pid)
        return len(now) == 2 and victim not in now

    _wait(replaced, "a replacement replica")
    _wait(lambda: all(_health(url) for _ in range(4)), "every replica ready")
    assert _edit(url) == expected
    assert process.poll() is None
