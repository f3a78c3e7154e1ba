"""The backend protocol: what copygram needs from an inference stack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import llguidance

Logits = npt.NDArray[np.float32]
"""Next-token logits over the vocabulary, on the host: shape ``(vocab_size,)``."""


@runtime_checkable
class Backend(Protocol):
    """A causal LM with a KV cache that copygram can append to.

    The cache holds ``n_tokens`` tokens. ``splice`` appends many known tokens in one batched
    forward pass (chunked only where the stack's batch limit forces it) and returns the logits of
    the last position; ``decode`` appends one token. A prompt prefill is a splice.
    """

    name: str

    @property
    def vocab_size(self) -> int: ...

    @property
    def eos_token_ids(self) -> frozenset[int]:
        """Every id that ends generation (EOS, and end-of-turn tokens of chat models)."""
        ...

    @property
    def eos_token_id(self) -> int: ...

    @property
    def context_length(self) -> int: ...

    @property
    def n_tokens(self) -> int: ...

    @property
    def cached_ids(self) -> list[int]:
        """The token ids in the cache, oldest first (a copy; for reusing a cached prefix)."""
        ...

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        """Token ids of ``text`` with no BOS added; ``special`` parses special-token text."""
        ...

    def detokenize(self, ids: Sequence[int]) -> str: ...

    def token_bytes(self) -> list[bytes]:
        """The bytes of every token id (``b""`` for special tokens), for the constraint engines."""
        ...

    def ll_tokenizer(self) -> llguidance.LLTokenizer:
        """An llguidance tokenizer for this vocabulary (built once, cached)."""
        ...

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        """The model's chat template applied to ``messages``, ending with the assistant turn."""
        ...

    def splice(self, ids: Sequence[int]) -> Logits:
        """Append ``ids`` in one batched forward; logits after the last one."""
        ...

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        """Append ``ids`` in one forward; logits after each ``ids[r]`` for ``r`` in ``rows``
        (default: every position), shape ``(len(rows), vocab)``.

        For verifying a speculative draft; costs a logits row per requested position, so ask only
        for the rows the verification reads.
        """
        ...

    def decode(self, token_id: int) -> Logits:
        """Append one token; logits after it."""
        ...

    def truncate(self, n_tokens: int) -> None:
        """Drop every cached token from position ``n_tokens`` on."""
        ...
