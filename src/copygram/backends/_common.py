"""Small pieces shared by the backend adapters (no inference stack imported here)."""

from __future__ import annotations

from collections.abc import Sequence

from copygram.errors import BackendError

DEFAULT_N_CTX = 4096
"""Context size used when the config gives none (or the model's training context if smaller)."""

END_OF_TURN_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")
"""Special-token texts that end an assistant turn in common chat templates; each one the vocabulary
has as a single special token joins ``eos_token_ids``."""


def check_context(n_cached: int, n_new: int, n_ctx: int) -> None:
    """Raise :class:`BackendError` when appending ``n_new`` tokens would overflow the context."""
    if n_new < 0 or n_cached + n_new > n_ctx:
        raise BackendError(
            f"appending {n_new} tokens to {n_cached} cached ones exceeds the context of {n_ctx} "
            "tokens; raise n_ctx in the backend config or edit a shorter document"
        )


def check_ids(ids: Sequence[int], vocab_size: int) -> None:
    """Raise :class:`BackendError` on an empty span or an id outside the vocabulary."""
    if len(ids) == 0:
        raise BackendError("cannot splice an empty token sequence; pass at least one token id")
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        raise BackendError(
            f"token id {bad[0]} is outside the vocabulary (0..{vocab_size - 1}); "
            "tokenize with this backend's tokenizer"
        )


def truncate_target(n_tokens: int, n_cached: int) -> int:
    """Validate a truncate request; raise :class:`BackendError` unless 0 <= n <= n_cached."""
    if not 0 <= n_tokens <= n_cached:
        raise BackendError(
            f"cannot truncate the cache to {n_tokens} tokens: it holds {n_cached}; "
            "pass a value between 0 and n_tokens"
        )
    return n_tokens


def with_bos(prompt: str, bos_text: str | None, add_bos: bool) -> str:
    """``prompt`` with the BOS text in front when the model wants a BOS and the template left it out.

    Backends never add BOS while tokenizing (spliced spans must not get one); the chat prompt is the
    one place a sequence starts, so it carries the BOS as special-token text instead.
    """
    if add_bos and bos_text and not prompt.startswith(bos_text):
        return bos_text + prompt
    return prompt


def output_rows(rows: Sequence[int] | None, n_ids: int) -> list[int]:
    """The positions ``splice_all`` must return logits for (default: all); each in ``[0, n_ids)``."""
    if rows is None:
        return list(range(n_ids))
    out = [int(r) for r in rows]
    bad = [r for r in out if not 0 <= r < n_ids]
    if bad:
        raise BackendError(
            f"splice_all row {bad[0]} is outside the span of {n_ids} tokens; "
            "rows index the ids passed to splice_all"
        )
    return out
