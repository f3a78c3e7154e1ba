"""``copygram serve`` as a real process on loopback with the default model (SmolLM2-135M on
llama.cpp), driven by the official ``openai`` client: completions plain, streamed and with a
prediction; 8 concurrent clients; a client killed mid-stream. Greedy decoding throughout, so each
request has one right answer (the one it gets alone), and token budgets stay small (the module
takes about a minute on 2 cores)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest

from copygram.errors import BackendError

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types import CompletionUsage
    from openai.types.chat import (
        ChatCompletionMessageParam,
        ChatCompletionPredictionContentParam,
    )

pytestmark = [pytest.mark.serve, pytest.mark.llamacpp, pytest.mark.slow]

KEY = "test-key"
MODEL = "smollm2-135m"
CODE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
EDIT_MESSAGES: list[ChatCompletionMessageParam] = [
    {"role": "system", "content": "You edit code. Reply with the whole edited code only."},
    {"role": "user", "content": f"Rename the function add to plus.\n\n```python\n{CODE}```"},
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    from copygram.catalog import resolve_model

    try:
        resolve_model("default")
    except BackendError as exc:  # the default model is not installed
        pytest.skip(str(exc))
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "copygram", "serve", "--model", "smollm2-135m", "--port",
         str(port), "--api-key", KEY,
         "--log-level", "warning", "--timeout", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    try:
        while True:
            if process.poll() is not None:
                out = process.stdout.read() if process.stdout else ""
                pytest.fail(f"copygram serve exited with {process.returncode}:\n{out}")
            try:
                if http("GET", f"{url}/health")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("copygram serve did not answer /health within 120 s")
            time.sleep(0.2)
        yield f"{url}/v1"
    finally:
        stop(process, 15)


def stop(process: subprocess.Popen[str], timeout: float) -> None:
    """Ctrl-C, as a user stops the server; killed if it has not exited within ``timeout``."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def http(method: str, url: str, body: bytes | None = None) -> tuple[int, bytes]:
    """A bare request with the key (the standard library: no client to smooth anything)."""
    request = urllib.request.Request(url, data=body, method=method, headers={
        "authorization": f"Bearer {KEY}", "content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def client(base_url: str) -> OpenAI:
    from openai import OpenAI

    return OpenAI(base_url=base_url, api_key=KEY, max_retries=0, timeout=120)


def ask(base_url: str, messages: list[ChatCompletionMessageParam], *, stream: bool = False,
        max_tokens: int = 16, prediction: str | None = None
        ) -> tuple[str, CompletionUsage | None]:
    """The reply's text and its usage (``None`` when streamed)."""
    from openai import Omit, omit

    predicted: ChatCompletionPredictionContentParam | Omit = (
        omit if prediction is None else {"type": "content", "content": prediction})
    api = client(base_url).chat.completions
    if not stream:
        reply = api.create(model=MODEL, messages=messages, max_tokens=max_tokens,
                           temperature=0, prediction=predicted)
        return reply.choices[0].message.content or "", reply.usage
    parts = []
    for chunk in api.create(model=MODEL, messages=messages, max_tokens=max_tokens,
                            temperature=0, stream=True, prediction=predicted):
        for choice in chunk.choices:
            parts.append(choice.delta.content or "")
    return "".join(parts), None


def test_a_completion_a_streamed_one_and_one_with_a_prediction(base_url: str) -> None:
    messages: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "What is the capital of France?"}]
    text, usage = ask(base_url, messages)
    assert text.strip() and usage is not None
    assert usage.completion_tokens > 0 and usage.prompt_tokens > 0
    assert ask(base_url, messages, stream=True)[0] == text

    plain, plain_usage = ask(base_url, EDIT_MESSAGES, max_tokens=48)
    predicted, predicted_usage = ask(base_url, EDIT_MESSAGES, max_tokens=48, prediction=CODE)
    assert predicted == plain
    assert predicted_usage is not None and plain_usage is not None
    details, plain_details = (predicted_usage.completion_tokens_details,
                              plain_usage.completion_tokens_details)
    assert details is not None and plain_details is not None
    assert (details.accepted_prediction_tokens or 0) > 0
    assert plain_details.accepted_prediction_tokens == 0
    # The same prompt again: llama.cpp's KV cache held all of it but the token prefill
    # recomputes for its logits.
    cache = predicted_usage.prompt_tokens_details
    assert cache is not None and cache.cached_tokens == predicted_usage.prompt_tokens - 1
    assert ask(base_url, EDIT_MESSAGES, max_tokens=48, prediction=CODE, stream=True)[0] == plain


