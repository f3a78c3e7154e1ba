"""Chat completions and rewrite-mode edits with a scripted model that answers every prompt with
one reply: the OpenAI response shapes, streaming, Predicted Outputs, stop strings, limits."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from copygram.testing import BatchedBackend, ScriptedBackend
from tests.serve.conftest import MODEL, FlakyBackend, MakeClient
from tests.serve.test_app import assert_openai_error, sse_events

pytestmark = pytest.mark.serve

REPLY = "def f(x):\n    return x + 2\n"
CHAT: dict[str, object] = {"model": MODEL,
                           "messages": [{"role": "system", "content": "Be brief."},
                                        {"role": "user", "content": "Fix f."}]}
PREDICTION = {"type": "content", "content": "def f(x):\n    return x + 1\n"}


def chunks_of(text: str) -> list[dict[str, Any]]:
    events = sse_events(text)
    assert events[-1] == "[DONE]"
    return [e for e in events if isinstance(e, dict)]


def content_of(chunks: list[dict[str, Any]]) -> str:
    return "".join(choice["delta"].get("content") or ""
                   for chunk in chunks for choice in chunk["choices"])


def test_a_chat_completion(make_client: MakeClient) -> None:
    body = make_client(ScriptedBackend(reply=REPLY)).post("/v1/chat/completions",
                                                          json=CHAT).json()
    assert body["object"] == "chat.completion" and body["model"] == MODEL
    (choice,) = body["choices"]
    assert choice["message"] == {"role": "assistant", "content": REPLY, "refusal": None}
    assert choice["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["completion_tokens"] == len(REPLY.encode())  # a byte-level model
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["completion_tokens_details"]["accepted_prediction_tokens"] == 0


def test_a_streamed_chat_completion_equals_the_plain_one(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply=REPLY))
    response = client.post("/v1/chat/completions",
                           json={**CHAT, "stream": True, "stream_options": {"include_usage": True}})
    assert response.status_code == 200
    chunks = chunks_of(response.text)
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert content_of(chunks) == REPLY
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_a_long_prompt_keeps_its_stream_alive_with_comment_lines(make_client: MakeClient) -> None:
    client = make_client(BatchedBackend(reply=REPLY, n_batch=16))
    response = client.post("/v1/chat/completions", json={**CHAT, "stream": True})
    blocks = response.text.split("\n\n")
    # The role chunk after the prompt's first batch, then a comment per batch read (which every
    # event-stream client skips), then the reply's chunks, as a short prompt streams them.
    assert blocks[0].startswith("data: ") and '"role": "assistant"' in blocks[0]
    comments = [i for i, block in enumerate(blocks) if block.startswith(":")]
    assert comments == list(range(1, len(comments) + 1)) and len(comments) >= 2
    assert all(blocks[i] == ": prefill" for i in comments)
    assert content_of(chunks_of(response.text)) == REPLY


def test_a_prediction_changes_the_cost_not_the_text(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply=REPLY))
    plain = client.post("/v1/chat/completions", json=CHAT).json()
    predicted = client.post("/v1/chat/completions", json={**CHAT, "prediction": PREDICTION}).json()
    assert predicted["choices"][0]["message"] == plain["choices"][0]["message"]
    details = predicted["usage"]["completion_tokens_details"]
    assert details["accepted_prediction_tokens"] > 0
    assert details["rejected_prediction_tokens"] >= 0
    # Text parts are accepted as well as a string.
    parts = {"type": "content", "content": [{"type": "text", "text": PREDICTION["content"]}]}
    again = client.post("/v1/chat/completions", json={**CHAT, "prediction": parts}).json()
    assert again["choices"][0]["message"]["content"] == REPLY


def test_stop_and_max_tokens(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply=REPLY))
    stopped = client.post("/v1/chat/completions", json={**CHAT, "stop": ["return"]}).json()
    assert stopped["choices"][0]["message"]["content"] == "def f(x):\n    "
    assert stopped["choices"][0]["finish_reason"] == "stop"
    streamed = client.post("/v1/chat/completions",
                           json={**CHAT, "stop": "return", "stream": True})
    assert content_of(chunks_of(streamed.text)) == "def f(x):\n    "
    short = client.post("/v1/chat/completions", json={**CHAT, "max_completion_tokens": 5}).json()
    assert short["choices"][0]["message"]["content"] == REPLY[:5]
    assert short["choices"][0]["finish_reason"] == "length"
    assert short["usage"]["completion_tokens"] == 5


def test_a_conversation_too_long_for_the_context_is_a_400(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply=REPLY, context_length=100))
    messages = [{"role": "user", "content": "x" * 200}]
    response = client.post("/v1/chat/completions", json={**CHAT, "messages": messages})
    assert_openai_error(response, 400, "messages")
    error = response.json()["error"]
    # By how much: 22 tokens of template, 200 of content, 1 to generate, over n_ctx = 100.
    assert error["code"] == "context_length_exceeded" and "121" in error["message"]
    assert client.post("/v1/chat/completions", json=CHAT).status_code == 200


def test_a_failure_after_the_first_token_ends_the_stream_with_an_error(
        make_client: MakeClient) -> None:
    class Failing(ScriptedBackend):
        def decode(self, token_id: int) -> npt.NDArray[np.float32]:
            if self.n_tokens > 30:
                raise RuntimeError("the model blew up mid-stream")
            return super().decode(token_id)

    client = make_client(Failing(reply=REPLY))
    response = client.post("/v1/chat/completions", json={**CHAT, "stream": True})
    assert response.status_code == 200  # the headers went out with the first token
    events = sse_events(response.text)
    last = events[-1]
    assert isinstance(last, dict) and "blew up" in last["error"]["message"]
    assert_openai_error(client.post("/v1/chat/completions", json=CHAT), 500)


def test_the_timeout_is_a_504_and_frees_the_model(make_client: MakeClient) -> None:
    gate = threading.Event()
    backend = FlakyBackend(reply=REPLY, gate=gate)
    client = make_client(backend, timeout_s=0.5)
    assert_openai_error(client.post("/v1/chat/completions", json=CHAT), 504)
    gate.set()
    assert client.post("/v1/chat/completions", json=CHAT).json()["choices"][0]["message"][
        "content"] == REPLY


class SlowPrompt(BatchedBackend):
    """A scripted model that takes ``delay`` seconds for each batch of a prompt before the last."""

    delay = 0.0

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        time.sleep(self.delay)
        return super().splice_all(ids, rows=rows)


def test_a_prompt_past_the_timeout_frees_the_model_between_its_batches(
        make_client: MakeClient) -> None:
    backend = SlowPrompt(reply=REPLY, n_batch=2)
    backend.delay = 0.2  # some 25 batches: ~5 s to read the prompt
    client = make_client(backend, timeout_s=0.5)
    tick = time.monotonic()
    assert_openai_error(client.post("/v1/chat/completions", json=CHAT), 504)
    backend.delay = 0.0
    body = client.post("/v1/chat/completions", json=CHAT).json()
    # The worker stopped at the batch after the deadline, not at the prompt's end.
    assert time.monotonic() - tick < 2.5
    assert body["choices"][0]["message"]["content"] == REPLY


def test_a_rewrite_mode_edit(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply="```python\n" + REPLY + "```\n"))
    edit = {"model": MODEL, "document": "def f(x):\n    return x + 1\n",
            "instruction": "add 2", "mode": "rewrite"}
    body = client.post("/v1/edits", json=edit).json()
    assert body["text"] == REPLY and "program" not in body and body["mode"] == "rewrite"
    assert body["usage"]["completion_tokens_details"]["accepted_prediction_tokens"] > 0
    streamed = client.post("/v1/edits", json={**edit, "stream": True, "prediction": REPLY})
    events = [e for e in sse_events(streamed.text) if isinstance(e, dict)]
    assert "".join(str(e["text"]) for e in events if e["type"] == "text") == (
        "```python\n" + REPLY + "```\n")
    assert events[-1]["type"] == "done" and events[-1]["text"] == REPLY
    assert json.dumps(events)  # plain JSON all the way
