"""The decode loop: constrained Copy-as-Decode with splicing and verified drafts, on any backend.

Per step: mask the logits with the document's constraint, choose a token (a
:class:`~copygram.decode.policies.Policy`: the model's choice or a teacher's), consume it, append
the tokens the grammar forces next, and when a copy op closes append the tokens of the copied
lines. Everything appended after one choice goes into the KV cache in **one** forward pass (a
splice), so a copy of N tokens costs one forward instead of N. A draft source may guess the next
program tokens; :func:`~copygram.decode.verify.verify_draft` checks them in the forward that appends the feed and keeps the
longest prefix the policy would have chosen anyway, so the output is that of step-by-step decoding.

Batched rows are not bit-equal to one-token steps on every stack (llama.cpp's differ by up to
~0.6 in the top-2 margin), so a greedy choice read from a row of a multi-token forward whose
top-2 margin is within the backend's ``step_tolerance`` is re-decided from a one-token step at
that position (:meth:`~copygram.decode.forwards.Forwards.decide`, shared with plain text generation;
counted in ``RunStats.tie_steps``). Nothing that
shapes a batch reads a clock, so the same input gives the same output on every run.

:func:`run` is the loop over one prompt; :func:`stream_edit` builds everything an edit needs (the
document split and tokenized once, the prompt, the format's drafter) and runs it. The loop's
parts live by job: :mod:`~copygram.decode.meter` (choosing, consuming, forwarding, timings),
:mod:`~copygram.decode.verify` (drafts, copies and blocks checked against the model) and
:mod:`~copygram.decode.formats` (what differs by program format).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from copygram.decode.budgets import Budget, token_budget
from copygram.decode.document import EditDocument
from copygram.decode.drafting import DraftSource
from copygram.decode.events import DoneEvent, EditResult, Event
from copygram.decode.formats import decode_format
from copygram.decode.forwards import prefill
from copygram.decode.meter import Meter
from copygram.decode.policies import Policy
from copygram.decode.program_reader import OpReader
from copygram.decode.setup import EditSetup
from copygram.decode.unchanged import UnchangedBlocks
from copygram.decode.verify import splice_copy, take_back, verify_draft
from copygram.errors import DocumentError, GenerationError, LengthError
from copygram.language.resolve import resolve

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.constraints import Constraint


def prompt_ids(setup: EditSetup, document: str, instruction: str) -> list[int]:
    prompt = setup.prompt_builder.build(document, instruction, setup.backend)
    return setup.backend.tokenize(prompt, special=True)


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


def stream_edit(setup: EditSetup, document: EditDocument, instruction: str,
                policy: Policy) -> Iterator[Event]:
    """One edit of ``document``: the prompt, the room check, the drafter, then :func:`run`."""
    if not document.lines:
        raise DocumentError(
            "the document is empty: there is nothing to copy, so Copy-as-Decode does not apply; "
            "generate the text directly instead"
        )
    prompt = prompt_ids(setup, document.text, instruction)
    check_fits(setup.backend, prompt, document)
    program_format = decode_format(setup.options)

    def drafter(doc: EditDocument, reader: OpReader | None) -> DraftSource | None:
        return program_format.drafter(setup, doc, instruction, reader)

    yield from run(setup, document, prompt, policy, drafter)


def prepare(setup: EditSetup) -> None:
    """Build now what the first edit with ``setup`` would build once per model: the constraint
    engine's view of the vocabulary and the token sets its guards use (~1.4 s for Qwen2.5's
    151k tokens on a 2-core CPU, ~0.4 s for SmolLM2's 49k), by compiling the constraint of a
    one-line document. Every later edit's constraint costs milliseconds."""
    decode_format(setup.options).constraint(setup, ["x\n"])


def run(setup: EditSetup, document: EditDocument, prompt: list[int], policy: Policy,
        make_drafter: MakeDrafter | None = None) -> Iterator[Event]:
    """The decode loop over ``prompt`` for ``document``; the last event is a DoneEvent."""

    backend, options = setup.backend, setup.options
    started = time.perf_counter()
    program_format = decode_format(options)
    constraint, reader = program_format.constraint(setup, document.lines)
    drafter = make_drafter(document, reader) if make_drafter is not None else None
    meter = Meter(backend, constraint, document.lines, policy, setup.token_bytes,
                  options.tie_tolerance)
    meter.verify_copies = options.verify_copies
    if options.retry_unchanged and policy.greedy:
        # Greedy only: a teacher's program is given, a sampled block is a draw to keep (and
        # only blocks take the option: copygram.language.formats).
        meter.unchanged = UnchangedBlocks(document.lines, setup.token_bytes,
                                          backend.eos_token_ids, heads=setup.heads,
                                          merge=options.merge_retyped)
    stats = meter.stats
    stats.constraint_s += time.perf_counter() - started
    stats.prompt_tokens = len(prompt)
    budget = token_budget(document, len(prompt), backend.context_length, options.max_new_tokens)

    logits = meter.prefill(prompt)

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
        while options.splice_forced and closed is None and (forced := meter.forced()):
            for forced_token in forced:
                feed.append(forced_token)
                stats.forced_tokens += 1
                closed = meter.consume(forced_token)
                if closed is not None:
                    break
        if closed is not None and options.verify_copies and reader is not None:
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
    program = program_format.program(program_text, document.lines, reader)
    text = resolve(program, document.lines)
    stats.gen_ops = len(program) - len(program.copies())
    stats.output_tokens = len(backend.tokenize(text)) if text else 0
    stats.wall_s = time.perf_counter() - gen_started
    yield DoneEvent(EditResult(text=text, program=program, program_text=program_text,
                               stats=stats))


__all__ = ["MakeDrafter", "budget_error", "check_fits", "constraint_accepts_end", "prefill",
           "prepare", "prompt_ids", "run", "stream_edit"]
