"""The decode loop, one for every mode: constrained Copy-as-Decode with splicing and verified
drafts for edit programs, and the same loop over plain text for rewrites and chat completions.

Per step: mask the logits with the run's constraint, choose a token (a
:class:`~copygram.decode.policies.Policy`: the model's choice or a teacher's), consume it, append
the tokens the grammar forces next, and when a copy op closes append the tokens of the copied
lines. Everything appended after one choice goes into the KV cache in **one** forward pass (a
splice), so a copy of N tokens costs one forward instead of N. A draft source may guess the next
tokens; :func:`~copygram.decode.verify.verify_draft` checks them in the forward that appends the
feed and keeps the longest prefix the policy would have taken anyway, so the output is that of
step-by-step decoding. Plain text is this loop with an all-allowing constraint
(:class:`~copygram.constraints.free.FreeText`: nothing forced, no copies) and a drafter over the
text expected (:mod:`copygram.decode.plain_text`).

Batched rows are not bit-equal to one-token steps on every stack (llama.cpp's differ by up to
~0.6 in the top-2 margin), so a greedy choice read from a row of a multi-token forward whose
top-2 margin is within the backend's ``step_tolerance`` is re-decided from a one-token step at
that position (:meth:`~copygram.decode.forwards.Forwards.decide`; counted in
``RunStats.tie_steps``). Nothing that shapes a batch reads a clock, so the same input gives the
same output on every run.

:func:`run` is the loop over one prompt and one :class:`Job`; :func:`stream_edit` builds what a
program-mode edit needs (the prompt, the format's constraint and drafter) and runs it. Its
parts: :mod:`~copygram.decode.meter` (choosing, consuming, forwarding, the output text,
timings), :mod:`~copygram.decode.verify` (drafts, copies and blocks checked against the model),
:mod:`~copygram.decode.formats` (what differs by program format).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copygram.decode.budgets import Budget, RunawayGuard, token_budget
from copygram.decode.document import EditDocument
from copygram.decode.drafting import Draft, DraftSource
from copygram.decode.events import DoneEvent, EditResult, Event, StopReason
from copygram.decode.formats import decode_format
from copygram.decode.forwards import prefill
from copygram.decode.meter import Meter
from copygram.decode.policies import Policy
from copygram.decode.program_reader import OpReader
from copygram.decode.prompt import ADDITION_ADVICE
from copygram.decode.setup import EditSetup
from copygram.decode.stats import RunStats
from copygram.decode.unchanged import UnchangedBlocks
from copygram.decode.verify import close_ran_away, splice_copy, take_back, verify_draft
from copygram.errors import DocumentError, GenerationError, LengthError
from copygram.language.focus import focus_view
from copygram.language.formats import get_format
from copygram.language.parsers import LANGUAGES
from copygram.language.reading import NOTHING, Reading, read_edit
from copygram.language.resolve import resolve

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.constraints import Constraint
    from copygram.decode.text import LineEnd


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


def budget_error(meter: Meter, budget: Budget, document: EditDocument,
                 reason: StopReason) -> GenerationError:
    """The error of a program that spent ``budget`` (``reason`` ``"max_tokens"``) or filled the
    context (``"context"``) before its end: a :class:`LengthError` where the caller's ``max_new_tokens`` or
    the context set the limit, a failure where the default did."""
    if reason == "context":
        return meter.error(f"the edit filled the model's context (n_ctx="
                           f"{meter.backend.context_length}) before its program ended",
                           LengthError)
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


@dataclass(frozen=True)
class Job:
    """What one run of the loop writes, and how far it may go. An edit program: the document's
    constraint, its ``lines`` (which copies splice), the format's ``reader`` and drafter, a
    repeat guard, and a ``budget`` it must end within (else ``on_budget``'s error). Plain text:
    a :class:`~copygram.constraints.free.FreeText` constraint, a drafter over the expected text,
    stop strings, and ``ends``, which makes each run's end rule (a rewrite's closing fence); it
    may end anywhere, so its budget ends it (``on_budget`` ``None``)."""

    constraint: Constraint
    budget: Budget
    lines: Sequence[str] = ()
    reader: OpReader | None = None
    drafter: DraftSource | None = None
    stop: Sequence[str] = ()
    ends: Callable[[], LineEnd] | None = None
    guard_repeats: bool = True
    unchanged: UnchangedBlocks | None = None
    on_budget: Callable[[Meter, StopReason], GenerationError] | None = None
    touch_ranges: int = 0  # the ranges the constraint holds a block to reach (RunStats)
    runaway: RunawayGuard | None = None  # head blocks: a replacement retyping the file stops


@dataclass(frozen=True)
class Output:
    """What a run wrote: ``text`` (cut before a stop string), ``raw`` (every byte consumed),
    ``token_ids`` (what the output kept: chosen, forced and drafted tokens; no EOS), why it
    stopped, its stats, and ``tail``: the text no event released yet."""

    text: str
    raw: str
    token_ids: tuple[int, ...]
    stop_reason: StopReason
    stats: RunStats
    tail: str


def stream_edit(setup: EditSetup, document: EditDocument, instruction: str,
                policy: Policy, language: str | None = None,
                reading: Reading | None = None) -> Iterator[Event]:
    """One edit of ``document`` in program mode: the prompt, the room check, the format's
    constraint and drafter (:func:`edit_job`; ``language``: the document's, which finds the
    definitions the instruction names; ``reading``: the edit's
    :func:`~copygram.language.reading.read_edit`, read here where ``None``), then
    :func:`run_edit`."""
    if not document.lines:
        raise DocumentError(
            "the document is empty: there is nothing to copy, so Copy-as-Decode does not apply; "
            "generate the text directly instead"
        )
    reading = edit_reading(document, instruction, language, reading)
    prompt = prompt_ids(setup, prompt_document(setup, document, instruction, language, reading),
                        prompt_instruction(setup, document, instruction, language, reading))
    check_fits(setup.backend, prompt, document)
    tick = time.perf_counter()
    job = edit_job(setup, document, instruction, policy, len(prompt), language, reading)
    yield from run_edit(setup, document, prompt, policy, job, time.perf_counter() - tick)


def edit_reading(document: EditDocument, instruction: str, language: str | None,
                 reading: Reading | None = None) -> Reading:
    """``reading``, or the instruction read against ``document`` now
    (:func:`~copygram.language.reading.read_edit`; nothing targeted where ``language`` is
    ``None``: a teacher's replay). Milliseconds."""
    if reading is not None:
        return reading
    return NOTHING if language is None else read_edit(document.text, instruction, language)


def prompt_document(setup: EditSetup, document: EditDocument, instruction: str,
                    language: str | None, reading: Reading | None = None) -> str:
    """The document as a program-mode prompt shows it: with search/replace blocks, a document of
    more than ``focus_tokens`` tokens whose instruction targets its definitions is shown as a
    view of them (:func:`~copygram.language.focus.focus_view`; the blocks name lines by their
    content, so the program is read against the whole document all the same); any other, whole,
    and so is every document under ``prompt_order = "document_first"``, an order chosen so that
    the next edit reuses the document's KV, which a view made for each instruction would not
    give. Milliseconds."""
    options = setup.options
    if (language is None or not 0 < options.focus_tokens < len(document.tokens)
            or options.prompt_order == "document_first"
            or get_format(options.syntax).family != "blocks"):
        return document.text
    view = focus_view(document.text, instruction, language,
                      reading=edit_reading(document, instruction, language, reading))
    return document.text if view is None else view.text


def prompt_instruction(setup: EditSetup, document: EditDocument, instruction: str,
                       language: str | None, reading: Reading | None = None) -> str:
    """The instruction as a program-mode prompt gives it: with head blocks, an edit that adds a
    unit (:func:`~copygram.language.additions.addition_places`) is told how a block adds one
    (:data:`~copygram.decode.prompt.ADDITION_ADVICE`); any other, as it is."""
    if (not setup.heads or language is None
            or not edit_reading(document, instruction, language, reading).places):
        return instruction
    return f"{instruction}\n{ADDITION_ADVICE}"


def edit_job(setup: EditSetup, document: EditDocument, instruction: str, policy: Policy,
             prompt_tokens: int, language: str | None = None,
             reading: Reading | None = None) -> Job:
    """The loop's job for a program-mode edit of ``document`` after a prompt of
    ``prompt_tokens``: the format's constraint, reader and drafter, the budget
    (:func:`~copygram.decode.budgets.token_budget`), the repeat guard, with heads the runaway
    guard (:class:`~copygram.decode.budgets.RunawayGuard`) and, with ``retry_unchanged`` and a
    greedy policy, the blocks that change nothing (a block written again over a definition the
    instruction asks to remove retries as the removal, where the model ranked it). With
    ``touch_named`` and a ``language``, where the instruction targets definitions of the
    document (:func:`~copygram.language.targets.named_reach`), the constraint holds the
    program to reach one (each of those it lists together): a program that misses one is a
    miss, redone in rewrite mode (:mod:`copygram.decode.checked`), so the constraint takes
    away only programs that would be thrown away; a rename's blocks are held to its definition
    and uses (:func:`~copygram.language.targets.rename_scope`). ``None`` (a teacher's replay)
    leaves the program free."""
    backend, options = setup.backend, setup.options
    program_format = decode_format(options)
    reading = edit_reading(document, instruction, language, reading)
    held = options.touch_named and language is not None
    touch = reading.reach if held else ()
    only = reading.scope if held else ()
    constraint, reader = program_format.constraint(setup, document.lines, touch, only)
    unchanged = None
    if options.retry_unchanged and policy.greedy:
        # Greedy only: a teacher's program is given, a sampled block is a draw to keep (and
        # only blocks take the option: copygram.language.formats).
        unchanged = UnchangedBlocks(document.lines, setup.token_bytes, backend.eos_token_ids,
                                    heads=setup.heads, merge=options.merge_retyped,
                                    removing=reading.removing, language=language,
                                    adding=reading.places, added=reading.added)
    budget = token_budget(document, prompt_tokens, backend.context_length,
                          options.max_new_tokens)

    def on_budget(meter: Meter, reason: StopReason) -> GenerationError:
        return budget_error(meter, budget, document, reason)

    return Job(constraint, budget, document.lines, reader,
               program_format.drafter(setup, document, instruction, constraint, reader),
               unchanged=unchanged, on_budget=on_budget, touch_ranges=sum(map(len, touch)),
               runaway=(RunawayGuard(document.lines, fences=language in LANGUAGES)
                        if setup.heads else None))


def run_edit(setup: EditSetup, document: EditDocument, prompt: list[int], policy: Policy,
             job: Job, setup_s: float = 0.0) -> Iterator[Event]:
    """:func:`run` ``job`` (an :func:`edit_job`), then read the program and resolve it against
    ``document``: the last event is a :class:`DoneEvent` with the :class:`EditResult`.
    ``setup_s``: time spent building the job, counted as constraint time."""
    output = yield from run(setup, prompt, policy, job)
    stats = output.stats
    stats.constraint_s += setup_s
    program = decode_format(setup.options).program(output.raw, document.lines, job.reader)
    text = resolve(program, document.lines)
    stats.gen_ops = len(program) - len(program.copies())
    stats.output_tokens = len(setup.backend.tokenize(text)) if text else 0
    yield DoneEvent(EditResult(text=text, program=program, program_text=output.raw,
                               stats=stats), output.tail)


def prepare(setup: EditSetup) -> None:
    """Build now what the first edit with ``setup`` would build once per model: the constraint
    engine's view of the vocabulary and the token sets its guards use (~1.4 s for Qwen2.5's
    151k tokens on a 2-core CPU, ~0.4 s for SmolLM2's 49k), by compiling the constraint of a
    one-line document. Every later edit's constraint costs milliseconds."""
    decode_format(setup.options).constraint(setup, ["x\n"])


def run(setup: EditSetup, prompt: list[int], policy: Policy,
        job: Job) -> Generator[Event, None, Output]:
    """The decode loop over ``prompt``: yields the prompt's prefill events, then the run's token,
    span, copy and retract events; returns its :class:`Output`. Raises ``job.on_budget``'s
    error where a run that must end on its end token reaches its budget or fills the context
    first."""
    backend, options, constraint, reader = setup.backend, setup.options, job.constraint, job.reader
    drafter, budget = job.drafter, job.budget
    meter = Meter(backend, constraint, job.lines, policy, setup.token_bytes,
                  options.tie_tolerance, stop=job.stop, end=job.ends and job.ends(),
                  guard_repeats=job.guard_repeats)
    meter.verify_copies = options.verify_copies and reader is not None
    meter.unchanged = job.unchanged
    meter.runaway = job.runaway
    stats = meter.stats
    stats.prompt_tokens = len(prompt)
    stats.touch_ranges = job.touch_ranges
    open_ended = job.on_budget is None  # plain text ends on its budget; a program cannot

    logits = yield from meter.prefill(prompt)

    gen_started = time.perf_counter()
    eos_ids = backend.eos_token_ids
    context: list[int] = []  # every token after the prompt: the output's and copies
    pending: int | None = None  # a token already chosen from a verification forward
    reason: StopReason | None = None
    while reason is None:
        if meter.ran_away is not None:
            # A head block typed the units after its own again: closed where they began.
            retracted, closing = close_ran_away(meter, context, drafter)
            yield retracted
            context += closing
            meter.check_room(closing)
            logits, pending = meter.forward(closing), None
            continue
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
            reason = "eos"
            break
        # The output as it stands: tokens taken back (a cut copy, a block written again) and
        # written anew count once.
        if len(meter.program_ids) >= budget.tokens:
            reason = "max_tokens"
            break
        stats.decoded_tokens += 1
        feed = [token]
        closed = meter.consume(token)
        yield meter.token_event(token)
        reason = _ended(meter, budget, open_ended, fed=False)
        if reason is not None:
            break
        while options.splice_forced and closed is None and (forced := meter.forced()):
            for forced_token in forced:
                feed.append(forced_token)
                stats.forced_tokens += 1
                closed = meter.consume(forced_token)
                if closed is not None:
                    break
        if closed is not None and meter.verify_copies and reader is not None:
            logits = yield from splice_copy(meter, context, feed, closed, reader)
            continue
        if closed is not None:
            yield meter.add_copy(closed)
            feed += meter.copy_tokens(closed)
        context += feed

        # Plain text's drafts stop at its budget and the context's room; a program's are not
        # cut (a draft may finish the program past its budget: only a token chosen there, not
        # the end, fails it; a draft past the context is a LengthError, meter.check_room).
        room = (min(budget.tokens - len(meter.program_ids),
                    backend.context_length - backend.n_tokens - len(feed))
                if open_ended else None)
        draft = (drafter.propose(context, len(feed))
                 if drafter and (room is None or room > 0) else None)
        if draft is None or not draft.tokens or drafter is None:
            meter.check_room(feed)
            logits = meter.forward(feed)
            continue
        if room is not None and len(draft.tokens) > room:
            # It no longer closes the copy it may have announced.
            draft = Draft(draft.tokens[:room], source=draft.source)
        verdict = yield from verify_draft(meter, feed, draft, drafter)
        context += verdict.appended
        logits, pending = verdict.logits, verdict.pending
        if verdict.unspliced is not None and reader is not None:
            logits = yield from splice_copy(meter, context, [], verdict.unspliced, reader)
        if pending is None:
            reason = _ended(meter, budget, open_ended, fed=True)

    if reason != "eos" and reason != "stop" and job.on_budget is not None:
        raise job.on_budget(meter, reason)
    raw, text = meter.text.finish()
    stats.wall_s = time.perf_counter() - gen_started
    return Output(text=text, raw=raw, token_ids=tuple(meter.program_ids), stop_reason=reason,
                  stats=stats, tail=meter.text.take())


def _ended(meter: Meter, budget: Budget, open_ended: bool, *, fed: bool) -> StopReason | None:
    """Why the run ends after the token just consumed, if it does: a stop string or end rule;
    plain text's budget; a token the full cache cannot take (``fed``: it is in the cache)."""
    if meter.text.stopped:
        return "stop"
    if open_ended and len(meter.program_ids) >= budget.tokens:
        return "max_tokens"
    if not fed and meter.backend.n_tokens + 1 > meter.backend.context_length:
        return "context"
    return None


__all__ = ["Job", "Output", "budget_error", "check_fits", "constraint_accepts_end", "edit_job",
           "edit_reading", "prefill", "prepare", "prompt_document", "prompt_ids",
           "prompt_instruction", "run", "run_edit", "stream_edit"]