def test_the_server_refuses_bad_input_and_a_missing_key(base_url: str) -> None:
    import openai

    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=base_url, api_key="wrong", max_retries=0).models.list()
    with pytest.raises(openai.BadRequestError) as bad:
        client(base_url).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], n=2)
    assert bad.value.param == "n"
    status, body = http("POST", f"{base_url}/chat/completions", b'{"model": ')
    assert status == 400 and json.loads(body)["error"]["code"] == "invalid_json"
    assert http("POST", f"{base_url}/chat/completions", b"\xff" * 10)[0] == 400
    assert [m.id for m in client(base_url).models.list()] == [MODEL]
    status, body = http("GET", f"{base_url.removesuffix('/v1')}/health")
    assert status == 200 and json.loads(body)["status"] == "ok"


def test_eight_concurrent_clients_get_their_own_answers(base_url: str) -> None:
    prompts: list[list[ChatCompletionMessageParam]] = [
        [{"role": "user", "content": f"Say the number {n} in words."}] for n in range(8)]
    alone = [ask(base_url, messages, max_tokens=12)[0] for messages in prompts]
    assert len(set(alone)) > 1  # different questions, different answers: mixing would show
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda i: ask(base_url, prompts[i], stream=i % 2 == 0,
                                               max_tokens=12)[0], range(8)))
    assert together == alone


KILLED_CLIENT = """
import sys
from openai import OpenAI
api = OpenAI(base_url=sys.argv[1], api_key=sys.argv[2], max_retries=0)
stream = sys.argv[4] == "stream"
reply = api.chat.completions.create(
    model=sys.argv[3], max_tokens=2000, temperature=0, stream=stream,
    messages=[{"role": "user", "content": "Repeat the word hello 1000 times."}])
for chunk in reply if stream else []:
    print("chunk", flush=True)
"""


def running(base_url: str) -> int:
    status, body = http("GET", f"{base_url.removesuffix('/v1')}/health")
    assert status == 200
    count: int = json.loads(body)["running"]
    return count


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "waiting"])
def test_a_client_killed_mid_generation_does_not_stall_the_others(base_url: str,
                                                                  stream: bool) -> None:
    killed = subprocess.Popen(
        [sys.executable, "-c", KILLED_CLIENT, base_url, KEY, MODEL, "stream" if stream else ""],
        stdout=subprocess.PIPE, text=True)
    try:
        assert killed.stdout is not None
        if stream:
            for _ in range(5):  # it is streaming: the model is busy with its long answer
                assert killed.stdout.readline() == "chunk\n"
        else:
            deadline = time.monotonic() + 30
            while running(base_url) == 0:  # its generation has started
                assert time.monotonic() < deadline and killed.poll() is None
                time.sleep(0.05)
            time.sleep(1.0)
    finally:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
    started = time.monotonic()
    text, _ = ask(base_url, [{"role": "user", "content": "Say hello."}], max_tokens=8)
    assert text.strip()
    # 2000 tokens of hellos take a minute or more on 2 cores; a cancelled run frees the model
    # at its next token (a waiting client's disconnect is seen within a quarter second).
    assert time.monotonic() - started < 30
    assert running(base_url) == 0
