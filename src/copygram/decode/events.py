"""What the decode loop reports as it runs: a token chosen, a copy spliced, the result.

Statistics that only a benchmark reads are computed from these events after the loop, not in it:
:func:`count_markup_forwards` is the one :class:`~copygram.decode.stats.RunStats` field filled so.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from copygram.decode.completion import SpanEvent, TokenEvent
from copygram.decode.stats import RunStats
from copygram.language.damage import Damage
from copygram.language.ops import Program
from copygram.language.syntaxes import DEFAULT_TAGS, get_syntax
from copygram.language.types import LineRange


@dataclass(frozen=True)
class GenTokenEvent:
    """The model chose a program token (markup or generated text).

    ``drafted``: it came from a verified speculative draft (it shared a forward with the tokens
    before it) rather than from a forward of its own. ``start``/``end``: where its bytes lie in
    the UTF-8 program text (``result.program_text.encode()[start:end]``)."""

    token_id: int
    text: str
    drafted: bool = False
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class CopyEvent:
    """A copy op closed; its lines were spliced into the cache as ``n_tokens`` tokens."""

    lines: LineRange
    n_tokens: int


@dataclass(frozen=True)
class RetractEvent:
    """The program text from byte ``start`` on was withdrawn: a verified copy
    (``verify_copies``) was cut short, so its tag was rewritten (the copy's :class:`CopyEvent`
    names the lines it kept), or a search/replace block that changed nothing is written again
    from the model's runner-up token at one choice (``retry_unchanged``). The events after this one
    continue from ``start``."""

    start: int


@dataclass(frozen=True)
class EditResult:
    """The outcome of :meth:`~copygram.session.EditSession.edit`.

    ``raw``: the model's output as it wrote it: in rewrite mode the whole reply (``text`` is the
    document taken out of it, a surrounding code fence stripped), in program mode the program
    text (the default when not given).

    ``damage``: what :func:`~copygram.language.damage.find_damage` found wrong with ``text``
    (empty unless the session keeps damaged edits, ``on_damage = "keep"``). ``redone``: where
    program mode's edit was damaged and redone in rewrite mode (``on_damage = "rewrite"``), the
    damaged edit, whose ``damage`` says why; this result's ``stats`` are the rewrite's alone.
    ``mode``: the mode that wrote ``text``, ``"program"`` or ``"rewrite"`` (a session in mode
    ``"auto"`` runs one of them per edit; a redone edit's is ``"rewrite"``)."""

    text: str
    program: Program
    program_text: str
    stats: RunStats
    raw: str = ""
    damage: tuple[Damage, ...] = ()
    redone: EditResult | None = None
    mode: str = "program"

    def __post_init__(self) -> None:
        if not self.raw:
            object.__setattr__(self, "raw", self.program_text)

    @property
    def speedup(self) -> float:
        """Estimated speedup over decoding every output token: the output's token count times
        this run's mean decode-step time, over this run's generation time (use
        :func:`copygram.bench.replay.replay` for a measured one)."""
        if not self.stats.decoded_tokens or not self.stats.wall_s:
            return float("nan")
        per_step = self.stats.decode_s / self.stats.decoded_tokens
        return self.stats.output_tokens * per_step / self.stats.wall_s


@dataclass(frozen=True)
class RedoEvent:
    """Program mode's edit, ``result``, would damage the file (its ``damage`` says how): the
    edit is done again in rewrite mode, whose events follow (``on_damage = "rewrite"``)."""

    result: EditResult


@dataclass(frozen=True)
class DoneEvent:
    result: EditResult


Event = (GenTokenEvent | CopyEvent | RetractEvent | RedoEvent | TokenEvent | SpanEvent
         | DoneEvent)
"""What an edit streams: program mode yields :class:`GenTokenEvent`, :class:`CopyEvent` and
(with ``verify_copies`` or ``retry_unchanged``) :class:`RetractEvent`,
rewrite mode :class:`~copygram.decode.completion.TokenEvent` and
:class:`~copygram.decode.completion.SpanEvent`; both end with a :class:`DoneEvent`. A program
whose edit would damage the file is followed by a :class:`RedoEvent` and rewrite mode's events
(``on_damage = "rewrite"``)."""


def count_markup_forwards(events: Iterable[Event], syntax: str = DEFAULT_TAGS) -> int:
    """Forwards a run spent on op markup and line numbers rather than on gen text: the tokens
    the model chose from a forward of their own (not drafted) that start or end outside a gen
    op's text. ``events`` are one run's, ending with its :class:`DoneEvent`.

    Computed after the run from the program text and the tokens' byte offsets, so the decode
    loop does not pay for a statistic only benchmarks read: the gen texts' byte spans come from
    the program's ops (:meth:`~copygram.language.syntaxes.Syntax.gen_text_spans`)."""
    tokens: list[GenTokenEvent] = []
    program = ""
    for event in events:
        if isinstance(event, GenTokenEvent):
            if not event.drafted:
                tokens.append(event)
        elif isinstance(event, RetractEvent):
            tokens = [t for t in tokens if t.end <= event.start]
        elif isinstance(event, DoneEvent):
            program = event.result.program_text

    def at_byte(offset: int) -> int:
        return len(program[:offset].encode("utf-8"))

    # Byte offsets of every gen text's (start, end); a token is gen text when both its ends
    # lie in one span, the span's start included (the token right after the opener).
    spans = [(at_byte(a), at_byte(b)) for a, b in get_syntax(syntax).gen_text_spans(program)]
    starts = [a for a, _ in spans]

    def in_gen_text(offset: int) -> bool:
        at = bisect_right(starts, offset) - 1
        return at >= 0 and spans[at][0] <= offset <= spans[at][1]

    return sum(not (in_gen_text(t.start) and in_gen_text(t.end)) for t in tokens)


__all__ = ["CopyEvent", "DoneEvent", "EditResult", "Event", "GenTokenEvent", "RedoEvent",
           "RetractEvent", "SpanEvent", "TokenEvent", "count_markup_forwards"]
