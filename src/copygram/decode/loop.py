"""The decode loop: constrained Copy-as-Decode with splicing and verified drafts, on any backend.

Per step: mask the logits with the document's constraint, choose a token (a
:class:`~copygram.decode.policies.Policy`: the model's choice or a teacher's), consume it, append
the tokens the grammar forces next, and when a copy op closes append the tokens of the copied
lines. Everything appended after one choice goes into the KV cache in **one** forward pass (a
splice), so a copy of N tokens costs one forward instead of N. A draft source may guess the next
program tokens; :func:`verify_draft` checks them in the forward that appends the feed and keeps the
longest prefix the policy would have chosen anyway, so the output is that of step-by-step decoding.

Batched rows are not bit-equal to one-token steps on every stack (llama.cpp's differ by up to
~0.6 in the top-2 margin), so a greedy choice read from a row of a multi-token forward whose
top-2 margin is within the backend's ``step_tolerance`` is re-decided from a one-token step at
that position (:meth:`~copygram.decode.forwards.Forwards.decide`, shared with plain text generation;
counted in ``RunStats.tie_steps``). Nothing that
shapes a batch reads a clock, so the same input gives the same output on every run.

:class:`Meter` is the forward meter (choosing, consuming, forwarding, with timings); :func:`run`
is the loop over one prompt; :func:`stream_edit` builds everything an edit needs (the document
split and tokenized once, the prompt, the drafter) and runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from copygram.decode.copy_check import copy_checks, first_disagreement
from copygram.decode.document import EditDocument
from copygram.decode.drafting import Draft, DraftConfig, Drafter
from copygram.decode.drafting.blocks import BlockDrafter
from copygram.decode.events import (
    CopyEvent,
    DoneEvent,
    EditResult,
    Event,
    GenTokenEvent,
    RetractEvent,
)
from copygram.decode.forwards import Forwards
from copygram.decode.guards import Budget, RepeatGuard, token_budget
from copygram.decode.policies import Policy
from copygram.decode.program_reader import OpReader
from copygram.decode.prompt import PromptBuilder
from copygram.decode.unchanged import Retry, UnchangedBlocks
from copygram.errors import DocumentError, GenerationError, LengthError
from copygram.language.resolve import resolve
from copygram.language.search_replace import SEARCH_REPLACE
from copygram.language.search_replace import parse as parse_blocks_program
from copygram.language.syntaxes import DEFAULT_SYNTAX, get_syntax
from copygram.language.types import LineRange

if TYPE_CHECKING:
    from copygram.backends.base import Backend, Logits
    from copygram.constraints import Constraint


class DraftSource(Protocol):
    """Where drafts come from (:class:`~copygram.decode.drafting.Drafter`, or a mode's own)."""

    def propose(self, program: str, context: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing ``program``; ``context`` is every token after the prompt, the
        ``feed`` tokens the verifying forward appends before the draft included."""
        ...

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        """Whether to splice the copy ``draft`` closes in the forward that verifies it."""
        ...

    def feedback(self, draft: Draft, accepted: int) -> None: ...


@dataclass(frozen=True)
class EditPlan:
    """What the loop needs from a session, for every edit."""

    backend: Backend
    token_bytes: Sequence[bytes]
    prompt_builder: PromptBuilder
    engine: str = "llguidance"
    syntax: str = DEFAULT_SYNTAX
    max_new_tokens: int | None = None  # None: decode.guards.token_budget derives it
    splice_forced: bool = True
    draft: DraftConfig = field(default_factory=DraftConfig)
    ordered_copies: bool = True  # the order guard: each copy starts after the previous one
    copy_to_end: bool = False  # the program ends only after a copy of the last line
    verify_copies: bool = False  # cut a copy where the model would not write its next line
    merge_retyped: bool = False  # search/replace: a replacement's retyped neighbours join its run
    search_plan: bool = False  # search/replace: the program opens with a "Plan:" line
    search_scope: str = "lines"  # search/replace: "head" blocks name a unit by its first line
    retry_unchanged: bool = False  # search/replace: a block that changes nothing is written again
    tie_tolerance: float | None = None  # None: the backend's BatchProfile.step_tolerance

    @property
    def heads(self) -> bool:
        """Search/replace blocks name a unit by its first line (``search_scope = "head"``)."""
        return self.search_scope == "head"


class Meter(Forwards):
    """The per-edit plumbing of the decode loop: choosing under the constraint, consuming,
    forwarding (:class:`~copygram.decode.forwards.Forwards`), with timings.

    It keeps the byte offset of the program text consumed so far, which each
    :class:`~copygram.decode.events.GenTokenEvent` carries."""

    def __init__(self, backend: Backend, constraint: Constraint, lines: Sequence[str],
                 policy: Policy, token_bytes: Sequence[bytes],
                 tie_tolerance: float | None = None) -> None:
        super().__init__(backend, policy, tie_tolerance)
        self.constraint, self.lines = constraint, lines
        self.written = 0  # bytes of program text consumed
        self.program_ids: list[int] = []  # the program's tokens, in the order consumed
        self.verify_copies = False  # copy_check: cut copies where the model disagrees
        self._token_bytes = token_bytes
        self._copy_cache: dict[tuple[int, int], list[int]] = {}
        self._repeats = RepeatGuard()
        # retry_unchanged: the choices inside replacements, and the blocks that change nothing.
        self.unchanged: UnchangedBlocks | None = None

    def _allowed(self) -> npt.NDArray[np.bool_]:
        tick = time.perf_counter()
        allowed = self.constraint.allowed()
        self.stats.constraint_s += time.perf_counter() - tick
        return allowed

    def choose(self, logits: Logits) -> int:
        allowed = self._allowed()
        token = self.policy.choose(logits, allowed)
        self._note(token, logits, allowed)
        return token

    def choose_batched(self, logits: Logits,
                       restep: Callable[[], Logits]) -> tuple[int, Logits]:
        """Choose from a row of a multi-token forward, re-deciding a near-tie over the allowed
        tokens with ``restep()`` (:meth:`~copygram.decode.forwards.Forwards.decide`)."""
        allowed = self._allowed()
        token, logits = self.decide(logits, allowed, restep)
        self._note(token, logits, allowed)
        return token, logits

    def _note(self, token: int, logits: Logits, allowed: npt.NDArray[np.bool_]) -> None:
        if self.unchanged is not None:
            tick = time.perf_counter()
            self.unchanged.note(self.constraint.program_bytes, len(self.program_ids), token,
                                logits, allowed)
            self.stats.constraint_s += time.perf_counter() - tick

    def consume(self, token: int) -> LineRange | None:
        tick = time.perf_counter()
        closed = self.constraint.consume(token)
        self.stats.constraint_s += time.perf_counter() - tick
        data = self._token_bytes[token]
        self.written += len(data)
        self.program_ids.append(token)
        self.policy.advance(token)
        repeated = self._repeats.feed(data)
        if repeated is not None:
            raise self.error(
                f"the model wrote the line {repeated.decode('utf-8', 'replace')!r} "
                f"{self._repeats.limit} times in a row: it is looping")
        return closed

    def retract(self, n_tokens: int) -> None:
        """Take the last ``n_tokens`` program tokens back out of the constraint, the byte count,
        the repeat guard (read again from the program kept: O(program)) and the choices
        ``retry_unchanged`` keeps; not out of the KV cache: the caller truncates it."""
        taken = self.program_ids[len(self.program_ids) - n_tokens:]
        del self.program_ids[len(self.program_ids) - n_tokens:]
        self.constraint.rollback(n_tokens)
        self.written -= sum(len(self._token_bytes[t]) for t in taken)
        self._repeats = RepeatGuard(self._repeats.limit)
        self._repeats.feed(self.constraint.program_bytes)
        if self.unchanged is not None:
            self.unchanged.forget(len(self.program_ids))

    @property
    def token_bytes_of(self) -> Sequence[bytes]:
        """Every token's bytes, by id."""
        return self._token_bytes

    def error(self, what: str, kind: type[GenerationError] = GenerationError) -> GenerationError:
        """A GenerationError for a run that cannot finish, with the partial program and stats."""
        return kind(
            f"{what}. The partial program is attached (copygram edit --show-program prints it); "
            "try a more specific instruction, a larger model (copygram models) or mode = "
            '"rewrite"',
            partial_program=self.constraint.program_text, stats=self.stats)

    def forced(self) -> list[int]:
        tick = time.perf_counter()
        forced = self.constraint.forced()
        self.stats.constraint_s += time.perf_counter() - tick
        return forced

    def token_event(self, token: int, *, drafted: bool = False) -> GenTokenEvent:
        """The event of ``token``, which is consumed next."""
        data = self._token_bytes[token]
        return GenTokenEvent(token, data.decode("utf-8", errors="replace"), drafted,
                             self.written, self.written + len(data))

    def copy_tokens(self, lines: LineRange) -> list[int]:
        """The copied lines' tokens, tokenized as one text (what the splice appends)."""
        key = (lines.start, lines.end)
        if key not in self._copy_cache:
            text = "".join(self.lines[lines.start - 1 : lines.end])
            self._copy_cache[key] = self.backend.tokenize(text)
        return self._copy_cache[key]

    def add_copy(self, lines: LineRange) -> CopyEvent:
        """Count a closed copy (the caller splices :meth:`copy_tokens`)."""
        n_tokens = len(self.copy_tokens(lines))
        self.stats.copy_ops += 1
        self.stats.spliced_tokens += n_tokens
        self.stats.copy_span_tokens.append(n_tokens)
        return CopyEvent(lines, n_tokens)

    def check_room(self, ids: Sequence[int]) -> None:
        if self.backend.n_tokens + len(ids) > self.backend.context_length:
            raise self.error(f"the edit filled the model's context (n_ctx="
                             f"{self.backend.context_length}) before its program ended",
                             LengthError)


@dataclass(frozen=True)
class Verdict:
    """How a draft fared: ``accepted`` draft tokens; ``appended``, the tokens now in the cache
    after the feed; ``logits`` for the next choice, which is ``pending`` already where the draft
    was rejected (the policy's choice from those logits, in place of the draft's token)."""

    accepted: int
    appended: list[int]
    logits: Logits
    pending: int | None
    # A copy the draft closed whose lines the caller still has to splice (``verify_copies``:
    # :func:`splice_copy` verifies them); ``logits`` are then those after the closing token.
    unspliced: LineRange | None = None


def verify_draft(meter: Meter, feed: list[int], draft: Draft,
                 source: DraftSource) -> Generator[Event, None, Verdict]:
    """Append ``feed`` and ``draft`` in one forward, with logits before each draft token and
    after the last one, and accept the draft's tokens while the policy chooses them too. Yields
    their events (and a :class:`CopyEvent` where one closes a copy); returns the
    :class:`Verdict`. The cache is left holding the feed, the accepted tokens and, where a copy
    closed, its lines: nothing rejected.

    A draft that closes a copy may carry the copied lines in the same forward
    (``source.with_content``); that holds only where the draft ends exactly at the close it
    announced. Where a copy closes anywhere else (a draft token before the last one closes it,
    or a draft that did not announce it) the rest of the forward is dropped and the lines are
    spliced after the closing token."""
    backend = meter.backend
    copy_ids = meter.copy_tokens(draft.closes) if draft.closes else []
    content = (bool(copy_ids) and not meter.verify_copies
               and source.with_content(draft, len(copy_ids)))
    ids = feed + draft.tokens + (copy_ids if content else [])
    meter.check_room(ids)
    rows = [len(feed) - 1 + t for t in range(len(draft.tokens))] + [len(ids) - 1]
    base = backend.n_tokens
    verified = meter.forward_rows(ids, rows)
    accepted, pending, closed = 0, None, None
    for t, drafted in enumerate(draft.tokens):
        row = len(feed) - 1 + t

        def restep(row: int = row) -> Logits:
            return meter.restep_at(base, ids, row)

        batched = verified[t]
        choice, logits = meter.choose_batched(batched, restep)
        if logits is not batched:
            # Re-decided in a one-token step: the cache now ends at ids[row], and the choice is
            # the next token to consume, drafted or not.
            source.feedback(draft, accepted)
            return Verdict(accepted, ids[len(feed):row + 1], logits, choice)
        if choice != drafted:
            pending = choice
            break
        accepted += 1
        meter.stats.drafted_tokens += 1
        yield meter.token_event(drafted, drafted=True)
        closed = meter.consume(drafted)
        if closed is not None:
            break
    source.feedback(draft, accepted)
    keep = len(feed) + accepted
    if closed is not None and meter.verify_copies:
        if keep < len(ids):
            backend.truncate(base + keep)
        return Verdict(accepted, ids[len(feed):keep], verified[accepted], None,
                       unspliced=closed)
    if closed is not None:
        yield meter.add_copy(closed)
        if content and closed == draft.closes and accepted == len(draft.tokens):
            return Verdict(accepted, ids[len(feed):], verified[-1], None)
        if keep < len(ids):
            backend.truncate(base + keep)
        copied = meter.copy_tokens(closed)
        meter.check_room(copied)
        return Verdict(accepted, ids[len(feed):keep] + copied, meter.forward(copied), None)
    if pending is not None:
        backend.truncate(base + keep)
        return Verdict(accepted, ids[len(feed):keep], verified[accepted], pending)
    if content:
        # Every token accepted, yet the copy the draft announced did not close: its lines must
        # not stay in the cache, and the logits after the last draft token are wanted.
        backend.truncate(base + keep - 1)
        return Verdict(accepted, ids[len(feed):keep], meter.forward(ids[keep - 1 : keep]), None)
    return Verdict(accepted, ids[len(feed):], verified[-1], None)


def splice_copy(meter: Meter, context: list[int], feed: list[int], closed: LineRange,
                reader: OpReader) -> Generator[Event, None, Logits]:
    """Append ``feed`` (program tokens not yet in the cache, ending with the token that closed
    the copy) and the lines of the copy ``closed`` in one forward, checking the model's own
    choices at the start of each copied line (:mod:`copygram.decode.copy_check`). Where it would
    have written a line otherwise, the copy is cut before that line: the tag's end number is
    taken back (a :class:`RetractEvent`) and rewritten, and the lines kept are spliced again.
    ``context`` (every token after the prompt) grows by what the cache gains; returns the
    logits after it. Costs one forward, plus one where a cut is made."""
    copied = meter.copy_tokens(closed)
    ids = feed + copied
    meter.check_room(ids)
    checks = copy_checks(copied, meter.token_bytes_of, meter.lines, closed, len(feed))
    base = meter.backend.n_tokens
    if not checks:
        yield meter.add_copy(closed)
        context += ids
        return meter.forward(ids)
    verified = meter.forward_rows(ids, [check.row for check in checks] + [len(ids) - 1])
    cut = first_disagreement(checks, verified[:-1])
    rewrite = _retag(meter, reader, closed, cut) if cut is not None else None
    if cut is None or rewrite is None:
        yield meter.add_copy(closed)
        context += ids
        after: Logits = verified[-1]
        return after
    kept = LineRange(closed.start, cut - 1)
    n_back, missing = rewrite
    meter.retract(n_back)
    start = meter.written
    # The retracted tokens that were already in the cache before this forward go too.
    in_feed = min(n_back, len(feed))
    earlier = n_back - in_feed
    meter.backend.truncate(base - earlier)
    del context[len(context) - earlier:]
    reader.retract(start)
    yield RetractEvent(start)
    retag = meter.backend.tokenize(missing)
    closed_now = None
    for token in retag:
        if not meter.constraint.allowed()[token]:
            raise meter.error("verify_copies: the shortened copy tag is not allowed here (a "
                              "bug: please report it)")
        closed_now = meter.consume(token)
    if closed_now != kept:
        raise meter.error("verify_copies: the shortened copy tag did not close the copy (a "
                          "bug: please report it)")
    meter.stats.forced_tokens += len(retag)
    meter.stats.cut_copies += 1
    yield meter.add_copy(kept)
    ids = feed[: len(feed) - in_feed] + retag + meter.copy_tokens(kept)
    meter.check_room(ids)
    context += ids
    return meter.forward(ids)


def _retag(meter: Meter, reader: OpReader, closed: LineRange,
           cut: int) -> tuple[int, str] | None:
    """How to rewrite the tag of ``closed`` (the last thing in the program) to end before line
    ``cut``: the program tokens to take back and the text to write instead; ``None`` where the
    tokens taken back would end inside a UTF-8 character (the copy is then kept)."""
    syntax, program = reader.syntax, meter.constraint.program_bytes
    old_tag = syntax.render_copy(closed.start, closed.end).encode()
    new_tag = syntax.render_copy(closed.start, cut - 1).encode()
    same = next((i for i, (a, b) in enumerate(zip(old_tag, new_tag, strict=False)) if a != b),
                min(len(old_tag), len(new_tag)))
    n_back, dropped = 0, 0
    while dropped < len(old_tag) - same:
        n_back += 1
        dropped += len(meter.token_bytes_of[meter.program_ids[-n_back]])
    target = program[: len(program) - len(old_tag)] + new_tag
    try:
        return n_back, target[len(program) - dropped:].decode("utf-8")
    except UnicodeDecodeError:
        return None


def take_back(meter: Meter, context: list[int], retry: Retry,
              drafter: DraftSource | None) -> RetractEvent:
    """Take the program back to its token ``retry.index`` (``retry_unchanged``: a block that
    changed nothing is written again from there, :mod:`copygram.decode.unchanged`): out of the
    constraint, the KV cache, ``context`` and the drafter. Search/replace programs only, whose
    context is their program tokens. Costs no forward."""
    if len(context) != len(meter.program_ids):
        raise meter.error("retry_unchanged: the context is not the program (a bug: please "
                          "report it)")
    n_back = len(meter.program_ids) - retry.index
    meter.retract(n_back)
    meter.backend.truncate(meter.backend.n_tokens - n_back)
    del context[len(context) - n_back:]
    if isinstance(drafter, BlockDrafter):
        drafter.rewind(len(context))
    meter.stats.unchanged_retries += 1
    return RetractEvent(meter.written)


def prefill(backend: Backend, prompt_ids: list[int]) -> tuple[Logits, int]:
    """Splice the prompt, reusing whatever prefix of it the cache already holds (the system
    message and worked example are the same for every edit). Returns the logits after it and
    how many tokens the splice appended."""
    cached = backend.cached_ids
    common = 0
    limit = min(len(cached), len(prompt_ids) - 1)  # splice at least one token for logits
    while common < limit and cached[common] == prompt_ids[common]:
        common += 1
    backend.truncate(common)
    return backend.splice(prompt_ids[common:]), len(prompt_ids) - common


def prompt_ids(plan: EditPlan, document: str, instruction: str) -> list[int]:
    prompt = plan.prompt_builder.build(document, instruction, plan.backend)
    return plan.backend.tokenize(prompt, special=True)


def check_fits(backend: Backend, prompt: Sequence[int], document: EditDocument) -> None:
    # The copied lines land in the context too, so the edited document needs about as many
    # tokens as the original, plus markup.
    room = len(document.tokens) + 64
    if len(prompt) + room > backend.context_length:
        raise DocumentError(
            f"the document does not fit the model's context by "
            f"{len(prompt) + room - backend.context_length} tokens: the prompt takes "
            f"{len(prompt)} tokens and the edit needs about {room} more, but n_ctx is "
            f"{backend.context_length}, which holds a document of about "
            f"{max(0, (backend.context_length - 64 - len(prompt) + len(document.tokens)) // 2)} "
            f"tokens (this one has {len(document.tokens)}); edit a smaller part of it. A config "
            "that sets n_ctx below the model's trained context may raise it; unset, n_ctx is the "
            "trained context (at most 32768) and never goes past it, so a longer document needs "
            "a model trained on a longer context"
        )


def budget_error(meter: Meter, budget: Budget, document: EditDocument) -> GenerationError:
    """The error of a run that spent ``budget``: a :class:`LengthError` where the caller's
    ``max_new_tokens`` or the context set it, a failure where the default did."""
    if budget.bound == "default":
        return meter.error(f"no complete program within {budget.tokens} tokens (the budget for "
                           f"a document of {len(document.tokens)} tokens): the model is most "
                           "likely repeating itself")
    where = "max_new_tokens" if budget.bound == "max_new_tokens" else "the room left in n_ctx"
    return meter.error(f"no complete program within {budget.tokens} tokens ({where})",
                       LengthError)


def constraint_accepts_end(constraint: Constraint, token: int) -> bool:
    """Whether ``token`` is the constraint's own end-of-program token."""
    return token == constraint.eos_token_id and constraint.done


MakeDrafter = Callable[[EditDocument, OpReader | None], DraftSource | None]
"""A drafter for an edit, given the loop's :class:`OpReader` (``None`` for search/replace
blocks, which are read once complete)."""


def stream_edit(plan: EditPlan, document: EditDocument, instruction: str,
                policy: Policy) -> Iterator[Event]:
    """One edit of ``document``: the prompt, the room check, the drafter, then :func:`run`."""
    if not document.lines:
        raise DocumentError(
            "the document is empty: there is nothing to copy, so Copy-as-Decode does not apply; "
            "generate the text directly instead"
        )
    prompt = prompt_ids(plan, document.text, instruction)
    check_fits(plan.backend, prompt, document)

    def drafter(doc: EditDocument, reader: OpReader | None) -> DraftSource | None:
        if not plan.draft.max_tokens:
            return None
        if reader is None:  # search/replace blocks
            return BlockDrafter(doc.lines, plan.backend.tokenize, plan.token_bytes, plan.draft,
                                plan.backend.batch_profile, heads=plan.heads,
                                instruction=instruction)
        return Drafter(doc.lines, plan.backend.tokenize, plan.token_bytes, plan.draft,
                       plan.syntax, plan.backend.batch_profile, instruction,
                       document_tokens=(doc.gen_tokens(get_syntax(plan.syntax).escape)
                                        if plan.draft.gen else None),
                       reader=reader)

    yield from run(plan, document, prompt, policy, drafter)


def document_constraint(plan: EditPlan,
                        lines: Sequence[str]) -> tuple[Constraint, OpReader | None]:
    """A fresh constraint of ``plan``'s syntax for the document ``lines``, and the reader of its
    copy tags (``None`` for search/replace blocks, read once they are complete). Costs: the
    grammar's (milliseconds, cached per document or line count), and on a backend's first call
    its vocabulary view (:func:`prepare`)."""
    if plan.syntax == SEARCH_REPLACE:
        from copygram.constraints.search_replace import search_replace_constraint

        return search_replace_constraint(lines, plan.backend, plan.search_plan,
                                         heads=plan.heads), None
    from copygram.constraints import compile_constraint

    return (compile_constraint(lines, plan.backend, engine=plan.engine, syntax=plan.syntax,
                               ordered=plan.ordered_copies, to_end=plan.copy_to_end),
            OpReader(get_syntax(plan.syntax)))


def prepare(plan: EditPlan) -> None:
    """Build now what the first edit with ``plan`` would build once per model: the constraint
    engine's view of the vocabulary and the token sets its guards use (~1.4 s for Qwen2.5's
    151k tokens on a 2-core CPU, ~0.4 s for SmolLM2's 49k), by compiling the constraint of a
    one-line document. Every later edit's constraint costs milliseconds."""
    document_constraint(plan, ["x\n"])


def run(plan: EditPlan, document: EditDocument, prompt: list[int], policy: Policy,
        make_drafter: MakeDrafter | None = None) -> Iterator[Event]:
    """The decode loop over ``prompt`` for ``document``; the last event is a DoneEvent."""

    backend = plan.backend
    started = time.perf_counter()
    constraint, reader = document_constraint(plan, document.lines)
    drafter = make_drafter(document, reader) if make_drafter is not None else None
    meter = Meter(backend, constraint, document.lines, policy, plan.token_bytes,
                  plan.tie_tolerance)
    meter.verify_copies = plan.verify_copies
    if plan.retry_unchanged and plan.syntax == SEARCH_REPLACE and policy.greedy:
        # Greedy only: a teacher's program is given, a sampled block is a draw to keep.
        meter.unchanged = UnchangedBlocks(document.lines, plan.token_bytes,
                                          backend.eos_token_ids, heads=plan.heads,
                                          merge=plan.merge_retyped)
    stats = meter.stats
    stats.constraint_s += time.perf_counter() - started
    stats.prompt_tokens = len(prompt)
    budget = token_budget(document, len(prompt), backend.context_length, plan.max_new_tokens)

    tick = time.perf_counter()
    logits, spliced = prefill(backend, prompt)
    meter.last_batched = spliced > 1
    stats.cached_prompt_tokens = len(prompt) - spliced
    stats.prefill_s = time.perf_counter() - tick

    gen_started = time.perf_counter()
    eos_ids = backend.eos_token_ids
    context: list[int] = []  # every token after the prompt: program tokens and copies
    pending: int | None = None  # a token already chosen from a verification forward
    while True:
        if meter.unchanged is not None:
            tick = time.perf_counter()
            retry = meter.unchanged.retry(constraint.program_bytes)
            stats.constraint_s += time.perf_counter() - tick
            if retry is not None:
                yield take_back(meter, context, retry, drafter)
                pending = retry.token
        if pending is None and meter.last_batched:
            token, logits = meter.choose_batched(logits, meter.restep_last)
        elif pending is None:
            token = meter.choose(logits)
        else:
            token, pending = pending, None
        if token in eos_ids or constraint_accepts_end(constraint, token):
            break
        # The program as it stands: tokens taken back (a cut copy, a block written again) and
        # written anew count once.
        if len(meter.program_ids) >= budget.tokens:
            raise budget_error(meter, budget, document)
        stats.decoded_tokens += 1
        yield meter.token_event(token)
        feed = [token]
        closed = meter.consume(token)
        while plan.splice_forced and closed is None and (forced := meter.forced()):
            for forced_token in forced:
                feed.append(forced_token)
                stats.forced_tokens += 1
                closed = meter.consume(forced_token)
                if closed is not None:
                    break
        if closed is not None and plan.verify_copies and reader is not None:
            logits = yield from splice_copy(meter, context, feed, closed, reader)
            continue
        if closed is not None:
            yield meter.add_copy(closed)
            feed += meter.copy_tokens(closed)
        context += feed

        draft = drafter.propose(constraint.program_text, context, len(feed)) if drafter else None
        if draft is None or drafter is None:
            meter.check_room(feed)
            logits = meter.forward(feed)
            continue
        verdict = yield from verify_draft(meter, feed, draft, drafter)
        context += verdict.appended
        logits, pending = verdict.logits, verdict.pending
        if verdict.unspliced is not None and reader is not None:
            logits = yield from splice_copy(meter, context, [], verdict.unspliced, reader)

    program_text = constraint.program_text
    program = (reader.program(program_text) if reader is not None
               else parse_blocks_program(program_text, document.lines,
                                         merge=plan.merge_retyped,
                                         heads=plan.heads))
    text = resolve(program, document.lines)
    stats.gen_ops = len(program) - len(program.copies())
    stats.output_tokens = len(backend.tokenize(text)) if text else 0
    stats.wall_s = time.perf_counter() - gen_started
    yield DoneEvent(EditResult(text=text, program=program, program_text=program_text,
                               stats=stats))


__all__ = ["DraftSource", "EditPlan", "Meter", "Verdict", "check_fits", "constraint_accepts_end",
           "document_constraint", "prefill", "prepare", "prompt_ids", "run", "splice_copy",
           "stream_edit", "take_back", "verify_draft"]
