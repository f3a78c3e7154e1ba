"""``copygram.testing.ScriptedBackend``: the fake the suite relies on behaves as documented."""

from __future__ import annotations

import numpy as np
import pytest

from copygram import Copy, Gen, Program, render
from copygram.backends import Backend
from copygram.errors import BackendError
from copygram.testing import EOS, Call, ScriptedBackend


def greedy(backend: ScriptedBackend, prompt: str, limit: int = 200) -> bytes:
    logits = backend.splice(backend.tokenize(prompt))
    out: list[int] = []
    while (token := int(logits.argmax())) != EOS and len(out) < limit:
        out.append(token)
        logits = backend.decode(token)
    return bytes(out)


def test_it_is_a_backend_with_a_byte_vocabulary() -> None:
    backend = ScriptedBackend()
    assert isinstance(backend, Backend)
    assert backend.vocab_size == len(backend.token_bytes()) == 257
    assert backend.token_bytes()[EOS] == b"" and backend.eos_token_ids == {EOS}
    assert backend.detokenize(backend.tokenize("é\n")) == "é\n"


def test_a_reply_is_written_after_any_prompt_then_eos() -> None:
    backend = ScriptedBackend(reply="x = 2\n")
    assert greedy(backend, backend.chat_prompt([{"role": "user", "content": "hi"}])) == b"x = 2\n"
    assert [c.kind for c in backend.calls] == ["splice"] + ["decode"] * 6
    with pytest.raises(ValueError, match="not both"):
        ScriptedBackend(program=Program([Gen("a")]), reply="a")


def test_a_program_expects_its_copies_to_be_spliced() -> None:
    document = "a\nb\n"
    program = Program([Copy(1, 2), Gen("c\n")])
    backend = ScriptedBackend(document, program)
    backend.splice(list(b"prompt"))
    for token in render(Program([Copy(1, 2)])).encode():
        backend.decode(token)
    assert backend.splice(list(b"a\nb\n")).argmax() == ord("<")  # the copied lines, then <gen>
    backend.truncate(len(b"prompt") + len(render(Program([Copy(1, 2)]))))
    assert not backend.splice(list(b"a\nX\n")).any()  # wrong lines: the model is lost


def test_splice_all_rows_are_the_logits_after_each_position() -> None:
    backend = ScriptedBackend(reply="abc")
    backend.splice(list(b"p"))
    rows = backend.splice_all(list(b"ab"), rows=[1, 0])
    assert [int(r.argmax()) for r in rows] == [ord("c"), ord("b")]
    assert backend.splice_all(list(b"c"), rows=[]).shape == (0, 257)
    assert backend.calls[-1] == Call("splice_all", (ord("c"),))


def test_bad_calls_raise_what_a_real_backend_raises() -> None:
    backend = ScriptedBackend(context_length=4)
    for bad in ([], [EOS + 1], [1] * 5):
        with pytest.raises(BackendError):
            backend.splice(bad)
    with pytest.raises(BackendError, match="row"):
        backend.splice_all([1], rows=[1])
    with pytest.raises(BackendError, match="truncate"):
        backend.truncate(1)
    assert backend.calls == [] and backend.n_tokens == 0
    backend.splice([1, 2])
    backend.truncate(1)
    assert backend.cached_ids == [1]
    # A cut into the prompt makes the next append a new prompt: after it, the empty program ends.
    assert int(backend.decode(2).argmax()) == EOS
    assert not np.any(backend.decode(3))  # lost: no program continues with byte 3


def test_the_scripted_backend_describes_itself() -> None:
    backend = ScriptedBackend("a\n", Program())
    assert isinstance(backend, Backend)
    assert backend.describe() == {"name": "scripted", "model": "scripted", "device": "cpu",
                                  "batch_invariant": False}
