"""Issue 19's leftovers, with a scripted model: per-request sampling and ``max_tokens`` on
``/v1/edits`` (and ``finish_reason: "length"`` where the budget ends an edit), the prompt tokens
found in the KV cache (``usage.prompt_tokens_details.cached_tokens``), opt-in CORS, and the
Continue config of docs/serve.md checked against the app (not against Continue itself)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from copygram.cli import main
from copygram.serve.cli import add_arguments
from copygram.testing import ScriptedBackend
from tests.serve.conftest import DOCUMENT, EDITED, PROGRAM, MakeClient
from tests.serve.test_app import EDIT, sse_events
from tests.serve.test_chat import CHAT, REPLY, chunks_of, content_of

pytestmark = pytest.mark.serve

FULL_PROGRAM = '<copy lines="1-1"/><gen>    return x + 2\n</gen><copy lines="3-5"/>'
REWRITE = {**EDIT, "document": "def f(x):\n    return x + 1\n", "mode": "rewrite"}


def cached(body: dict[str, Any]) -> int:
    count: int = body["usage"]["prompt_tokens_details"]["cached_tokens"]
    return count


# ---------------------------------------------------------------------- /v1/edits options


def test_an_edits_sampling_is_its_own_and_the_servers_stays_greedy(
        make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply=REPLY), on_damage="keep")
    hot = {**REWRITE, "temperature": 2.0, "seed": 7}
    first = client.post("/v1/edits", json=hot).json()
    assert first["text"] != REPLY  # at temperature 2 the scripted model's 10-logit margin loses
    assert client.post("/v1/edits", json=hot).json()["text"] == first["text"]  # the same seed
    assert client.post("/v1/edits", json={**hot, "top_p": 0}).json()["text"] == REPLY  # greedy
    assert client.post("/v1/edits", json=REWRITE).json()["text"] == REPLY  # the server's own


def test_max_tokens_cuts_a_rewrite_with_finish_reason_length(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply=REPLY), on_damage="keep")
    whole = client.post("/v1/edits", json=REWRITE).json()
    assert whole["finish_reason"] == "stop" and whole["text"] == REPLY
    short = client.post("/v1/edits", json={**REWRITE, "max_tokens": 5}).json()
    # The cut reply, as the document (which ends with a newline, as the extraction keeps it).
    assert short["finish_reason"] == "length" and short["text"] == REPLY[:5] + "\n"
    assert short["usage"]["completion_tokens"] == 5


def test_max_tokens_ends_a_program_with_length_and_the_partial_program(
        make_client: MakeClient) -> None:
    client = make_client(on_damage="keep")
    response = client.post("/v1/edits", json={**EDIT, "max_tokens": 3})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["finish_reason"] == "length" and body["text"] is None
    assert FULL_PROGRAM.startswith(body["program"]) and body["program"] != FULL_PROGRAM
    assert body["usage"]["completion_tokens"] >= 3
    # Streamed alike: the done event says so, and the stream ends normally.
    events = sse_events(client.post("/v1/edits", json={**EDIT, "max_tokens": 3,
                                                       "stream": True}).text)
    assert events[-1] == "[DONE]"
    done = events[-2]
    assert done["type"] == "done" and done["finish_reason"] == "length" and done["text"] is None
    # A budget the program fits in changes nothing, and the server's session is untouched.
    roomy = client.post("/v1/edits", json={**EDIT, "max_tokens": 500}).json()
    assert roomy["text"] == EDITED and roomy["finish_reason"] == "stop"
    assert client.post("/v1/edits", json=EDIT).json()["program"] == FULL_PROGRAM


def test_a_program_cut_by_the_context_ends_with_length_whatever_max_tokens_asks(
        make_client: MakeClient) -> None:
    # A context that holds the prompt and the document with the room check's 64 tokens to
    # spare, but not the whole program: the run ends on the room left, which is a "length" as
    # much as the client's own max_tokens is (it was a 500 before), with or without max_tokens.
    client = make_client(on_damage="keep")
    prompt = client.post("/v1/edits", json=EDIT).json()["usage"]["prompt_tokens"]
    context = prompt + len(DOCUMENT.encode()) + 64
    assert len(FULL_PROGRAM.encode()) > context - prompt - len(DOCUMENT.encode()) - 8
    client = make_client(ScriptedBackend(DOCUMENT, PROGRAM, context_length=context),
                         on_damage="keep")
    for extra in ({}, {"max_tokens": 10_000}):
        response = client.post("/v1/edits", json={**EDIT, **extra})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["finish_reason"] == "length" and body["text"] is None
        assert FULL_PROGRAM.startswith(body["program"]) and body["program"]


# ---------------------------------------------------------------------------- cached_tokens


def test_cached_tokens_count_the_prompt_prefix_the_last_request_left(
        make_client: MakeClient) -> None:
    backend = ScriptedBackend(reply=REPLY)
    client = make_client(backend)
    first = client.post("/v1/chat/completions", json=CHAT).json()
    assert cached(first) == 0  # an empty cache
    again = client.post("/v1/chat/completions", json=CHAT).json()
    # All but the last prompt token: prefill splices at least one for the logits.
    assert cached(again) == again["usage"]["prompt_tokens"] - 1
    # Another user message after the same system message: the bytes the two prompts share
    # (the model is byte-level, its template known).
    other = [CHAT["messages"][0], {"role": "user", "content": "Fix g."}]  # type: ignore[index]
    turned = client.post("/v1/chat/completions", json={**CHAT, "messages": other}).json()
    shared = os.path.commonprefix([backend.chat_prompt(CHAT["messages"]),  # type: ignore[arg-type]
                                   backend.chat_prompt(other)])
    assert cached(turned) == len(shared)
    # Streamed with usage, the same count.
    streamed = chunks_of(client.post("/v1/chat/completions", json={
        **CHAT, "messages": other, "stream": True,
        "stream_options": {"include_usage": True}}).text)
    assert content_of(streamed) == REPLY
    assert cached(streamed[-1]) == streamed[-1]["usage"]["prompt_tokens"] - 1


def test_cached_tokens_of_edits_in_both_modes(make_client: MakeClient) -> None:
    client = make_client(on_damage="keep")
    first = client.post("/v1/edits", json=EDIT).json()
    assert cached(first) == 0
    again = client.post("/v1/edits", json=EDIT).json()
    assert again["text"] == EDITED
    assert cached(again) == again["usage"]["prompt_tokens"] - 1
    # A rewrite's prompt differs from the program's early on: little or nothing is reused.
    rewrite = client.post("/v1/edits", json={**EDIT, "mode": "rewrite"}).json()
    assert 0 <= cached(rewrite) < rewrite["usage"]["prompt_tokens"] - 1


# -------------------------------------------------------------------------------------- CORS


PREFLIGHT = {"origin": "http://localhost:3000", "access-control-request-method": "POST",
             "access-control-request-headers": "authorization, content-type, x-stainless-os"}


def test_cors_is_off_by_default(make_client: MakeClient) -> None:
    client = make_client(on_damage="keep")
    response = client.options("/v1/chat/completions", headers=PREFLIGHT)
    assert response.status_code == 405
    assert "access-control-allow-origin" not in response.headers
    edit = client.post("/v1/edits", json=EDIT, headers={"origin": "http://localhost:3000"})
    assert "access-control-allow-origin" not in edit.headers


def test_cors_for_the_origins_given(make_client: MakeClient) -> None:
    client = make_client(api_key="sesame", cors_origins=["http://localhost:3000"])
    # The preflight carries no key and is answered before the key check.
    preflight = client.options("/v1/chat/completions", headers=PREFLIGHT)
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    origin = {"origin": "http://localhost:3000"}
    good = client.post("/v1/edits", json=EDIT, headers={**origin,
                                                         "authorization": "Bearer sesame"})
    assert good.json()["text"] == EDITED
    assert good.headers["access-control-allow-origin"] == "http://localhost:3000"
    refused = client.post("/v1/edits", json=EDIT, headers=origin)  # no key: a page can read why
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == "http://localhost:3000"
    stranger = client.options("/v1/chat/completions",
                              headers={**PREFLIGHT, "origin": "http://evil.example"})
    assert stranger.status_code == 400
    assert "access-control-allow-origin" not in stranger.headers


@pytest.mark.parametrize("origin", ["http://localhost:3000/", "localhost:3000",
                                    "http://localhost:3000/app", ""])
def test_a_cors_origin_that_no_browser_sends_is_refused(
        origin: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--cors-origin", origin]) == 1
    assert "--cors-origin" in capsys.readouterr().err


def test_cors_origins_repeat() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args([]).cors_origins == []
    args = parser.parse_args(["--cors-origin", "http://a:1", "--cors-origin", "vscode-webview://x"])
    assert args.cors_origins == ["http://a:1", "vscode-webview://x"]


# ---------------------------------------------------------------- the Continue config snippet


def continue_model() -> dict[str, str]:
    """The one model of the ``config.yaml`` block in docs/serve.md: its flat ``key: value``
    lines (no YAML library: the block is that simple, and PyYAML is no dependency)."""
    docs = (Path(__file__).parents[2] / "docs" / "serve.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(.*?)```", docs, flags=re.DOTALL)
    assert block.startswith("models:\n") and block.count("- ") == 1  # one model
    pairs = re.findall(r"^\s+(?:- )?(\w+): *(.*?)(?:\s+#.*)?$", block, flags=re.MULTILINE)
    return dict(pairs)


def test_the_documented_continue_config_reaches_the_server(make_client: MakeClient) -> None:
    """What Continue's ``openai`` provider does with that config: ``{apiBase}/chat/completions``
    and ``{apiBase}/models``, the ``model`` as named, the key as a bearer token, a streamed
    request with OpenAI's usual parameters. Checked against the app, not against Continue."""
    model = continue_model()
    assert model["provider"] == "openai"
    base = model["apiBase"].rstrip("/")
    assert base == "http://127.0.0.1:8000/v1"
    path = base.removeprefix("http://127.0.0.1:8000")
    client = make_client(ScriptedBackend(reply=REPLY), api_key=model["apiKey"],
                         model_id=model["model"])
    auth = {"authorization": f"Bearer {model['apiKey']}"}
    listed = client.get(f"{path}/models", headers=auth).json()
    assert [m["id"] for m in listed["data"]] == [model["model"]]
    body = {"model": model["model"], "messages": CHAT["messages"], "stream": True,
            "max_tokens": 64, "temperature": 0, "top_p": 1, "stop": ["```\n\n"],
            "prediction": {"type": "content", "content": REPLY}}
    response = client.post(f"{path}/chat/completions", json=body, headers=auth)
    assert response.status_code == 200, response.text
    assert content_of(chunks_of(response.text)) == REPLY


def test_a_rewrite_cut_by_max_tokens_writes_no_text_unless_damage_is_kept(
        make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(reply=REPLY))
    body = client.post("/v1/edits", json={**REWRITE, "max_tokens": 5}).json()
    assert body["finish_reason"] == "length" and body["text"] is None
    assert body["program"] == REPLY[:5] and body["usage"]["completion_tokens"] == 5
    assert client.post("/v1/edits", json=REWRITE).json()["text"] == REPLY  # whole: as it was
