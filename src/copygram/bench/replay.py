"""Teacher-forced replay, for the benchmarks: what a given program costs through a session's
decode loop, beside the cost of plain decoding (every output token one forward at a time after
the same prompt); and what a given rewrite costs through rewrite mode's loop
(:func:`replay_rewrite`). How a perfect model would run: the bench's upper bounds."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copygram.decode.document import EditDocument
from copygram.decode.events import Completion, DoneEvent, Event, count_markup_forwards
from copygram.decode.loop import prompt_ids, stream_edit
from copygram.decode.plain_text import check_prompt_fits, generate, prediction_source
from copygram.decode.policies import TeacherPolicy, TextTeacher
from copygram.decode.rewrite import edit_budget, file_end
from copygram.decode.stats import RunStats
from copygram.errors import ConfigError, GenerationError
from copygram.language.formats import get_format
from copygram.language.ops import Program
from copygram.language.resolve import resolve
from copygram.language.syntaxes import get_syntax

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.session import EditSession


@dataclass(frozen=True)
class ReplayResult:
    """Teacher-forced cost of a program (``copygram``) and of plain decoding (``plain``)."""

    text: str
    program: Program
    copygram: RunStats
    plain: RunStats | None

    @property
    def speedup(self) -> float:
        if self.plain is None:
            return float("nan")
        return self.copygram.speedup_over(self.plain)


def replay(session: EditSession, document: str, program: Program, *, instruction: str = "",
           measure_plain: bool = True) -> ReplayResult:
    """Teacher-force ``program`` through ``session``'s decode loop exactly as an edit would run
    it (the session's copy-tag syntax and prompt) and, with ``measure_plain``, measure
    :func:`plain_cost` of its output after the same prompt. The copygram stats include
    ``markup_forwards``, counted from the run's events."""
    setup = session.setup()
    if get_format(setup.options.syntax).family != "tags":
        raise ConfigError('replay teacher-forces copy tags; syntax "search_replace" has none: '
                          'replay with syntax "lines" or "compact"')
    doc = EditDocument(document, setup.backend.tokenize)
    text = resolve(program, doc.lines)
    options = setup.options
    if not options.ordered_copies or not is_ordered(program):
        # The order guard restricts what a model may choose; a given program that moves lines
        # is replayed under the unordered language (where no copy marks the end).
        options = options.replace(ordered_copies=False, copy_to_end=False)
    # A given program may add far more than an edit's budget allows; it has this many tokens
    # at most (every token is at least one byte).
    budget = len(get_syntax(options.syntax).render(program).encode("utf-8")) + 1
    # The teacher's copies are the program's: nothing verifies (and cuts) them.
    options = options.replace(max_new_tokens=max(options.max_new_tokens or 0, budget),
                              verify_copies=False)
    setup = dataclasses.replace(setup, options=options)
    policy = TeacherPolicy(program, options.syntax, setup.backend, setup.backend.eos_token_ids,
                           setup.token_bytes)
    events: list[Event] = list(stream_edit(setup, doc, instruction, policy))
    done = events[-1]
    if not isinstance(done, DoneEvent):  # pragma: no cover - the loop always ends with one
        raise GenerationError("the decode loop ended without a result", partial_program="")
    result = done.result
    if result.text != text:
        raise GenerationError("replay diverged from the program (a bug: please report it)",
                              partial_program=result.program_text)
    result.stats.markup_forwards = count_markup_forwards(events, options.syntax)
    plain = plain_cost(setup.backend, text, result.stats.prompt_tokens) if measure_plain else None
    return ReplayResult(text=text, program=program, copygram=result.stats, plain=plain)


def replay_rewrite(session: EditSession, document: str, output: str, *, instruction: str = "",
                   prediction: str | None = None) -> Completion:
    """Teacher-force ``output`` (what a model writes when it rewrites ``document``) through
    rewrite mode's loop exactly as an edit would run it: ``session``'s prompt (a session in
    rewrite mode sends rewrite mode's) prefilled, reusing what the cache holds of it, then
    :func:`~copygram.decode.plain_text.generate` drafting from ``prediction`` (default:
    ``document``), each draft verified in the forward that appends it. How fast rewrite mode is
    for a perfect model: the stats' ``wall_s`` leaves the prefill out; it ends where rewrite
    mode ends, after the line that closes the file's fence. Raises
    :class:`~copygram.errors.GenerationError` if the loop wrote anything but ``output`` (a bug)."""
    setup = session.setup()
    backend = setup.backend
    target = backend.tokenize(output) if output else []
    prompt = prompt_ids(setup, document, instruction)
    check_prompt_fits(backend, len(prompt) + len(target), "the prompt and the output")
    source = prediction_source(setup, document if prediction is None else prediction, prompt)
    teacher = TextTeacher(target, backend.eos_token_ids)
    # The edit's own budget, which caps the drafts near its end; room for the output and the
    # end-of-generation id that ends the run, as a model's, where the budget is smaller.
    budget = edit_budget(setup, len(backend.tokenize(document)))
    events = list(generate(setup, prompt, teacher, max_tokens=max(budget, len(target) + 1),
                           source=source, ends=file_end(document)))
    done = events[-1]
    if isinstance(done, DoneEvent) and done.result.stop_reason == "stop":
        # ``output`` goes on after its closing fence: the loop ends there, as the model's.
        target = target[:len(done.result.token_ids)]
    if not isinstance(done, DoneEvent) or list(done.result.token_ids) != target:
        raise GenerationError("rewrite replay diverged from the output (a bug: please report "
                              "it)", partial_program="")
    return done.result


def plain_cost(backend: Backend, text: str, prompt_tokens: int) -> RunStats:
    """Decode every token of ``text`` one forward at a time after the prompt already in the
    cache (its first ``prompt_tokens`` tokens)."""
    ids = backend.tokenize(text) if text else []
    stats = RunStats(prompt_tokens=prompt_tokens, output_tokens=len(ids))
    backend.truncate(prompt_tokens)
    started = time.perf_counter()
    for token in ids:
        backend.decode(token)
    stats.wall_s = stats.decode_s = time.perf_counter() - started
    stats.decoded_tokens = stats.forwards = len(ids)
    return stats


def is_ordered(program: Program) -> bool:
    """Whether every copy of ``program`` starts after the previous copy's end."""
    floor = 0
    for op in program.copies():
        if op.start <= floor:
            return False
        floor = op.end
    return True


__all__ = ["ReplayResult", "is_ordered", "plain_cost", "replay", "replay_rewrite"]
