"""``EditSession.complete``: a chat completion as plain text, drafted from a prediction; the same
text with and without one, stop strings, ``max_tokens``, the context, and streamed text that adds
up to the result."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import EditSession
from copygram.decode.events import (
    Completion,
    CompletionEvent,
    DoneEvent,
    PrefillEvent,
    SpanEvent,
    TokenEvent,
)
from copygram.decode.sampling import Sampling
from copygram.errors import ConfigError, DocumentError
from copygram.testing import ScriptedBackend
from tests.strategies import texts

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say it."}]
REPLY = "def f(x):\n    return x + 2\n\n\nprint(f(2))\n"


def run(events: list[CompletionEvent]) -> Completion:
    """The result, after checking the stream: done last, the texts adding up to the result."""
    *body, done = events
    assert isinstance(done, DoneEvent)
    # The prompt is read first, then the tokens come.
    prefills = [event for event in body if isinstance(event, PrefillEvent)]
    assert body[: len(prefills)] == prefills and prefills[-1].done == prefills[-1].total
    assert all(isinstance(event, (TokenEvent, SpanEvent)) for event in body[len(prefills):])
    assert "".join(event.text for event in events) == done.result.text
    tokens = [t for e in body if isinstance(e, (TokenEvent, SpanEvent))
              for t in ((e.token_id,) if isinstance(e, TokenEvent) else e.token_ids)]
    assert tuple(tokens) == done.result.token_ids
    return done.result


def complete(reply: str, **kwargs: object) -> Completion:
    session = EditSession(ScriptedBackend(reply=reply), mode="program")
    return run(list(session.complete(MESSAGES, **kwargs)))  # type: ignore[arg-type]


def test_with_and_without_a_prediction_the_same_text() -> None:
    plain = complete(REPLY)
    assert plain.text == plain.raw == REPLY and plain.stop_reason == "eos"
    assert plain.finish_reason == "stop" and plain.accepted_prediction_tokens == 0
    for prediction in (REPLY, REPLY.replace("2", "3"), "nothing alike", ""):
        predicted = complete(REPLY, prediction=prediction)
        assert predicted.text == REPLY and predicted.token_ids == plain.token_ids
    best = complete(REPLY, prediction=REPLY)
    assert best.accepted_prediction_tokens > len(REPLY) // 2
    assert best.stats.forwards < plain.stats.forwards
    assert best.completion_tokens == len(REPLY.encode())


def test_the_prompt_is_the_chat_template() -> None:
    backend = ScriptedBackend(reply="ok")
    result = run(list(EditSession(backend, mode="program").complete(MESSAGES)))
    prompt = backend.tokenize(backend.chat_prompt(MESSAGES), special=True)
    assert backend.calls[0].ids == tuple(prompt) and result.prompt_tokens == len(prompt)


@pytest.mark.parametrize("prediction", [None, REPLY])
def test_stop_strings_cut_the_text(prediction: str | None) -> None:
    result = complete(REPLY, stop=["print", "never"], prediction=prediction)
    assert result.text == REPLY[: REPLY.index("print")] and result.stop_reason == "stop"
    assert result.finish_reason == "stop" and result.raw.endswith("print")
    first = complete("a-b+c", stop=["+", "-"], prediction=prediction)
    assert first.text == "a"
    assert complete(REPLY, stop="return", prediction=prediction).text == "def f(x):\n    "


def test_a_stop_string_prefix_is_held_back_then_released() -> None:
    session = EditSession(ScriptedBackend(reply="abcST"), mode="program")
    events = list(session.complete(MESSAGES, stop=["STOP"]))
    result = run(events)
    assert result.text == "abcST" and result.stop_reason == "eos"
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.text == "ST"


@pytest.mark.parametrize("prediction", [None, REPLY])
def test_max_tokens(prediction: str | None) -> None:
    result = complete(REPLY, max_tokens=5, prediction=prediction)
    assert result.text == REPLY[:5] and result.completion_tokens == 5
    assert result.stop_reason == "max_tokens" and result.finish_reason == "length"
    with pytest.raises(ConfigError, match="max_tokens"):
        EditSession(ScriptedBackend(reply="x"), mode="program").complete(MESSAGES, max_tokens=0)


def test_a_prompt_that_does_not_fit_says_by_how_much() -> None:
    backend = ScriptedBackend(reply="x", context_length=20)
    prompt = len(backend.tokenize(backend.chat_prompt(MESSAGES), special=True))
    with pytest.raises(DocumentError, match=f"by {prompt + 1 - 20} tokens"):
        EditSession(backend, mode="program").complete(MESSAGES)


@pytest.mark.parametrize("prediction", [None, REPLY])
def test_a_full_context_ends_the_completion(prediction: str | None) -> None:
    probe = ScriptedBackend(reply=REPLY)
    prompt = len(probe.tokenize(probe.chat_prompt(MESSAGES), special=True))
    backend = ScriptedBackend(reply=REPLY, context_length=prompt + 6)
    result = run(list(EditSession(backend,
                                  mode="program").complete(MESSAGES, prediction=prediction)))
    # six tokens fit in the cache; the seventh is chosen from the logits after the sixth
    assert result.text == REPLY[:7] and result.stop_reason == "context"
    assert backend.n_tokens <= backend.context_length


def test_unicode_split_across_tokens_streams_whole_characters() -> None:
    reply = "héllo 日本 🙂\n"
    session = EditSession(ScriptedBackend(reply=reply), mode="program")
    events = list(session.complete(MESSAGES, prediction=reply))
    assert run(events).text == reply
    assert all("\ufffd" not in event.text for event in events)


@settings(max_examples=80, deadline=None)
@given(texts, texts, st.lists(st.sampled_from(["\n", "ab", "é", "```", "x"]), max_size=2),
       st.one_of(st.none(), st.integers(1, 40)))
def test_streamed_text_adds_up_whatever_the_stops(reply: str, prediction: str,
                                                  stop: list[str], max_tokens: int | None) -> None:
    plain = complete(reply, stop=stop, max_tokens=max_tokens)
    predicted = complete(reply, stop=stop, max_tokens=max_tokens, prediction=prediction)
    assert predicted.text == plain.text and predicted.token_ids == plain.token_ids
    cuts = [plain.raw.find(s) for s in stop if s in plain.raw]
    assert plain.text == (plain.raw[: min(cuts)] if cuts else plain.raw)


def test_sampling_per_call() -> None:
    session = EditSession(ScriptedBackend(reply=REPLY), mode="program")
    sampled = [run(list(session.complete(MESSAGES, prediction=REPLY,
                                         sampling=Sampling(temperature=0.8, seed=seed)))).text
               for seed in (1, 1)]
    assert sampled[0] == sampled[1]


def test_a_prompt_string_is_continued_as_it_is() -> None:
    backend = ScriptedBackend(reply="ok")
    session = EditSession(backend, mode="program")
    result = run(list(session.complete("<|im_start|>user\nSay ok.<|im_end|>\n")))
    assert result.text == "ok" and result.stop_reason == "eos"
    # No chat template around it: the prompt is the string's tokens.
    assert bytes(backend.calls[0].ids) == b"<|im_start|>user\nSay ok.<|im_end|>\n"
    with pytest.raises(DocumentError, match="empty"):
        session.complete("")
