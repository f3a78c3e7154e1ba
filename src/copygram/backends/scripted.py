"""A scripted fake backend: a byte-level "model" that has memorised one edit program.

For testing the decode loop without weights. Its vocabulary is the 256 bytes plus EOS. Its logits
favour the byte that continues the memorised program text, reading its own KV cache the way a real
model would: after a copy tag closes it expects the copied lines (spliced by the loop) before the
program goes on. If its cache ever holds something else, it loses track and its logits go flat, so
a loop that splices the wrong tokens fails visibly. Every forward call is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import numpy.typing as npt

from copygram.lines import split_lines
from copygram.program import Copy, Program
from copygram.syntaxes import get_syntax

if TYPE_CHECKING:
    import llguidance

EOS = 256


@dataclass(frozen=True)
class Call:
    kind: str  # "splice", "splice_all" or "decode"
    ids: tuple[int, ...]


@dataclass
class ScriptedBackend:
    """A fake :class:`~copygram.backends.base.Backend` that will emit ``program`` for
    ``document``."""

    document: str
    program: Program
    syntax: str = "lines"
    context_length: int = 1 << 16
    name: str = "scripted"
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        syntax = get_syntax(self.syntax)
        lines = split_lines(self.document)
        self._program_bytes = b""
        # offset in the program text where a copy tag ends -> bytes of the lines it copies
        self._copies: dict[int, bytes] = {}
        for op in self.program:
            self._program_bytes += syntax.render(Program([op])).encode("utf-8")
            if isinstance(op, Copy):
                content = "".join(lines[op.start - 1 : op.end]).encode("utf-8")
                self._copies[len(self._program_bytes)] = content
        self._cache: list[int] = []
        self._prompt_len = 0
        self._in_prompt = True  # the next append completes the prompt

    # -- vocabulary ---------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return 257

    @property
    def eos_token_id(self) -> int:
        return EOS

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return frozenset({EOS})

    @property
    def cached_ids(self) -> list[int]:
        """A copy of the token ids in the cache."""
        return list(self._cache)

    @property
    def n_tokens(self) -> int:
        return len(self._cache)

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        return list(text.encode("utf-8"))

    def detokenize(self, ids: Sequence[int]) -> str:
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")

    def token_bytes(self) -> list[bytes]:
        return [bytes([i]) for i in range(256)] + [b""]

    def ll_tokenizer(self) -> llguidance.LLTokenizer:
        import llguidance

        return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        return "".join(f"[{m['role']}]\n{m['content']}\n" for m in messages) + "[assistant]\n"

    # -- the "model" --------------------------------------------------------------------------

    def _next_logits(self) -> npt.NDArray[np.float32]:
        logits = np.zeros(self.vocab_size, dtype=np.float32)
        offset, pending = 0, b""
        for token in self._cache[self._prompt_len :]:
            piece = bytes([token]) if token < 256 else b"\x00EOS"
            if pending:
                if not pending.startswith(piece):
                    return logits  # lost: the cache does not hold what a copy should splice
                pending = pending[len(piece) :]
                continue
            if not self._program_bytes.startswith(piece, offset):
                return logits
            offset += len(piece)
            pending = self._copies.get(offset, b"")
        if pending:
            return logits  # a forward that stopped inside copied content: nothing to predict
        nxt = self._program_bytes[offset : offset + 1]
        logits[nxt[0] if nxt else EOS] = 10.0
        return logits

    def _append(self, kind: str, ids: Sequence[int]) -> None:
        if self._in_prompt:
            self._prompt_len, self._in_prompt = len(self._cache) + len(ids), False
        self.calls.append(Call(kind, tuple(ids)))
        self._cache.extend(ids)
        if len(self._cache) > self.context_length:
            raise RuntimeError("scripted backend: context overflow")

    def splice(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        self._append("splice", ids)
        return self._next_logits()

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        out = []
        base = len(self._cache)
        self._append("splice_all", ids)
        full = self._cache
        for row in range(len(ids)) if rows is None else rows:
            self._cache = full[: base + row + 1]
            out.append(self._next_logits())
        self._cache = full
        return np.stack(out)

    def decode(self, token_id: int) -> npt.NDArray[np.float32]:
        self._append("decode", [token_id])
        return self._next_logits()

    def truncate(self, n_tokens: int) -> None:
        del self._cache[n_tokens:]
        if n_tokens < self._prompt_len:
            self._in_prompt = True


class _ByteTokenizer:
    """The minimal tokenizer object llguidance's TokenizerWrapper wraps."""

    eos_token_id = EOS
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"\xff<eos>"]
    special_token_ids: ClassVar[list[int]] = [EOS]

    def __call__(self, text: bytes) -> list[int]:
        return list(text)
