"""The behaviour every real backend must show, as a mixin of tests, for any model.

A test module subclasses :class:`BackendContract`, provides a module-scoped ``backend`` fixture
(parametrised over models if it likes) and sets :meth:`assert_close` to the tolerance its stack
justifies. Nothing here is specific to one model: what the tests need to know about the model
(its vocabulary, which ids are special, how its chat template closes a turn) is read from the
backend itself into a :class:`ModelFacts`, and random token sequences are drawn from its ordinary
text tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copygram.backends import Backend
from copygram.errors import BackendError

# Assigned, printable characters plus the usual whitespace: llama.cpp's tokenizer drops C0 controls
# such as U+001D and mangles unassigned code points (seen with U+40000).
TEXT_CHARS = st.characters(
    codec="utf-8", exclude_categories=["Cs", "Cn", "Co", "Cc"], include_characters="\t\n\r"
)

# The Hypothesis tests live on the mixin and run once per backend class, which Hypothesis flags as
# "differing executors"; sharing them is the point.
SHARED = [HealthCheck.too_slow, HealthCheck.differing_executors]

MESSAGE = "Rename x to y in: x = 1"
CHAT = [{"role": "user", "content": MESSAGE}]


@dataclass(frozen=True)
class ModelFacts:
    """What the contract needs to know about the model, read from the backend (:func:`read_facts`).

    ``special_ids`` are the ids with no bytes (control tokens: BOS, EOS, turn markers);
    ``text_ids`` every other id, from which random sequences are drawn. ``chat_prompt`` is the
    template applied to :data:`CHAT`; ``end_of_turn`` is the special token that closes the user's
    message in it, spelled ``end_of_turn_text`` in the template's text.
    """

    vocab_size: int
    special_ids: frozenset[int]
    text_ids: npt.NDArray[np.int64]
    chat_prompt: str
    end_of_turn: int
    end_of_turn_text: str

    @property
    def text_id(self) -> int:
        """One ordinary text token."""
        return int(self.text_ids[0])

    def random_text(self, seed: int, n: int) -> list[int]:
        """``n`` ordinary text token ids, seeded."""
        return [int(i) for i in np.random.default_rng(seed).choice(self.text_ids, n)]

    def text_sequences(self, max_len: int) -> st.SearchStrategy[list[int]]:
        return st.lists(st.sampled_from(self.text_ids.tolist()), min_size=1, max_size=max_len)


def read_facts(backend: Backend) -> ModelFacts:
    """The model's facts, from the backend's vocabulary and chat template (~ms once
    ``token_bytes`` is cached). The end-of-turn marker is the shortest text right after the
    user's message that tokenizes (with ``special=True``) to special ids only; the tests check
    that it is exactly one."""
    table = backend.token_bytes()
    special = frozenset(i for i, piece in enumerate(table) if not piece)
    prompt = backend.chat_prompt(CHAT)
    assert MESSAGE in prompt, f"the chat template dropped the message: {prompt!r}"
    end = prompt.index(MESSAGE) + len(MESSAGE)
    for stop in range(end + 1, min(len(prompt), end + 64) + 1):
        ids = backend.tokenize(prompt[end:stop], special=True)
        if ids and special.issuperset(ids):  # no text bytes: the marker (after a BOS, if any)
            return ModelFacts(
                vocab_size=len(table),
                special_ids=special,
                text_ids=np.flatnonzero([bool(piece) for piece in table]).astype(np.int64),
                chat_prompt=prompt,
                end_of_turn=ids[-1],
                end_of_turn_text=prompt[end:stop],
            )
    raise AssertionError(f"no special token closes the user's turn in {prompt!r}")


def stepwise(backend: Backend, ids: Sequence[int]) -> npt.NDArray[np.float32]:
    return np.stack([backend.decode(t) for t in ids])


class BackendContract:
    """Tests shared by every backend; subclasses set ``examples`` and ``assert_close``."""

    examples = 6

    @pytest.fixture(scope="class")
    @classmethod
    def facts(cls, backend: Backend) -> ModelFacts:
        return read_facts(backend)

    def assert_close(self, got: np.ndarray, want: np.ndarray) -> None:
        raise NotImplementedError

    def assert_same(self, got: np.ndarray, want: np.ndarray) -> None:
        """Identical batch shapes on both sides: only thread-split noise may differ."""
        np.testing.assert_allclose(got, want, atol=1e-3, rtol=0)

    # -- structure ---------------------------------------------------------------------------

    def test_is_a_backend(self, backend: Backend, facts: ModelFacts) -> None:
        assert isinstance(backend, Backend)
        assert backend.vocab_size == facts.vocab_size  # one entry of token_bytes() per id
        assert backend.context_length >= 1024
        assert 0 < len(facts.special_ids) < facts.vocab_size // 2

    def test_describes_itself_for_the_records(self, backend: Backend) -> None:
        described = backend.describe()
        assert {"name", "model", "device", "batch_invariant"} <= set(described)
        assert described["name"] == backend.name and isinstance(described["batch_invariant"],
                                                                 bool)

    def test_eos_includes_end_of_turn(self, backend: Backend, facts: ModelFacts) -> None:
        assert facts.end_of_turn in backend.eos_token_ids
        assert backend.eos_token_id in backend.eos_token_ids
        assert backend.eos_token_ids <= facts.special_ids

    def test_tokenize_adds_no_bos_and_parses_specials_only_when_asked(
        self, backend: Backend, facts: ModelFacts
    ) -> None:
        marker = facts.end_of_turn_text
        assert backend.tokenize(marker, special=True) == [facts.end_of_turn]
        plain = backend.tokenize(marker)
        assert facts.end_of_turn not in plain and len(plain) > 1
        assert not facts.special_ids & set(plain)
        assert backend.detokenize(plain) == marker
        assert backend.tokenize("x = 1") == backend.tokenize("x") + backend.tokenize(" = 1")

    @settings(max_examples=30, deadline=None, suppress_health_check=SHARED)
    @given(text=st.text(TEXT_CHARS, max_size=40))
    def test_detokenize_and_token_bytes_round_trip(self, backend: Backend, text: str) -> None:
        ids = backend.tokenize(text)
        assert backend.detokenize(ids) == text
        table = backend.token_bytes()
        assert b"".join(table[i] for i in ids) == text.encode("utf-8")

    def test_detokenize_keeps_the_text_a_model_wrote(self, backend: Backend) -> None:
        """llama.cpp's own detokenizer "cleans" spaces for vocabs that ask for it (Qwen2.5):
        this continuation indent came back as one space, so the bench's plain greedy text was not
        the model's."""
        text = ("    return Wrapper(stream, encoding, errors,\n" + " " * 36
                + "line_buffering=True)\n  . , ? ! 's x\n")
        assert backend.detokenize(backend.tokenize(text)) == text

    def test_token_bytes_blank_for_control_tokens(self, backend: Backend,
                                                  facts: ModelFacts) -> None:
        table = backend.token_bytes()
        assert len(table) == backend.vocab_size
        assert all(table[i] == b"" for i in backend.eos_token_ids)
        # The template's markers parse to control tokens that add no bytes, so the bytes of the
        # prompt's tokens are its text without them.
        ids = backend.tokenize(facts.chat_prompt, special=True)
        spelled = b"".join(table[i] for i in ids)
        assert MESSAGE.encode() in spelled
        assert facts.end_of_turn_text.encode() not in spelled
        assert len(spelled) < len(facts.chat_prompt.encode())

    def test_ll_tokenizer_matches_vocab(self, backend: Backend) -> None:
        tok = backend.ll_tokenizer()
        assert tok is backend.ll_tokenizer()  # cached
        assert tok.vocab_size == backend.vocab_size
        text = "def f(x):\n    return x + 1\n"
        assert tok.decode_bytes(backend.tokenize(text)) == text.encode()

    def test_chat_prompt_ends_with_the_assistant_opener(self, backend: Backend,
                                                        facts: ModelFacts) -> None:
        prompt = facts.chat_prompt
        end = prompt.index(MESSAGE) + len(MESSAGE)
        opener = prompt[end:]  # the end of the user's turn and whatever opens the assistant's
        assert opener.startswith(facts.end_of_turn_text)
        # The prompt stops exactly where an assistant message starts in a longer conversation.
        longer = backend.chat_prompt([*CHAT, {"role": "assistant", "content": "y = 1"},
                                      {"role": "user", "content": "Now z."}])
        assert MESSAGE + opener + "y = 1" in longer
        assert longer.endswith("Now z." + opener)
        # Tokenizing adds nothing (no BOS) and the end of the turn is a special token.
        ids = backend.tokenize(prompt, special=True)
        head = backend.tokenize(prompt[:end], special=True)
        assert head + backend.tokenize(opener, special=True) == ids
        assert ids[len(head)] == facts.end_of_turn
        assert set(ids) & facts.special_ids
        plain = backend.tokenize(prompt)
        assert not set(plain) & facts.special_ids
        assert b"".join(backend.token_bytes()[i] for i in plain) == prompt.encode()

    # -- the cache ---------------------------------------------------------------------------

    def test_splice_equals_stepwise_decode(self, backend: Backend, facts: ModelFacts) -> None:
        @settings(max_examples=self.examples, deadline=None, suppress_health_check=SHARED)
        @given(prefix=facts.text_sequences(40), span=facts.text_sequences(24))
        def check(prefix: list[int], span: list[int]) -> None:
            backend.truncate(0)
            backend.splice(prefix)
            batched = backend.splice(span)
            assert backend.n_tokens == len(prefix) + len(span)
            backend.truncate(len(prefix))
            steps = stepwise(backend, span)
            self.assert_close(batched, steps[-1])

        check()

    def test_splice_all_rows_equal_stepwise_logits(self, backend: Backend,
                                                   facts: ModelFacts) -> None:
        prefix, span = facts.random_text(1, 20), facts.random_text(11, 12)
        backend.truncate(0)
        backend.splice(prefix)
        rows = backend.splice_all(span)
        assert rows.shape == (len(span), backend.vocab_size) and rows.dtype == np.float32
        backend.truncate(len(prefix))
        last = backend.splice(span)
        self.assert_same(rows[-1], last)
        backend.truncate(len(prefix))
        steps = stepwise(backend, span)
        for row, step in zip(rows, steps, strict=True):
            self.assert_close(row, step)

    def test_splice_all_rows_picks_positions(self, backend: Backend, facts: ModelFacts) -> None:
        span = facts.random_text(5, 10)
        backend.truncate(0)
        every = backend.splice_all(span)
        backend.truncate(0)
        picked = backend.splice_all(span, rows=[7, 2, 7, 9])
        assert picked.shape == (4, backend.vocab_size)
        for got, r in zip(picked, [7, 2, 7, 9], strict=True):
            self.assert_close(got, every[r])
        backend.truncate(0)
        assert backend.splice_all(span, rows=[]).shape == (0, backend.vocab_size)
        assert backend.n_tokens == len(span)
        with pytest.raises(BackendError, match="row"):
            backend.splice_all(span, rows=[10])
        assert backend.n_tokens == len(span)  # a rejected call leaves the cache alone

    def test_truncate_then_splice_equals_fresh_prefill(self, backend: Backend,
                                                       facts: ModelFacts) -> None:
        a, b, c = (facts.random_text(20 + n, n) for n in (30, 17, 9))
        backend.truncate(0)
        backend.splice(a)
        backend.splice(b)
        backend.truncate(len(a))
        assert backend.n_tokens == len(a)
        after_rewind = backend.splice(c)
        then = backend.decode(c[0])
        backend.truncate(0)
        backend.splice(a)
        fresh = backend.splice(c)
        self.assert_same(after_rewind, fresh)
        self.assert_same(then, backend.decode(c[0]))

    def test_cached_ids_track_splices_decodes_and_truncation(self, backend: Backend,
                                                             facts: ModelFacts) -> None:
        a, b = (facts.random_text(40 + n, n) for n in (12, 5))
        backend.truncate(0)
        backend.splice(a)
        backend.decode(b[0])
        backend.splice_all(b[1:], rows=[0])
        assert backend.cached_ids == a + b
        backend.truncate(7)
        assert backend.cached_ids == a[:7] and backend.n_tokens == 7

    def test_chunked_splices_equal_one_splice(self, backend: Backend, facts: ModelFacts) -> None:
        ids = facts.random_text(3, 48)
        backend.truncate(0)
        whole = backend.splice(ids)
        backend.truncate(0)
        for i in range(0, 48, 16):
            parts = backend.splice(ids[i : i + 16])
        self.assert_close(parts, whole)

    def test_bad_calls_raise_backend_error(self, backend: Backend, facts: ModelFacts) -> None:
        backend.truncate(0)
        backend.splice([facts.text_id])
        with pytest.raises(BackendError, match="empty"):
            backend.splice([])
        with pytest.raises(BackendError, match="vocabulary"):
            backend.splice([backend.vocab_size])
        with pytest.raises(BackendError, match="truncate"):
            backend.truncate(5)
        with pytest.raises(BackendError, match="context"):
            backend.splice([facts.text_id] * backend.context_length)
        assert backend.n_tokens == 1
        backend.decode(facts.text_id)
        assert backend.n_tokens == 2
