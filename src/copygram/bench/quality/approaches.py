"""The approaches ``bench quality`` compares: copygram's program mode
(:func:`program_approach`) and the rewrite baseline (:class:`RewriteBaseline`: the whole file
rewritten by a plain greedy decode, the file taken out of the reply by :func:`extract_document`)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from copygram.bench.data import EditRow
from copygram.bench.quality.scoring import Approach, ApproachResult
from copygram.errors import CopygramError

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.decode.prompt import PromptBuilder
    from copygram.session import EditSession

__all__ = ["RewriteBaseline", "RewriteOutput", "extract_document", "program_approach",
           "rewrite_budget", "rewrite_decode"]


_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[^\n`]*\n")


def extract_document(output: str) -> str:
    """The file in a rewrite's raw model output, deterministically.

    If the output (after any blank lines that lead it) opens with a code fence line (three or
    more backticks or tildes, then an optional language tag: ```` ```python ````), the file is
    what follows that line up to the *last* line holding just the same fence marker (trailing
    spaces allowed); the newline before the closing line belongs to the file's last line, and
    whatever follows the closing line (a model's explanation) is dropped. A fence never closed
    (the budget ran out) loses only its opening line. Any other output is the file as it
    stands. Fences inside the file stay: only one surrounding fence goes.
    """
    start = 0
    while True:
        end = output.find("\n", start)
        if end < 0 or output[start:end].strip():
            break
        start = end + 1
    opening = _FENCE_OPEN.match(output, start)
    if opening is None:
        return output
    marker = opening.group(1)
    body = output[opening.end():]
    closing = None
    offset = 0
    for line in body.splitlines(keepends=True):
        if line.rstrip() == marker:
            closing = offset
        offset += len(line)
    return body if closing is None else body[:closing]


def rewrite_budget(document_tokens: int) -> int:
    """The rewrite baseline's output budget: 1.5x the document's tokens plus 64 (a bug fix
    barely changes a file's length; the slack covers fences and a few new lines)."""
    return document_tokens + document_tokens // 2 + 64


@dataclass(frozen=True)
class RewriteOutput:
    """A plain greedy rewrite: ``text`` (:func:`extract_document` of ``raw``) and what it cost.

    ``stop`` is ``"eos"``, ``"budget"`` (``budget`` tokens decoded) or ``"context"`` (the
    context filled first).
    """

    text: str
    raw: str
    prompt_tokens: int
    decoded_tokens: int
    budget: int
    stop: str
    prefill_s: float
    decode_s: float

    def stats(self) -> dict[str, object]:
        return {"decoded_tokens": self.decoded_tokens, "prompt_tokens": self.prompt_tokens,
                "budget": self.budget, "stop": self.stop, "prefill_s": self.prefill_s,
                "decode_s": self.decode_s, "raw": self.raw}


def rewrite_decode(backend: Backend, document: str, instruction: str, *,
                   prompt_builder: PromptBuilder | None = None,
                   max_new_tokens: int | None = None) -> RewriteOutput:
    """Ask the model to rewrite ``document`` and decode greedily, one token per forward.

    The prompt is ``prompt_builder`` (default :class:`~copygram.decode.prompt.RewritePromptBuilder`);
    greedy is ``argmax`` (ties to the lowest id); decoding stops at an end-of-generation id, at
    ``max_new_tokens`` (default :func:`rewrite_budget` of the document), or when the context is
    full. Raises :class:`~copygram.errors.DocumentError` if the prompt alone fills the context.
    """
    from copygram.decode.loop import prefill
    from copygram.decode.prompt import RewritePromptBuilder
    from copygram.errors import DocumentError

    builder: PromptBuilder = prompt_builder or RewritePromptBuilder()
    prompt_ids = backend.tokenize(builder.build(document, instruction, backend), special=True)
    budget = (max_new_tokens if max_new_tokens is not None
              else rewrite_budget(len(backend.tokenize(document))))
    if not prompt_ids or len(prompt_ids) >= backend.context_length:
        raise DocumentError(
            f"the rewrite prompt takes {len(prompt_ids)} tokens, n_ctx is "
            f"{backend.context_length}; raise n_ctx or edit a smaller document")
    eos = backend.eos_token_ids
    tick = time.perf_counter()
    logits, _ = prefill(backend, prompt_ids)  # the prompt prefix in the cache is reused
    prefill_s = time.perf_counter() - tick
    tick = time.perf_counter()
    out: list[int] = []
    stop = "budget"
    while len(out) < budget:
        token = int(np.argmax(logits))
        if token in eos:
            stop = "eos"
            break
        out.append(token)
        if len(out) >= budget:
            break
        if backend.n_tokens + 1 > backend.context_length:
            stop = "context"
            break
        logits = backend.decode(token)
    decode_s = time.perf_counter() - tick
    raw = backend.detokenize(out) if out else ""
    return RewriteOutput(text=extract_document(raw), raw=raw, prompt_tokens=len(prompt_ids),
                         decoded_tokens=len(out), budget=budget, stop=stop,
                         prefill_s=prefill_s, decode_s=decode_s)


@dataclass
class RewriteBaseline:
    """The rewrite baseline as an :data:`Approach` over a loaded backend."""

    backend: Backend
    prompt_builder: PromptBuilder | None = None
    max_new_tokens: int | None = None

    def __call__(self, row: EditRow) -> ApproachResult:
        try:
            output = rewrite_decode(self.backend, row.before, row.instruction,
                                    prompt_builder=self.prompt_builder,
                                    max_new_tokens=self.max_new_tokens)
        except CopygramError as exc:
            return None, {}, f"{type(exc).__name__}: {exc}"
        return output.text, output.stats(), None


def program_approach(session: EditSession) -> Approach:
    """copygram's program mode as an :data:`Approach`: a ``CopygramError`` makes the row invalid
    (any other exception propagates, for :func:`evaluate_row` to record as a crash)."""

    def run(row: EditRow) -> ApproachResult:
        try:
            result = session.edit(row.before, row.instruction)
        except CopygramError as exc:
            stats: dict[str, object] = {}
            partial = getattr(exc, "partial_program", None)
            if isinstance(partial, str):
                stats["partial_program"] = partial
            return None, stats, f"{type(exc).__name__}: {exc}"
        return result.text, {"decoded_tokens": result.stats.decoded_tokens,
                             "program": result.program_text,
                             "prompt_tokens": result.stats.prompt_tokens,
                             "forwards": result.stats.forwards}, None

    return run
