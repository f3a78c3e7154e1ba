"""Requests as the editor clients people use send them, replayed against the server.

Continue (github.com/continuedev/continue, read at d0a3c0b): its OpenAI provider posts an
apply through the ``openai`` npm SDK to ``{apiBase}chat/completions``: the apply prompt as a user
message and an assistant message that opens a code fence, ``max_tokens``, ``stream: true`` and
``stream_options: {include_usage: true}``, with the SDK's ``X-Stainless-*`` headers
(``core/llm/openaiTypeConverters.ts`` ``toChatBody``, ``packages/openai-adapters/src/apis/
OpenAI.ts``, ``core/llm/templates/edit/gpt.ts``). It reads ``choices[0].delta.content`` until
``data: [DONE]`` and throws on a chunk holding ``error``. Releases up to v1.1.67 also sent
``prediction: {type: "content", content: <the code>}`` for some model names (v1.0.20 and later
never do). docs/serve.md, "Clients", has the configuration these requests come from."""

from __future__ import annotations

import json
from typing import Any

import pytest

from copygram.testing import ScriptedBackend
from tests.serve.conftest import MODEL, MakeClient
from tests.serve.test_chat import chunks_of, content_of

pytestmark = pytest.mark.serve

ORIGINAL = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
EDITED = "def add(a: int, b: int) -> int:\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
APPLY_PROMPT = (
    "ORIGINAL CODE:\n```\n" + ORIGINAL.rstrip("\n") + "\n```\n\nSUGGESTED EDIT:\n```\n"
    "def add(a: int, b: int) -> int:\n    return a + b\n\n\n# ... existing code ...\n```\n\n"
    "Apply the SUGGESTED EDIT to the ORIGINAL CODE. Output the complete modified file.\n"
    "- Output ONLY code. Do NOT explain, summarize, or describe changes.\n"
    "- Leave existing comments in place unless changes require modifying them.\n"
    "- Preserve all unchanged code exactly as-is.")
# The headers the openai npm SDK (v5) adds to every request.
SDK_HEADERS = {"Authorization": "Bearer sk-anything", "User-Agent": "OpenAI/JS 5.23.2",
               "X-Stainless-Lang": "js", "X-Stainless-Package-Version": "5.23.2",
               "X-Stainless-OS": "Linux", "X-Stainless-Arch": "x64",
               "X-Stainless-Runtime": "node", "X-Stainless-Runtime-Version": "v20.19.0",
               "X-Stainless-Retry-Count": "0", "Accept": "application/json"}


def continue_apply(prediction: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": APPLY_PROMPT},
                     {"role": "assistant", "content": "```\n"}],
        "model": MODEL, "max_tokens": 4096, "stream": True,
        "stream_options": {"include_usage": True}}
    if prediction:
        body["prediction"] = {"type": "content", "content": ORIGINAL}
    return body


@pytest.mark.parametrize("prediction", [False, True])
def test_continue_apply_streams_the_file_as_continue_reads_it(make_client: MakeClient,
                                                               prediction: bool) -> None:
    reply = EDITED + "```\n"
    client = make_client(ScriptedBackend(reply=reply), api_key="sk-anything")
    response = client.post("/v1/chat/completions", content=json.dumps(continue_apply(prediction)),
                           headers={**SDK_HEADERS, "Content-Type": "application/json"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = chunks_of(response.text)
    assert not any("error" in chunk for chunk in chunks)
    assert content_of(chunks) == reply
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    # include_usage: a last chunk with no choices and the usage.
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    details = chunks[-1]["usage"].get("completion_tokens_details") or {}
    if prediction:  # the original file drafted most of the reply
        assert details["accepted_prediction_tokens"] > len(ORIGINAL) // 2


def test_continue_chatml_apply_to_legacy_completions(make_client: MakeClient) -> None:
    """Continue's default for a model name with no template of its own: the apply prompt as one
    ChatML string to ``{apiBase}completions`` (``core/llm/index.ts``, ``OpenAI.ts``)."""
    reply = EDITED + "```\n"
    backend = ScriptedBackend(reply=reply)
    client = make_client(backend)
    prompt = f"<|im_start|>user\n{APPLY_PROMPT}<|im_end|>\n<|im_start|>assistant\n```\n"
    body = {"model": MODEL, "max_tokens": 4096, "stream": True, "prompt": prompt}
    response = client.post("/v1/completions", json=body, headers=SDK_HEADERS)
    assert response.status_code == 200
    chunks = chunks_of(response.text)
    assert all(chunk["object"] == "text_completion" for chunk in chunks)
    assert "".join(c["choices"][0]["text"] for c in chunks if c["choices"]) == reply
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    # The prompt went to the model as it is, not inside a chat template.
    assert bytes(backend.calls[0].ids).startswith(prompt.encode())


def test_legacy_completions_as_openai_answers_them(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply="def f(x):\n    return x + 2\n"))
    body = client.post("/v1/completions", json={"model": MODEL, "prompt": ["def f(x):"],
                                                "stream_options": None}).json()
    assert body["object"] == "text_completion"
    (choice,) = body["choices"]
    # OpenAI's default max_tokens for legacy completions is 16.
    assert choice["finish_reason"] == "length" and body["usage"]["completion_tokens"] == 16
    assert choice["text"] == "def f(x):\n    return x + 2\n"[:16]
    for bad, param in (({"prompt": [1, 2]}, "prompt"), ({"echo": True}, "echo"),
                       ({"best_of": 3}, "best_of"), ({"messages": []}, "messages"),
                       ({"prompt": "x", "n": 2}, "n")):
        response = client.post("/v1/completions", json={"model": MODEL, "prompt": "x", **bad})
        assert response.status_code == 400 and response.json()["error"]["param"] == param
