"""The approaches ``bench quality`` compares: copygram's program mode (:func:`program_approach`),
its rewrite mode (:func:`rewrite_mode_approach`: the model rewrites, the file drafts), the
rewrite baseline (:class:`RewriteBaseline`: the whole file rewritten by a plain greedy decode, one
token per forward) and the prompt-lookup peer (:class:`LookupPeer`: the baseline's prompt and
budget, decoded by llama-cpp-python's or Transformers' own prompt lookup). The file is taken out
of each reply by :func:`~copygram.decode.rewrite.extract_document`, which rewrite mode uses too."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from copygram.backends.prefix_store import Snapshots
from copygram.bench.data import EditRow
from copygram.bench.quality.bound import copy_bound
from copygram.bench.quality.scoring import Approach, ApproachResult
from copygram.decode.rewrite import closes_file, extract_document, rewrite_budget
from copygram.decode.stats import RunStats
from copygram.errors import CopygramError

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.bench.peers import LookupGenerate
    from copygram.decode.prompt import PromptBuilder
    from copygram.session import EditSession

__all__ = ["PLACEHOLDER_INSTRUCTION", "LookupPeer", "PrefixPrimer", "RewriteBaseline",
           "RewriteOutput", "extract_document", "program_approach", "prompt_prefix", "rewrite_budget",
           "rewrite_decode", "rewrite_mode_approach", "rewrite_prompt", "rewrite_request"]


@dataclass(frozen=True)
class RewriteOutput:
    """A plain greedy rewrite: ``text`` (:func:`extract_document` of ``raw``) and what it cost.

    ``stop`` is ``"eos"``, ``"stop"`` (the line that closes the file's fence, as rewrite mode
    ends: :func:`~copygram.decode.rewrite.file_end`), ``"budget"`` (``budget`` tokens decoded)
    or ``"context"`` (the context filled first). ``prefill_s`` is the batched forward of the
    prompt but its last token; ``decode_s`` every one-token step after it, the prompt's last
    token first (so that it splits a call where rewrite mode's
    :class:`~copygram.decode.stats.RunStats` splits one: ``prefill_s`` and ``wall_s``).
    """

    text: str
    raw: str
    prompt_tokens: int
    decoded_tokens: int
    budget: int
    stop: str
    prefill_s: float
    decode_s: float
    forwards: int = 0  # decode steps after the prompt
    cached_prompt_tokens: int = 0  # the prompt's tokens the cache already held

    def stats(self) -> dict[str, object]:
        return {"decoded_tokens": self.decoded_tokens, "prompt_tokens": self.prompt_tokens,
                "cached_prompt_tokens": self.cached_prompt_tokens,
                "forwards": self.forwards,
                "budget": self.budget, "stop": self.stop, "prefill_s": self.prefill_s,
                "decode_s": self.decode_s, "gen_s": self.decode_s, "raw": self.raw}


def rewrite_prompt(backend: Backend, prompt_builder: PromptBuilder | None = None) -> PromptText:
    """The rewrite prompt's text for a document and an instruction: ``prompt_builder`` (default
    :class:`~copygram.decode.prompt.RewritePromptBuilder`) on ``backend``."""
    from copygram.decode.prompt import RewritePromptBuilder

    builder: PromptBuilder = prompt_builder or RewritePromptBuilder()

    def text(document: str, instruction: str) -> str:
        return builder.build(document, instruction, backend)

    return text


def rewrite_request(backend: Backend, document: str, instruction: str, *,
                    prompt_builder: PromptBuilder | None = None,
                    max_new_tokens: int | None = None) -> tuple[list[int], int]:
    """The rewrite prompt's token ids and the token budget, shared by the baseline and the
    lookup peer so that both decode the same tokens under the same budget.

    The prompt is ``prompt_builder`` (default :class:`~copygram.decode.prompt.RewritePromptBuilder`)
    tokenized with special tokens; the budget ``max_new_tokens`` (default :func:`rewrite_budget`
    of the document). Raises :class:`~copygram.errors.DocumentError` if the prompt alone fills
    the context."""
    from copygram.errors import DocumentError

    prompt = rewrite_prompt(backend, prompt_builder)(document, instruction)
    prompt_ids = backend.tokenize(prompt, special=True)
    budget = (max_new_tokens if max_new_tokens is not None
              else rewrite_budget(len(backend.tokenize(document))))
    if not prompt_ids or len(prompt_ids) >= backend.context_length:
        raise DocumentError(
            f"the rewrite prompt takes {len(prompt_ids)} tokens, n_ctx is "
            f"{backend.context_length}; raise n_ctx or edit a smaller document")
    return prompt_ids, budget


def rewrite_decode(backend: Backend, document: str, instruction: str, *,
                   prompt_builder: PromptBuilder | None = None,
                   max_new_tokens: int | None = None) -> RewriteOutput:
    """Ask the model to rewrite ``document`` and decode greedily, one token per forward: the
    prompt's last token too (the reference in ``tests/decode/stepwise.py``).

    The prompt and budget are :func:`rewrite_request`'s; greedy is ``argmax`` (ties to the lowest
    id); decoding stops at an end-of-generation id, after the line that closes the file's fence
    (as rewrite mode's does), at the budget, or when the context is full.
    Raises :class:`~copygram.errors.DocumentError` if the prompt alone fills the context.
    """
    from copygram.decode.loop import prefill

    prompt_ids, budget = rewrite_request(backend, document, instruction,
                                         prompt_builder=prompt_builder,
                                         max_new_tokens=max_new_tokens)
    eos = backend.eos_token_ids
    closes = closes_file(backend.token_bytes(), document)
    tick = time.perf_counter()
    # On llama.cpp a row of a batched forward differs slightly from a one-token step, which can
    # flip a near-tie; plain greedy reads every choice from a one-token step, the first one
    # included. So the prompt but its last token is spliced (its cached prefix reused) and the
    # last token decoded alone.
    spliced = 0
    if len(prompt_ids) > 1:
        spliced = prefill(backend, prompt_ids[:-1])[1]
    else:
        backend.truncate(0)
    prefill_s = time.perf_counter() - tick
    tick = time.perf_counter()
    logits = backend.decode(prompt_ids[-1])
    out: list[int] = []
    stop = "budget"
    steps = 0
    while len(out) < budget:
        token = int(np.argmax(logits))
        if token in eos:
            stop = "eos"
            break
        out.append(token)
        if closes is not None and closes(token):
            stop = "stop"
            break
        if len(out) >= budget:
            break
        if backend.n_tokens + 1 > backend.context_length:
            stop = "context"
            break
        logits = backend.decode(token)
        steps += 1
    decode_s = time.perf_counter() - tick
    raw = backend.detokenize(out) if out else ""
    return RewriteOutput(text=extract_document(raw, document), raw=raw,
                         prompt_tokens=len(prompt_ids), decoded_tokens=len(out), budget=budget,
                         stop=stop, prefill_s=prefill_s, decode_s=decode_s, forwards=steps,
                         cached_prompt_tokens=len(prompt_ids) - 1 - spliced)


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


@dataclass
class LookupPeer:
    """A prompt-lookup peer (:func:`copygram.bench.peers.lookup_generator`) as an
    :data:`Approach`: the baseline's prompt ids and budget (:func:`rewrite_request`), decoded by
    ``generate`` (ended where the baseline ends), detokenized by ``backend`` and fence-stripped
    like the baseline. Its stats:
    ``decoded_tokens`` (every output token: the peer does not say which came from a draft),
    ``forwards`` after the prompt's, ``prompt_tokens``, ``budget``, ``stop`` and ``raw``."""

    backend: Backend
    generate: LookupGenerate
    prompt_builder: PromptBuilder | None = None
    max_new_tokens: int | None = None

    def prime(self, row: EditRow) -> None:
        """Untimed, before each run on ``row``: the peer's cache keeps no more of the prompt
        than :class:`PrefixPrimer` leaves copygram's approaches (the prefix no document
        changes), never a row's document from an earlier run (``bench quality --repeats``)."""
        text = rewrite_prompt(self.backend, self.prompt_builder)
        self.generate.keep_prefix(len(prompt_prefix(self.backend, text, row)))

    def __call__(self, row: EditRow) -> ApproachResult:
        try:
            prompt_ids, budget = rewrite_request(self.backend, row.before, row.instruction,
                                                 prompt_builder=self.prompt_builder,
                                                 max_new_tokens=self.max_new_tokens)
            run = self.generate(prompt_ids, budget,
                                closes_file(self.backend.token_bytes(), row.before))
        except CopygramError as exc:
            return None, {}, f"{type(exc).__name__}: {exc}"
        raw = self.backend.detokenize(run.tokens) if run.tokens else ""
        stats: dict[str, object] = {
            "decoded_tokens": len(run.tokens), "forwards": run.forwards,
            "prompt_tokens": len(prompt_ids), "budget": budget, "stop": run.stop, "raw": raw}
        if run.gen_seconds is not None:
            stats["gen_s"] = run.gen_seconds
        return extract_document(raw, row.before), stats, None


def time_split(stats: RunStats) -> dict[str, float]:
    """Where a run's time went (issue 40's long-file costs): the prompt's prefill, one-token
    decode steps, and batched forwards (splices and verified drafts); and how many prompt
    tokens the cache already held."""
    return {"prefill_s": stats.prefill_s, "decode_s": stats.decode_s, "splice_s": stats.splice_s,
            "cached_prompt_tokens": stats.cached_prompt_tokens}


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
            run_stats = getattr(exc, "stats", None)
            if isinstance(run_stats, RunStats):  # what the failed run cost counts too
                stats.update(decoded_tokens=run_stats.decoded_tokens,
                             prompt_tokens=run_stats.prompt_tokens, forwards=run_stats.forwards,
                             cut_copies=run_stats.cut_copies,
                             unchanged_retries=run_stats.unchanged_retries)
            return None, stats, f"{type(exc).__name__}: {exc}"
        return result.text, {"decoded_tokens": result.stats.decoded_tokens,
                             "program": result.program_text,
                             "prompt_tokens": result.stats.prompt_tokens,
                             "mode": result.mode,
                             "forwards": result.stats.forwards,
                             "cut_copies": result.stats.cut_copies,
                             "unchanged_retries": result.stats.unchanged_retries,
                             # A damaged program redone in rewrite mode (decode.checked): its
                             # damage, and the time of both runs.
                             "redone": ",".join(sorted({d.kind for d in result.redone.damage}))
                             if result.redone is not None else "",
                             "redone_program": (result.redone.program_text
                                                if result.redone is not None else ""),
                             # The named definitions' ranges a program was held to reach.
                             "touch_ranges": (result.redone or result).stats.touch_ranges,
                             # Runaway head blocks closed where the next unit began.
                             "runaway_closes": (result.redone or result).stats.runaway_closes,
                             # A scoped rewrite's excerpt (decode.scoped; 0: none).
                             "scope_lines": result.stats.scope_lines,
                             # A rename's calls in the documentation renamed (decode.renames).
                             "doc_renames": result.stats.doc_renames,
                             # A partial reply's dropped definitions put back (decode.checked).
                             "restored_definitions": result.stats.restored_definitions,
                             # Dropped documentation blocks put back (language.lost_docs).
                             "restored_documentation": result.stats.restored_documentation,
                             # Lines put back in the file's indentation unit (indent_style).
                             "restyled_lines": result.stats.restyled_lines,
                             "redone_damage": ("; ".join(str(d) for d in result.redone.damage)
                                               if result.redone is not None else ""),
                             "gen_s": result.stats.wall_s + (result.redone.stats.wall_s
                                                             if result.redone else 0.0),
                             **time_split(result.stats)}, None

    return run


def rewrite_mode_approach(session: EditSession) -> Approach:
    """copygram's rewrite mode as an :data:`Approach` (``session`` must be in rewrite mode): the
    same prompt, budget and fence stripping as the baseline, drafted from the file. Its stats
    add ``accepted_prediction_tokens``, ``rejected_prediction_tokens``, ``forwards``, ``raw``
    (compared with the baseline's by :func:`~copygram.bench.quality.command.run_rows`), and the
    output's :func:`~copygram.bench.quality.bound.copy_bound` (``output_tokens``,
    ``bound_steps``)."""
    if session.mode != "rewrite":
        raise ValueError("rewrite_mode_approach needs a session in rewrite mode")

    def run(row: EditRow) -> ApproachResult:
        try:
            result = session.edit(row.before, row.instruction)
        except CopygramError as exc:
            return None, {}, f"{type(exc).__name__}: {exc}"
        stats = result.stats
        bound = copy_bound(result.raw, row.before, session.backend.tokenize,
                           session.backend.batch_profile)
        return result.text, {"decoded_tokens": stats.decoded_tokens,
                             "output_tokens": bound.tokens, "bound_steps": bound.steps,
                             "accepted_prediction_tokens": stats.drafted_tokens,
                             "rejected_prediction_tokens": stats.rejected_tokens,
                             "forwards": stats.forwards, "tie_steps": stats.tie_steps,
                             "prompt_tokens": stats.prompt_tokens, "gen_s": stats.wall_s,
                             **time_split(stats), "raw": result.raw}, None

    return run


PromptText = Callable[[str, str], str]
"""``(document, instruction) -> prompt text`` of an approach."""


@dataclass
class PrefixPrimer:
    """Puts an approach's document-independent prompt prefix (system message, worked example:
    what a server with prefix caching keeps across requests) into ``backend``'s cache, and
    nothing else, before the approach runs on a row (untimed). Approaches that share one
    backend then never start on a cache another approach left with the same document in it:
    each pays for the row's own tokens (instruction and document) and no more. The prefix is
    :func:`prompt_prefix`'s."""

    backend: Backend
    prompt: PromptText

    def __call__(self, row: EditRow) -> None:
        prefix = prompt_prefix(self.backend, self.prompt, row)
        # Nor a snapshot of an earlier prompt (copygram.backends.prefix_store): a row starts
        # from the prefix alone, whatever ran before it.
        if isinstance(self.backend, Snapshots) and self.backend.prefix_store is not None:
            self.backend.prefix_store.clear()
        self.backend.truncate(0)
        if prefix:
            self.backend.splice(prefix)


PLACEHOLDER_INSTRUCTION = "\x00 placeholder"
"""The instruction :func:`prompt_prefix` sets a row's against."""


@dataclass
class AutoPrompt:
    """Mode auto's prompt for a row: the prompt of the mode ``mode_for`` picks for the row's
    document and instruction, decided on the first call for that document and kept for
    :func:`prompt_prefix`'s probes (the placeholder instruction, and the placeholder line put
    before the document), which must compare prompts of the same mode: a probe that picked the
    other mode shared only the chat template's first tokens, and auto was primed with almost
    nothing where program mode had its system message and example cached."""

    mode_for: Callable[[str, str], str]
    program: PromptText
    rewrite: PromptText
    _document: str | None = None
    _prompt: PromptText | None = None

    def __call__(self, document: str, instruction: str) -> str:
        real = document.removeprefix(f"{PLACEHOLDER_INSTRUCTION}\n")
        if real != self._document or self._prompt is None:
            picked = self.mode_for(real, instruction)
            self._document = real
            self._prompt = self.rewrite if picked == "rewrite" else self.program
        return self._prompt(document, instruction)


def prompt_prefix(backend: Backend, prompt: PromptText, row: EditRow) -> list[int]:
    """The tokens of ``prompt`` for ``row`` that neither its instruction nor its document
    changes: where they part from the prompt of the row's document with
    :data:`PLACEHOLDER_INSTRUCTION`, or of its instruction with a line of that placeholder put
    before the document (measured per row, as the chat template may merge tokens across the
    boundary), and never the whole prompt. So this prefix holds no token of the document or the
    instruction, whichever comes first (``prompt_order``; tests/bench/test_quality_prefix.py).

    Why the row's own document: a prompt may pick its worked example by the document's layout
    (head blocks show a braced one for a braced document); that example is as document-free as
    the system message, and a server with prefix caching keeps it across edits of such
    documents."""
    real = backend.tokenize(prompt(row.before, row.instruction), special=True)
    common = len(real) - 1
    for document, instruction in ((row.before, PLACEHOLDER_INSTRUCTION),
                                  (f"{PLACEHOLDER_INSTRUCTION}\n{row.before}", row.instruction)):
        other = backend.tokenize(prompt(document, instruction), special=True)
        common = min(common, len(other) - 1)
        common = next((i for i in range(common) if real[i] != other[i]), common)
    return real[:max(common, 0)]
