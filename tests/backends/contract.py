"""The behaviour every real backend must show, as a mixin of tests.

A test module subclasses :class:`BackendContract`, provides a module-scoped ``backend`` fixture and
sets :meth:`assert_close` to the tolerance its stack justifies. Token ids are drawn above the
special-token range so random sequences stay ordinary text tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copygram.backends import Backend
from copygram.errors import BackendError

FIRST_TEXT_ID = 100  # SmolLM2's special tokens sit below this

# Assigned, printable characters plus the usual whitespace: llama.cpp's tokenizer drops C0 controls
# such as U+001D and mangles unassigned code points (seen with U+40000).
TEXT_CHARS = st.characters(
    codec="utf-8", exclude_categories=["Cs", "Cn", "Co", "Cc"], include_characters="\t\n\r"
)

# The Hypothesis tests live on the mixin and run once per backend class, which Hypothesis flags as
# "differing executors"; sharing them is the point.
SHARED = [HealthCheck.too_slow, HealthCheck.differing_executors]

CHAT = [{"role": "user", "content": "Rename x to y in: x = 1"}]


def token_lists(vocab: int, max_len: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(FIRST_TEXT_ID, vocab - 1), min_size=1, max_size=max_len)


def stepwise(backend: Backend, ids: Sequence[int]) -> npt.NDArray[np.float32]:
    return np.stack([backend.decode(t) for t in ids])


class BackendContract:
    """Tests shared by every backend; subclasses set ``examples`` and ``assert_close``."""

    examples = 6

    def assert_close(self, got: np.ndarray, want: np.ndarray) -> None:
        raise NotImplementedError

    def assert_same(self, got: np.ndarray, want: np.ndarray) -> None:
        """Identical batch shapes on both sides: only thread-split noise may differ."""
        np.testing.assert_allclose(got, want, atol=1e-3, rtol=0)

    # -- structure ---------------------------------------------------------------------------

    def test_is_a_backend(self, backend: Backend) -> None:
        assert isinstance(backend, Backend)
        assert backend.vocab_size == 49152
        assert backend.context_length >= 1024

    def test_eos_includes_end_of_turn(self, backend: Backend) -> None:
        (im_end,) = backend.tokenize("<|im_end|>", special=True)
        assert im_end in backend.eos_token_ids
        assert backend.eos_token_id in backend.eos_token_ids

    def test_tokenize_adds_no_bos_and_parses_specials_only_when_asked(
        self, backend: Backend
    ) -> None:
        (im_end,) = backend.tokenize("<|im_end|>", special=True)
        plain = backend.tokenize("<|im_end|>")
        assert im_end not in plain and len(plain) > 1
        assert backend.detokenize(plain) == "<|im_end|>"
        assert backend.tokenize("x = 1") == backend.tokenize("x") + backend.tokenize(" = 1")

    @settings(max_examples=30, deadline=None, suppress_health_check=SHARED)
    @given(text=st.text(TEXT_CHARS, max_size=40))
    def test_detokenize_and_token_bytes_round_trip(self, backend: Backend, text: str) -> None:
        ids = backend.tokenize(text)
        assert backend.detokenize(ids) == text
        table = backend.token_bytes()
        assert b"".join(table[i] for i in ids) == text.encode("utf-8")

    def test_token_bytes_blank_for_control_tokens(self, backend: Backend) -> None:
        table = backend.token_bytes()
        assert len(table) == backend.vocab_size
        for special in ("<|im_start|>", "<|im_end|>", "<|endoftext|>"):
            (tid,) = backend.tokenize(special, special=True)
            assert table[tid] == b""

    def test_ll_tokenizer_matches_vocab(self, backend: Backend) -> None:
        tok = backend.ll_tokenizer()
        assert tok is backend.ll_tokenizer()  # cached
        assert tok.vocab_size == backend.vocab_size
        text = "def f(x):\n    return x + 1\n"
        assert tok.decode_bytes(backend.tokenize(text)) == text.encode()

    def test_chat_prompt_ends_with_the_assistant_opener(self, backend: Backend) -> None:
        prompt = backend.chat_prompt(CHAT)
        assert prompt.startswith("<|im_start|>system\n")
        assert prompt.endswith(
            "<|im_start|>user\nRename x to y in: x = 1<|im_end|>\n<|im_start|>assistant\n"
        )
        ids = backend.tokenize(prompt, special=True)
        assert ids[0] == backend.tokenize("<|im_start|>", special=True)[0]  # no BOS added

    # -- the cache ---------------------------------------------------------------------------

    def test_splice_equals_stepwise_decode(self, backend: Backend) -> None:
        @settings(max_examples=self.examples, deadline=None, suppress_health_check=SHARED)
        @given(prefix=token_lists(backend.vocab_size, 40), span=token_lists(backend.vocab_size, 24))
        def check(prefix: list[int], span: list[int]) -> None:
            backend.truncate(0)
            backend.splice(prefix)
            batched = backend.splice(span)
            assert backend.n_tokens == len(prefix) + len(span)
            backend.truncate(len(prefix))
            steps = stepwise(backend, span)
            self.assert_close(batched, steps[-1])

        check()

    def test_splice_all_rows_equal_stepwise_logits(self, backend: Backend) -> None:
        rng = np.random.default_rng(1)
        prefix = rng.integers(FIRST_TEXT_ID, backend.vocab_size, 20).tolist()
        span = rng.integers(FIRST_TEXT_ID, backend.vocab_size, 12).tolist()
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

    def test_splice_all_rows_picks_positions(self, backend: Backend) -> None:
        rng = np.random.default_rng(5)
        span = rng.integers(FIRST_TEXT_ID, backend.vocab_size, 10).tolist()
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

    def test_truncate_then_splice_equals_fresh_prefill(self, backend: Backend) -> None:
        rng = np.random.default_rng(2)
        a, b, c = (rng.integers(FIRST_TEXT_ID, backend.vocab_size, n).tolist() for n in (30, 17, 9))
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

    def test_cached_ids_track_splices_decodes_and_truncation(self, backend: Backend) -> None:
        rng = np.random.default_rng(4)
        a, b = (rng.integers(FIRST_TEXT_ID, backend.vocab_size, n).tolist() for n in (12, 5))
        backend.truncate(0)
        backend.splice(a)
        backend.decode(b[0])
        backend.splice_all(b[1:], rows=[0])
        assert backend.cached_ids == a + b
        backend.truncate(7)
        assert backend.cached_ids == a[:7] and backend.n_tokens == 7

    def test_chunked_splices_equal_one_splice(self, backend: Backend) -> None:
        rng = np.random.default_rng(3)
        ids = rng.integers(FIRST_TEXT_ID, backend.vocab_size, 48).tolist()
        backend.truncate(0)
        whole = backend.splice(ids)
        backend.truncate(0)
        for i in range(0, 48, 16):
            parts = backend.splice(ids[i : i + 16])
        self.assert_close(parts, whole)

    def test_bad_calls_raise_backend_error(self, backend: Backend) -> None:
        backend.truncate(0)
        backend.splice([FIRST_TEXT_ID])
        with pytest.raises(BackendError, match="empty"):
            backend.splice([])
        with pytest.raises(BackendError, match="vocabulary"):
            backend.splice([backend.vocab_size])
        with pytest.raises(BackendError, match="truncate"):
            backend.truncate(5)
        with pytest.raises(BackendError, match="context"):
            backend.splice([FIRST_TEXT_ID] * backend.context_length)
        assert backend.n_tokens == 1
        backend.decode(FIRST_TEXT_ID)
        assert backend.n_tokens == 2
