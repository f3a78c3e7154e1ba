"""The prompt's prefill (:func:`copygram.decode.forwards.prefill_steps`): what the cache holds is
reused, a backend that runs batches (:class:`~copygram.backends.base.Batched`) is spliced in
those batches, and the progress events say how far the prompt has got."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from copygram.decode.events import DoneEvent, PrefillEvent, SpanEvent, TokenEvent
from copygram.decode.forwards import prefill, prefill_steps
from copygram.session import EditSession
from copygram.testing import EOS, BatchedBackend, ScriptedBackend


def run_steps(backend: ScriptedBackend, prompt: list[int]) -> tuple[list[PrefillEvent], int]:
    steps = prefill_steps(backend, prompt)
    events: list[PrefillEvent] = []
    while True:
        try:
            events.append(next(steps))
        except StopIteration as end:
            return events, int(end.value[1])


@given(st.lists(st.integers(0, EOS - 1), min_size=1, max_size=120), st.integers(0, 130),
       st.integers(1, 40), st.booleans())
def test_a_batched_prefill_splices_what_one_splice_would_in_batches_and_says_so(
        prompt: list[int], held: int, n_batch: int, batched: bool) -> None:
    backend = BatchedBackend(n_batch=n_batch) if batched else ScriptedBackend()
    backend.splice([*prompt[:held], EOS])  # a cache that shares the prompt's first tokens
    backend.calls.clear()
    events, spliced = run_steps(backend, prompt)
    common = min(held, len(prompt) - 1)  # at least one token is spliced, for the logits
    total = len(prompt)
    assert backend.cached_ids == prompt and spliced == total - common
    step = n_batch if batched else total
    want = [common, *range(common + step, total, step), total]
    assert [e.done for e in events] == want
    assert all(e.total == total and e.cached == common for e in events)
    # The same tokens, in batches of n_batch (the last one shorter), one splice for the logits.
    forwards = backend.calls
    assert [len(c.ids) for c in forwards] == [b - a for a, b in pairwise(want)]
    assert [c.kind for c in forwards] == ["splice_all"] * (len(forwards) - 1) + ["splice"]
    assert [t for c in forwards for t in c.ids] == prompt[common:]


def test_prefill_without_its_progress_returns_the_same() -> None:
    prompt = list(b"a prompt of some length, read in batches.")  # 41 bytes
    backend = BatchedBackend(n_batch=8)
    _, spliced = prefill(backend, prompt)
    assert spliced == len(prompt) and backend.cached_ids == prompt
    assert len(backend.calls) == 6  # 5 batches of 8 and the last 1


DOCUMENT = "def f(x):\n    return x - 1\n\n\ndef g(y):\n    return y * 2\n"
REPLY = "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"


def test_an_edit_on_a_batched_backend_streams_its_prefill_and_writes_the_same() -> None:
    results = {}
    for n_batch in (None, 7, 64):
        backend = (ScriptedBackend(reply=REPLY) if n_batch is None
                   else BatchedBackend(reply=REPLY, n_batch=n_batch))
        session = EditSession(backend, mode="rewrite")
        events = list(session.stream(DOCUMENT, "Fix f."))
        done = events[-1]
        assert isinstance(done, DoneEvent)
        results[n_batch] = done.result.text
        prefills = [e for e in events if isinstance(e, PrefillEvent)]
        first_token = next(i for i, e in enumerate(events) if isinstance(e, TokenEvent))
        # Every prefill event comes before the first token: the prompt is read first.
        assert all(events.index(e) < first_token for e in prefills)
        total = done.result.stats.prompt_tokens
        assert prefills[0] == PrefillEvent(0, total, 0) and prefills[-1].done == total
        if n_batch is not None and n_batch < total:
            assert len(prefills) == 2 + (total - 1) // n_batch
        again = [e for e in session.stream(DOCUMENT, "Fix f.") if isinstance(e, PrefillEvent)]
        assert again[0].cached == again[0].done == total - 1  # the same prompt: all but one
        texts = [e.text for e in events if isinstance(e, PrefillEvent | TokenEvent | SpanEvent)]
        assert "".join(texts) + done.text == done.result.raw
    assert results[None] == results[7] == results[64] == REPLY
