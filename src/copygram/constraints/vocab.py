"""One view of a tokenizer for the constraint engines: token bytes, EOS, size, llguidance tokenizer.

:func:`vocab_for` accepts a copygram :class:`~copygram.backends.base.Backend` (anything with
``token_bytes()``, ``eos_token_id``, ``vocab_size`` and ``ll_tokenizer()``), a Hugging Face fast
tokenizer, an ``llguidance.LLTokenizer``, or the string ``"byte"`` (llguidance's 256-byte test
tokenizer). Building a :class:`Vocab` costs ~10 ms for a 49k vocabulary on top of the llguidance
tokenizer (~0.3 s from transformers, cached by a backend); it is cached per tokenizer object.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import llguidance
import numpy as np
import numpy.typing as npt

from copygram.errors import ConstraintError

Mask = npt.NDArray[np.bool_]
"""Allowed-token mask over a vocabulary, shape ``(vocab_size,)``."""


@dataclass(frozen=True, eq=False)
class Vocab:
    """A vocabulary as the constraint engines see it; compared and hashed by identity.

    ``token_bytes[i]`` is ``b""`` for special tokens (they never occur in program text).
    ``vocab_size`` is the length of masks handed to callers: the model's logits width, which may
    exceed the number of real tokens (the extra ids are never allowed).
    """

    token_bytes: tuple[bytes, ...]
    eos_token_id: int
    vocab_size: int
    ll_tokenizer: llguidance.LLTokenizer = field(repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.eos_token_id < self.vocab_size:
            raise ConstraintError(
                f"EOS id {self.eos_token_id} is outside the vocabulary of {self.vocab_size}"
            )
        if len(self.token_bytes) > self.vocab_size:
            raise ConstraintError(
                f"the tokenizer has {len(self.token_bytes)} tokens but vocab_size is "
                f"{self.vocab_size}; pass a tokenizer matching the model"
            )

    def single_byte_tokens(self) -> dict[int, int]:
        """byte value -> a token id spelling exactly that byte (first found)."""
        found: dict[int, int] = {}
        for token_id, data in enumerate(self.token_bytes):
            if len(data) == 1 and token_id != self.eos_token_id:
                found.setdefault(data[0], token_id)
        return found


def _bytes_from_ll(tok: llguidance.LLTokenizer) -> tuple[bytes, ...]:
    return tuple(
        b"" if tok.is_special_token(i) else tok.decode_bytes([i]) for i in range(tok.vocab_size)
    )


def _from_ll(tok: llguidance.LLTokenizer, vocab_size: int | None = None) -> Vocab:
    return Vocab(
        token_bytes=_bytes_from_ll(tok),
        eos_token_id=int(tok.eos_token),
        vocab_size=vocab_size if vocab_size is not None else int(tok.vocab_size),
        ll_tokenizer=tok,
    )


def _build(tokenizer: Any) -> Vocab:
    if isinstance(tokenizer, str):
        if tokenizer != "byte":
            raise ConstraintError(
                f"unknown tokenizer name {tokenizer!r}: pass a Backend, a Hugging Face tokenizer "
                "or 'byte'"
            )
        return _from_ll(llguidance.LLTokenizer("byte"))
    if isinstance(tokenizer, llguidance.LLTokenizer):
        return _from_ll(tokenizer)
    if all(hasattr(tokenizer, a) for a in ("token_bytes", "ll_tokenizer", "eos_token_id")):
        ll = tokenizer.ll_tokenizer()
        size = int(tokenizer.vocab_size)
        if ll.vocab_size > size:
            raise ConstraintError(
                f"the backend's llguidance tokenizer has {ll.vocab_size} tokens, more than its "
                f"vocab_size {size}"
            )
        return Vocab(
            token_bytes=tuple(tokenizer.token_bytes()),
            eos_token_id=int(tokenizer.eos_token_id),
            vocab_size=size,
            ll_tokenizer=ll,
        )
    if hasattr(tokenizer, "backend_tokenizer"):
        try:
            from llguidance.hf import from_tokenizer
        except ImportError as exc:  # llguidance.hf imports transformers
            from copygram.errors import missing_dependency

            raise missing_dependency("transformers", "transformers") from exc
        try:
            ll = from_tokenizer(tokenizer)
        except ValueError as exc:
            raise ConstraintError(f"cannot use this Hugging Face tokenizer: {exc}") from None
        return _from_ll(ll, max(int(ll.vocab_size), len(tokenizer)))
    raise ConstraintError(
        f"cannot build a constraint vocabulary from {type(tokenizer).__name__}: pass a copygram "
        "Backend, a Hugging Face fast tokenizer, an llguidance.LLTokenizer or 'byte'"
    )


_lock = threading.Lock()
_by_object: weakref.WeakKeyDictionary[Any, Vocab] = weakref.WeakKeyDictionary()
_by_id: dict[int, tuple[Any, Vocab]] = {}  # objects that cannot be weakly referenced
_byte_vocab: list[Vocab] = []


def vocab_for(tokenizer: Any) -> Vocab:
    """The :class:`Vocab` of ``tokenizer``, built once per tokenizer object (see module doc)."""
    with _lock:
        if isinstance(tokenizer, str) and tokenizer == "byte":
            if not _byte_vocab:
                _byte_vocab.append(_build(tokenizer))
            return _byte_vocab[0]
        try:
            cached = _by_object.get(tokenizer)
        except TypeError:
            hit = _by_id.get(id(tokenizer))
            cached = hit[1] if hit is not None and hit[0] is tokenizer else None
        if cached is not None:
            return cached
        vocab = _build(tokenizer)
        try:
            _by_object[tokenizer] = vocab
        except TypeError:
            _by_id[id(tokenizer)] = (tokenizer, vocab)
        return vocab
