"""A tiny deterministic stand-in for a model: byte tokens, logits a function of the last token.

Enough to test the benchmarks' accounting (forwards, cache length, truncation) without a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

BYTE_VOCAB = 256
EOS = 256
VOCAB = 257


class FakeBackend:
    """Implements copygram's Backend protocol over a random bigram table (seeded)."""

    name = "fake"

    def __init__(self, seed: int = 0, context_length: int = 1 << 20) -> None:
        rng = np.random.default_rng(seed)
        self._table = rng.standard_normal((VOCAB, VOCAB)).astype(np.float32)
        self._cache: list[int] = []
        self._context_length = context_length
        self.calls: list[tuple[str, int]] = []  # (kind, tokens) of every forward

    @property
    def vocab_size(self) -> int:
        return VOCAB

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return frozenset({EOS})

    @property
    def eos_token_id(self) -> int:
        return EOS

    @property
    def context_length(self) -> int:
        return self._context_length

    @property
    def n_tokens(self) -> int:
        return len(self._cache)

    @property
    def cached_ids(self) -> list[int]:
        return list(self._cache)

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        return list(text.encode("utf-8"))

    def detokenize(self, ids: Sequence[int]) -> str:
        return bytes(i for i in ids if i < BYTE_VOCAB).decode("utf-8", errors="replace")

    def token_bytes(self) -> list[bytes]:
        return [bytes([i]) for i in range(BYTE_VOCAB)] + [b""]

    def ll_tokenizer(self) -> Any:
        raise NotImplementedError("the fake backend has no llguidance tokenizer")

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        return "".join(f"<{m['role']}>{m['content']}\n" for m in messages) + "<assistant>"

    def _append(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        if not ids:
            raise ValueError("a forward needs at least one token")
        if len(self._cache) + len(ids) > self._context_length:
            raise ValueError("context overflow")
        for token in ids:
            if not 0 <= token < VOCAB:
                raise ValueError(f"token {token} out of range")
        self._cache.extend(ids)
        rows: npt.NDArray[np.float32] = self._table[list(ids)]
        return rows

    def splice(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        self.calls.append(("splice", len(ids)))
        last: npt.NDArray[np.float32] = self._append(ids)[-1]
        return last

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        self.calls.append(("splice_all", len(ids)))
        logits = self._append(ids)
        if rows is None:
            return logits
        picked: npt.NDArray[np.float32] = logits[list(rows)]
        return picked

    def decode(self, token_id: int) -> npt.NDArray[np.float32]:
        self.calls.append(("decode", 1))
        last: npt.NDArray[np.float32] = self._append([token_id])[-1]
        return last

    def truncate(self, n_tokens: int) -> None:
        if not 0 <= n_tokens <= len(self._cache):
            raise ValueError(f"cannot truncate {len(self._cache)} tokens to {n_tokens}")
        del self._cache[n_tokens:]
