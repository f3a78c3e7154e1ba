"""The app with a scripted model (Starlette's TestClient): every bad input gets its 4xx with
OpenAI's error body and the server goes on; a failed generation is a 500 for that request only;
a full queue answers 429 with Retry-After; the API key is enforced."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest

from copygram.decode.prompt import REWRITE_SYSTEM
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import BatchedBackend, PromptedBackend, ScriptedBackend, TwoMindsBackend
from tests.serve.conftest import DOCUMENT, EDITED, MODEL, PROGRAM, FlakyBackend, MakeClient

if TYPE_CHECKING:
    from httpx2 import Response

pytestmark = pytest.mark.serve

CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
EDIT = {"model": MODEL, "document": DOCUMENT, "instruction": "add 2, not 1"}


def with_(base: Mapping[str, object], **changes: object) -> bytes:
    body = {**base, **changes}
    return json.dumps({k: v for k, v in body.items() if v is not DROP}).encode()


DROP = object()

# (what, path, raw body, status, the parameter the error names)
BAD_INPUTS: list[tuple[str, str, bytes, int, str | None]] = [
    ("malformed JSON", "/v1/chat/completions", b'{"model": "scripted",', 400, None),
    ("not UTF-8", "/v1/chat/completions", b'{"model": "\xff\xfe"}', 400, None),
    ("empty body", "/v1/chat/completions", b"", 400, None),
    ("an array", "/v1/chat/completions", b"[1, 2]", 400, None),
    ("lone surrogate", "/v1/chat/completions",
     with_(CHAT, messages=[{"role": "user", "content": "\ud800"}]), 400, None),
    ("NaN", "/v1/chat/completions", b'{"model": "scripted", "temperature": NaN}', 400, None),
    ("deep nesting", "/v1/chat/completions", b"[" * 20000 + b"]" * 20000, 400, None),
    ("no messages", "/v1/chat/completions", with_(CHAT, messages=DROP), 400, "messages"),
    ("empty messages", "/v1/chat/completions", with_(CHAT, messages=[]), 400, "messages"),
    ("messages a string", "/v1/chat/completions", with_(CHAT, messages="hi"), 400, "messages"),
    ("message a string", "/v1/chat/completions", with_(CHAT, messages=["hi"]), 400,
     "messages[0]"),
    ("bad role", "/v1/chat/completions",
     with_(CHAT, messages=[{"role": "robot", "content": "x"}]), 400, "messages[0].role"),
    ("content a number", "/v1/chat/completions",
     with_(CHAT, messages=[{"role": "user", "content": 7}]), 400, "messages[0].content"),
    ("image part", "/v1/chat/completions",
     with_(CHAT, messages=[{"role": "user", "content": [{"type": "image_url"}]}]), 400,
     "messages[0].content[0].type"),
    ("tool message", "/v1/chat/completions",
     with_(CHAT, messages=[{"role": "tool", "content": "x"}]), 400, "messages[0].role"),
    ("no model", "/v1/chat/completions", with_(CHAT, model=DROP), 400, "model"),
    ("unknown model", "/v1/chat/completions", with_(CHAT, model="gpt-9"), 404, "model"),
    ("n = 2", "/v1/chat/completions", with_(CHAT, n=2), 400, "n"),
    ("tools", "/v1/chat/completions", with_(CHAT, tools=[{"type": "function"}]), 400, "tools"),
    ("functions", "/v1/chat/completions", with_(CHAT, functions=[{"name": "f"}]), 400,
     "functions"),
    ("logprobs", "/v1/chat/completions", with_(CHAT, logprobs=True), 400, "logprobs"),
    ("top_logprobs", "/v1/chat/completions", with_(CHAT, top_logprobs=3), 400, "top_logprobs"),
    ("json mode", "/v1/chat/completions",
     with_(CHAT, response_format={"type": "json_object"}), 400, "response_format"),
    ("a penalty", "/v1/chat/completions", with_(CHAT, presence_penalty=0.5), 400,
     "presence_penalty"),
    ("unknown parameter", "/v1/chat/completions", with_(CHAT, colour="red"), 400, "colour"),
    ("temperature a string", "/v1/chat/completions", with_(CHAT, temperature="hot"), 400,
     "temperature"),
    ("temperature too high", "/v1/chat/completions", with_(CHAT, temperature=5), 400,
     "temperature"),
    ("top_p too high", "/v1/chat/completions", with_(CHAT, top_p=1.5), 400, "top_p"),
    ("max_tokens 0", "/v1/chat/completions", with_(CHAT, max_tokens=0), 400, "max_tokens"),
    ("max_tokens 1.5", "/v1/chat/completions", with_(CHAT, max_tokens=1.5), 400, "max_tokens"),
    ("max_completion_tokens a bool", "/v1/chat/completions",
     with_(CHAT, max_completion_tokens=True), 400, "max_completion_tokens"),
    ("seed a string", "/v1/chat/completions", with_(CHAT, seed="1"), 400, "seed"),
    ("stream a string", "/v1/chat/completions", with_(CHAT, stream="yes"), 400, "stream"),
    ("five stops", "/v1/chat/completions", with_(CHAT, stop=list("abcde")), 400, "stop"),
    ("empty stop", "/v1/chat/completions", with_(CHAT, stop=""), 400, "stop"),
    ("prediction a string", "/v1/chat/completions", with_(CHAT, prediction="x"), 400,
     "prediction"),
    ("prediction of a bad type", "/v1/chat/completions",
     with_(CHAT, prediction={"type": "url", "content": "x"}), 400, "prediction.type"),
    ("edit: no document", "/v1/edits", with_(EDIT, document=DROP), 400, "document"),
    ("edit: document a list", "/v1/edits", with_(EDIT, document=["x"]), 400, "document"),
    ("edit: blank instruction", "/v1/edits", with_(EDIT, instruction="  "), 400,
     "instruction"),
    ("edit: bad mode", "/v1/edits", with_(EDIT, mode="diff"), 400, "mode"),
    ("edit: prediction in program mode", "/v1/edits", with_(EDIT, prediction="x"), 400,
     "prediction"),
    ("edit: unknown parameter", "/v1/edits", with_(EDIT, colour="red"), 400, "colour"),
    ("edit: a chat-only parameter", "/v1/edits", with_(EDIT, n=1), 400, "n"),
    ("edit: temperature too high", "/v1/edits", with_(EDIT, temperature=2.5), 400,
     "temperature"),
    ("edit: top_p a string", "/v1/edits", with_(EDIT, top_p="all"), 400, "top_p"),
    ("edit: seed 1.5", "/v1/edits", with_(EDIT, seed=1.5), 400, "seed"),
    ("edit: max_tokens 0", "/v1/edits", with_(EDIT, max_tokens=0), 400, "max_tokens"),
    ("edit: max_completion_tokens a string", "/v1/edits",
     with_(EDIT, max_completion_tokens="9"), 400, "max_completion_tokens"),
    ("edit: unknown model", "/v1/edits", with_(EDIT, model="gpt-9"), 404, "model"),
    ("edit: empty document", "/v1/edits", with_(EDIT, document=""), 400, "document"),
    ("huge body", "/v1/edits", with_(EDIT, document="x\n" * 40000), 413, None),
]


def assert_openai_error(response: Response, status: int, param: str | None = None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert error["param"] == param


@pytest.mark.parametrize(("what", "path", "body", "status", "param"), BAD_INPUTS,
                         ids=[case[0] for case in BAD_INPUTS])
def test_a_bad_input_gets_its_4xx_and_the_server_goes_on(
        make_client: MakeClient, what: str, path: str, body: bytes, status: int,
        param: str | None) -> None:
    client = make_client()
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert_openai_error(response, status, param)
    assert client.get("/health").json()["status"] == "ok"
    assert client.post("/v1/edits", json=EDIT).json()["text"] == EDITED


def test_unknown_endpoints_and_methods_are_openai_errors(make_client: MakeClient) -> None:
    client = make_client()
    assert_openai_error(client.get("/v1/nothing"), 404)
    assert_openai_error(client.get("/v1/chat/completions"), 405)
    assert_openai_error(client.get("/v1/models/gpt-9"), 404, "model")


def test_health_and_models(make_client: MakeClient) -> None:
    client = make_client()
    health = client.get("/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    models = client.get("/v1/models").json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == [MODEL]
    assert client.get(f"/v1/models/{MODEL}").json()["id"] == MODEL


def test_an_edit_in_program_mode(make_client: MakeClient) -> None:
    body = make_client().post("/v1/edits", json=EDIT).json()
    assert body["text"] == EDITED
    assert body["program"] == '<copy lines="1-1"/><gen>    return x + 2\n</gen><copy lines="3-5"/>'
    assert body["object"] == "copygram.edit" and body["mode"] == "program"
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert body["stats"]["copy_ops"] == 2


def test_an_edit_in_program_modes_default_head_blocks(make_client: MakeClient) -> None:
    head = "def f(x):\n"
    blocks = (f"{BLOCK_OPEN}{head}{DIVIDER}{head}    return x + 2\n{BLOCK_CLOSE}")
    client = make_client(ScriptedBackend(DOCUMENT, reply=blocks), syntax=None)
    body = client.post("/v1/edits", json=EDIT).json()
    assert body["text"] == EDITED and body["program"] == blocks
    assert body["stats"]["copy_ops"] == 0  # what lies outside the blocks is never spliced


def test_a_streamed_block_that_changed_nothing_is_taken_back_and_written_again(
        make_client: MakeClient) -> None:
    # The model would write f again unchanged; its runner-up at the "1" is "2" (the fix).
    head = "def f(x):\n"
    no_op = f"{BLOCK_OPEN}{head}{DIVIDER}{head}    return x + 1\n{BLOCK_CLOSE}"
    fix = f"{BLOCK_OPEN}{head}{DIVIDER}{head}    return x + 2\n{BLOCK_CLOSE}"
    backend = TwoMindsBackend(DOCUMENT, reply=no_op, second=fix)
    response = make_client(backend, syntax=None).post("/v1/edits", json={**EDIT, "stream": True})
    events = [e for e in sse_events(response.text) if isinstance(e, dict)]
    done = events[-1]
    assert done["type"] == "done" and done["text"] == EDITED and done["program"] == fix
    assert done["stats"]["unchanged_retries"] == 1
    kinds = [e["type"] for e in events]
    retract = events[kinds.index("retract")]
    assert retract["start"] == len(fix[: fix.index("2\n")].encode())
    # Each token event ends where its text ends in the program its stream had then (the
    # markup forced before it rides on its text): the model's first program up to the retract,
    # the final one after it (from the byte taken back on). Joined, cut at the retract, the
    # texts spell the program.
    at = kinds.index("retract")
    before, after = events[:at], events[at + 1:]
    written = b""
    for stream, program in ((before, no_op), (after, fix)):
        for token in (e for e in stream if e["type"] == "token"):
            start, end = int(token["start"]), int(token["end"])
            assert program.encode()[:end].endswith(str(token["text"]).encode())
            assert start < end
            written += str(token["text"]).encode()
        if stream is before:
            assert no_op.encode().startswith(written)
            written = written[: int(retract["start"])]
    assert fix.encode().startswith(written)
    first_after = next(e for e in after if e["type"] == "token")
    assert first_after["start"] == retract["start"] and first_after["text"] == "2"


def test_a_damaging_program_is_redone_in_rewrite_mode_and_streamed(
        make_client: MakeClient) -> None:
    head = "def f(x):\n"
    twice = (f"{BLOCK_OPEN}{head}{DIVIDER}{head}    return x + 2\n\n\n{head}    return 0\n"
             f"{BLOCK_CLOSE}")
    backend = PromptedBackend(DOCUMENT, replies=((REWRITE_SYSTEM, EDITED), ("", twice)))
    client = make_client(backend, syntax=None)
    body = client.post("/v1/edits", json=EDIT).json()
    # The text is the rewrite's: the body says so, and carries no program.
    assert (body["text"], body["mode"]) == (EDITED, "rewrite") and "program" not in body
    events = [e for e in sse_events(client.post("/v1/edits", json={**EDIT, "stream": True}).text)
              if isinstance(e, dict)]
    kinds = [e["type"] for e in events]
    redo = events[kinds.index("redo")]
    assert any("f is defined 2 times" in d for d in redo["damage"])
    after = events[kinds.index("redo") + 1:]
    assert "".join(e["text"] for e in after if e["type"] == "text") == EDITED
    assert events[-1]["type"] == "done" and events[-1]["text"] == EDITED
    # Refused where it cannot be redone: a 500 that names the damage, and the server goes on.
    refused = make_client(backend, syntax=None, on_damage="error").post("/v1/edits", json=EDIT)
    assert_openai_error(refused, 500)
    assert refused.json()["error"]["code"] == "damaged_edit"


def test_a_path_names_what_the_edit_is_checked_as(make_client: MakeClient) -> None:
    # A YAML file is prose to a server that sees only its text: a key written twice would be
    # written back as a success. With its path, it is parsed as YAML, and the edit refused.
    config = "name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    twice = config + "jobs:\n  lint:\n    runs-on: ubuntu-latest\n"
    client = make_client(ScriptedBackend(reply=twice), mode="rewrite")
    edit = {"model": MODEL, "document": config, "instruction": "Add a lint job."}
    blind = client.post("/v1/edits", json=edit)
    assert blind.status_code == 200 and blind.json()["text"] == twice
    refused = client.post("/v1/edits", json={**edit, "path": "ci/.github/workflows/ci.yml"})
    assert_openai_error(refused, 500)
    assert refused.json()["error"]["code"] == "damaged_edit"
    assert "jobs" in refused.json()["error"]["message"]
    # A suffix it does not know leaves the text to be guessed, as before.
    assert client.post("/v1/edits", json={**edit, "path": "notes.txt"}).status_code == 200
    assert_openai_error(client.post("/v1/edits", json={**edit, "path": 7}), 400, "path")


def sse_events(text: str) -> list[Any]:
    """The ``data:`` payloads of a server-sent event stream: JSON, or the string ``[DONE]``."""
    events: list[Any] = []
    for block in text.split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: "):]
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


def test_a_streamed_edit_sends_the_programs_events(make_client: MakeClient) -> None:
    response = make_client().post("/v1/edits", json={**EDIT, "stream": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    done = events[-2]
    assert isinstance(done, dict) and done["type"] == "done" and done["text"] == EDITED
    tokens = [e for e in events if isinstance(e, dict) and e["type"] == "token"]
    copies = [e for e in events if isinstance(e, dict) and e["type"] == "copy"]
    program = str(done["program"]).encode()
    # Each event's text ends at its bytes (the markup forced before it rides on it); joined,
    # the texts are the program up to the markup forced after the last one.
    assert tokens and all(program[:int(str(t["end"]))].endswith(str(t["text"]).encode())
                          for t in tokens)
    joined = "".join(str(t["text"]) for t in tokens).encode()
    assert program.startswith(joined) and len(joined) == int(str(tokens[-1]["end"]))
    assert [(c["start"], c["end"]) for c in copies] == [(1, 1), (3, 5)]


def test_a_streamed_edit_says_how_far_its_prompt_is_read(make_client: MakeClient) -> None:
    client = make_client(BatchedBackend(DOCUMENT, PROGRAM, n_batch=64))
    events = [e for e in sse_events(client.post("/v1/edits", json={**EDIT, "stream": True}).text)
              if isinstance(e, dict)]
    kinds = [e["type"] for e in events]
    prefills = [e for e in events if e["type"] == "prefill"]
    total = int(str(events[-1]["usage"]["prompt_tokens"]))
    # After the first batch (a batch that fails is still a status code), one event a batch,
    # all before the program's first token.
    assert [e["done"] for e in prefills] == [*range(64, total, 64), total]
    assert all(e["total"] == total and e["cached"] == 0 for e in prefills)
    assert kinds.index("token") > kinds.index("prefill") + len(prefills) - 1
    assert events[-1]["text"] == EDITED


def test_a_failed_generation_is_a_500_and_the_next_request_is_served(
        make_client: MakeClient) -> None:
    backend = FlakyBackend(DOCUMENT, PROGRAM, failures=1)
    client = make_client(backend)
    response = client.post("/v1/edits", json=EDIT)
    assert_openai_error(response, 500)
    assert "blew up" in response.json()["error"]["message"]
    assert client.post("/v1/edits", json=EDIT).json()["text"] == EDITED
    # Streamed: the error comes before the headers, so it is a 500 too.
    backend.failures = 1
    assert_openai_error(client.post("/v1/edits", json={**EDIT, "stream": True}), 500)
    assert client.get("/health").status_code == 200


def test_a_document_too_large_for_the_context_is_a_400(make_client: MakeClient) -> None:
    client = make_client(ScriptedBackend(DOCUMENT, PROGRAM, context_length=400))
    response = client.post("/v1/edits", json={**EDIT, "document": "x = 1\n" * 200})
    assert_openai_error(response, 400, "document")
    assert response.json()["error"]["code"] == "context_length_exceeded"


def test_a_full_queue_answers_429_with_retry_after(make_client: MakeClient) -> None:
    gate, entered = threading.Event(), threading.Event()
    client = make_client(FlakyBackend(DOCUMENT, PROGRAM, gate=gate, entered=entered),
                         max_waiting=1)
    with ThreadPoolExecutor(2) as pool:
        running = pool.submit(client.post, "/v1/edits", json=EDIT)
        assert entered.wait(10)  # the first edit holds the model
        waiting = pool.submit(client.post, "/v1/edits", json=EDIT)
        deadline = time.monotonic() + 10
        while client.get("/health").json()["waiting"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        refused = client.post("/v1/edits", json=EDIT)
        assert_openai_error(refused, 429)
        assert int(refused.headers["retry-after"]) >= 1
        gate.set()
        assert running.result().json()["text"] == EDITED
        assert waiting.result().json()["text"] == EDITED


def test_the_api_key(make_client: MakeClient) -> None:
    client = make_client(api_key="sesame")
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "sesame"}):
        response = client.get("/v1/models", headers=headers)
        assert_openai_error(response, 401)
        assert response.json()["error"]["code"] == "invalid_api_key"
    assert_openai_error(client.post("/v1/edits", json=EDIT), 401)
    good = {"authorization": "Bearer sesame"}
    assert client.get("/v1/models", headers=good).status_code == 200
    assert client.post("/v1/edits", json=EDIT, headers=good).json()["text"] == EDITED


def test_an_auto_server_edits_as_the_library_s_auto_does(make_client: MakeClient) -> None:
    # Auto's rewrite is one it chose: a reply of the one function it edits is put back in the
    # file (the other definitions kept), as EditSession(mode="auto").edit does. Run as explicit
    # rewrite mode, the server used to refuse it.
    from tests.decode import test_checked as checked

    documented = checked.MEDIAN.replace(
        checked.MEDIAN[checked.MEDIAN.index('    """'):checked.MEDIAN.index("    ordered")],
        '    """The middle value."""\n')
    instruction = 'Replace the docstring of median with """The middle value.""".'
    backend = PromptedBackend(checked.STATS, replies=((REWRITE_SYSTEM, documented),))
    client = make_client(backend, syntax=None, mode="auto")
    edit = {"model": MODEL, "document": checked.STATS, "instruction": instruction}
    body = client.post("/v1/edits", json=edit).json()
    assert body["mode"] == "rewrite", body
    assert body["text"] == checked.STATS.replace(checked.MEDIAN, documented)
    assert body["stats"]["restored_definitions"] == 3
    # Asked for rewrite mode by name, the reply is what was asked for: refused, the file lost.
    assert_openai_error(client.post("/v1/edits", json={**edit, "mode": "rewrite"}), 500)


def test_an_auto_server_rewrites_a_short_document_and_says_so(make_client: MakeClient) -> None:
    head = "def f(x):\n"
    block = f"{BLOCK_OPEN}{head}{DIVIDER}{head}    return x + 2\n{BLOCK_CLOSE}"
    backend = PromptedBackend(DOCUMENT, replies=((REWRITE_SYSTEM, EDITED), ("", block)))
    client = make_client(backend, syntax=None, mode="auto")
    body = client.post("/v1/edits", json=EDIT).json()  # no mode: the server's, auto
    assert (body["text"], body["mode"]) == (EDITED, "rewrite") and "program" not in body
    programmed = client.post("/v1/edits", content=with_(EDIT, mode="program")).json()
    assert (programmed["text"], programmed["mode"]) == (EDITED, "program")
    assert programmed["program"] == block
    # A prediction is a rewrite's draft: welcome under auto, refused for a program.
    predicted = client.post("/v1/edits", content=with_(EDIT, mode="auto", prediction=EDITED))
    assert predicted.json()["mode"] == "rewrite"
    assert_openai_error(client.post("/v1/edits", content=with_(EDIT, mode="program",
                                                            prediction=EDITED)), 400,
                        "prediction")
