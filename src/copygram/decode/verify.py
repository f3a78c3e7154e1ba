"""Verifying what the loop did not decode itself, in every mode: :func:`verify_draft` checks a
draft in the forward that appends it and keeps the longest prefix the policy would have chosen
anyway (the one verifier of edit programs, rewrites and chat completions);
:func:`splice_copy` splices a copy and, with ``verify_copies``, cuts it where the model would
have written another line; :func:`take_back` takes a block that changed nothing back out
(``retry_unchanged``). Each keeps the KV cache holding exactly what the program kept."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copygram.decode.copy_check import copy_checks, first_disagreement
from copygram.decode.drafting import Draft, DraftSource
from copygram.decode.drafting.blocks import BlockDrafter
from copygram.decode.events import (
    Event,
    RetractEvent,
)
from copygram.decode.meter import Meter
from copygram.decode.program_reader import OpReader
from copygram.decode.unchanged import Retry
from copygram.errors import ConstraintError, RunawayError
from copygram.language.runaway import close_runaway
from copygram.language.types import LineRange

if TYPE_CHECKING:
    from copygram.backends.base import Logits


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
    after the last one, and accept the draft's tokens while the policy takes them too: a greedy
    policy's choice, re-decided from a one-token step where the row is a near-tie
    (:meth:`~copygram.decode.forwards.Forwards.decide`); a sampling policy's
    :meth:`~copygram.decode.policies.Policy.verify` (the model's distribution either way).
    Yields a :class:`SpanEvent` for the accepted tokens (and a :class:`CopyEvent` where one
    closes a copy); returns the :class:`Verdict`. The cache is left holding the feed, the
    accepted tokens and, where a copy closed, its lines: nothing rejected. A stop string the
    accepted tokens complete ends the span there (the caller ends the run).

    A draft that closes a copy may carry the copied lines in the same forward
    (``source.with_content``); that holds only where the draft ends exactly at the close it
    announced. Where a copy closes anywhere else (a draft token before the last one closes it,
    or a draft that did not announce it) the rest of the forward is dropped and the lines are
    spliced after the closing token."""
    backend, stats = meter.backend, meter.stats
    copy_ids = meter.copy_tokens(draft.closes) if draft.closes else []
    content = (bool(copy_ids) and not meter.verify_copies
               and source.with_content(draft, len(copy_ids)))
    ids = feed + draft.tokens + (copy_ids if content else [])
    meter.check_room(ids)
    rows = [len(feed) - 1 + t for t in range(len(draft.tokens))] + [len(ids) - 1]
    base, start = backend.n_tokens, meter.written
    verified = meter.forward_rows(ids, rows)
    accepted, pending, closed, re_decided = 0, None, None, None
    for t, drafted in enumerate(draft.tokens):
        row = len(feed) - 1 + t

        def restep(row: int = row) -> Logits:
            return meter.restep_at(base, ids, row)

        batched = verified[t]
        if meter.policy.greedy:
            choice, logits = meter.choose_batched(batched, restep)
            if logits is not batched:
                # Re-decided in a one-token step: the cache now ends at ids[row], and the
                # choice is the next token to consume, drafted or not.
                re_decided = Verdict(accepted, ids[len(feed):row + 1], logits, choice)
                break
        else:
            choice = meter.verify(batched, drafted)
        if choice != drafted:
            pending = choice
            break
        accepted += 1
        closed = meter.consume(drafted)
        if closed is not None or meter.text.stopped:
            break
    source.feedback(draft, accepted)
    stats.drafted_tokens += accepted
    stats.rejected_tokens += len(draft.tokens) - accepted
    if accepted:
        yield meter.span_event(draft.tokens[:accepted], draft.source, start)
    if re_decided is not None:
        return re_decided
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
    if pending is not None or keep < len(draft.tokens) + len(feed):
        # Rejected at ``pending``, or cut by a stop string: the cache keeps what was taken.
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
    start = meter.retract(n_back)
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
    start = _retract(meter, context, drafter, len(meter.program_ids) - retry.index)
    meter.stats.unchanged_retries += 1
    return RetractEvent(start)


def _retract(meter: Meter, context: list[int], drafter: DraftSource | None,
             n_back: int) -> int:
    """Take the last ``n_back`` program tokens out of the constraint, the KV cache, ``context``
    and the drafter (a program whose context is its tokens); the byte the text resumes from."""
    start = meter.retract(n_back)
    meter.backend.truncate(meter.backend.n_tokens - n_back)
    del context[len(context) - n_back:]
    if isinstance(drafter, BlockDrafter):
        drafter.rewind(len(context))
    return start


def close_ran_away(meter: Meter, context: list[int],
                   drafter: DraftSource | None) -> tuple[RetractEvent, list[int]]:
    """Close the head block the runaway guard saw run on (``meter.ran_away``) where the next
    unit began (:func:`~copygram.language.runaway.close_runaway`): take the program back to
    the last token boundary before the lines it retyped (out of the constraint, the KV cache,
    ``context`` and the drafter, as :func:`take_back` does), then consume the tokens of the
    rest of the closed block (the caller appends them in one forward). Returns the retract
    event and those tokens. Raises :class:`~copygram.errors.RunawayError` where the block does
    not close so (its retyped lines are not the document's), and the run ends; the session then
    redoes the edit. Costs no forward; O(program) to find the boundary."""
    fences = meter.runaway is not None and meter.runaway.fences
    closed = close_runaway(meter.constraint.program_text, meter.lines, fences=fences)
    if closed is None or len(context) != len(meter.program_ids):
        raise meter.error(f"{meter.ran_away}: it is retyping the file", RunawayError)
    written, target = meter.constraint.program_bytes, closed.encode()
    common = next((i for i, (a, b) in enumerate(zip(written, target, strict=False)) if a != b),
                  min(len(written), len(target)))
    ends = list(itertools.accumulate(len(meter.token_bytes_of[t]) for t in meter.program_ids))
    keep = bisect.bisect_right(ends, common)  # tokens that end at or before the common prefix
    while keep and target[ends[keep - 1]:ends[keep - 1] + 1] and (
            target[ends[keep - 1]] & 0xC0) == 0x80:
        keep -= 1  # a token that ends inside a character: the character is written again
    kept_bytes = ends[keep - 1] if keep else 0
    start = _retract(meter, context, drafter, len(meter.program_ids) - keep)
    meter.ran_away = None
    tokens = meter.backend.tokenize(target[kept_bytes:].decode())
    try:
        for token in tokens:
            meter.consume(token)
    except ConstraintError as exc:
        raise meter.error(f"the runaway block could not be closed ({exc})", RunawayError) from exc
    if meter.ran_away is not None:  # the closed program reads as running away still
        raise meter.error(f"{meter.ran_away}: it is retyping the file", RunawayError)
    meter.stats.runaway_closes += 1
    return RetractEvent(start), tokens


__all__ = ["Verdict", "close_ran_away", "splice_copy", "take_back", "verify_draft"]
