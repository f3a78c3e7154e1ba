"""What a decode run reports as it runs, and what it ends with: one family of events for edit
programs, rewrite mode and chat completions alike (the one loop, :mod:`copygram.decode.loop`).

Every token event carries ``text``, the output text it makes final: the bytes consumed since
the previous event (tokens the grammar forced, which have no event of their own, included),
less a tail held back while it ends inside a UTF-8 character or could still begin a stop string.
Joining the ``text`` of every event of one run, its :class:`DoneEvent` included, gives the
output (the program text in program mode, the raw reply in rewrite mode, the completion's text),
where a :class:`RetractEvent` cuts what was joined back to its ``start``.

Statistics that only a benchmark reads are computed from these events after the loop, not in it:
:func:`count_markup_forwards` is the one :class:`~copygram.decode.stats.RunStats` field filled so.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Generic, Literal, TypeVar

from copygram.decode.stats import RunStats
from copygram.language.damage import Damage
from copygram.language.ops import Program
from copygram.language.syntaxes import DEFAULT_TAGS, get_syntax
from copygram.language.types import LineRange

StopReason = Literal["eos", "stop", "max_tokens", "context"]
"""Why a run ended: an end-of-generation token (EOS or end of turn; a program's end), a stop
string or the line that closes a rewrite's fence (``"stop"``), the token budget
(``max_tokens``, or an edit's default budget), or a full context."""


def finish_reason(stop_reason: StopReason) -> Literal["stop", "length"]:
    """OpenAI's name for how a run ended: ``"stop"`` (an end-of-generation token or a stop
    string) or ``"length"`` (its budget or a full context: the output is cut short)."""
    return "stop" if stop_reason in ("eos", "stop") else "length"


@dataclass(frozen=True)
class PrefillEvent:
    """The prompt is being read into the KV cache: ``done`` of its ``total`` tokens are there,
    ``cached`` of them found there already (a prefix an earlier prompt left, or a snapshot of
    one) rather than computed. A run yields one before it computes anything, one after each
    batch of a long prompt where the backend runs a prompt in batches (llama.cpp: ``n_batch``
    tokens, ~10 s each on a 2-core CPU), and one when the whole prompt is in (``done ==
    total``), before its first token. On a CPU a file of 1,000 lines is minutes of prompt:
    these say how far it has got. No output text: ``text`` is always empty, so joining every
    event's ``text`` still gives the output."""

    done: int
    total: int
    cached: int = 0
    text: ClassVar[str] = ""


@dataclass(frozen=True)
class TokenEvent:
    """The model chose ``token_id`` itself, in a forward of its own or from the row after a
    draft's accepted tokens (the bonus token), not taken from a draft. ``start``/``end``: where
    its bytes lie in the UTF-8 output (``result.raw.encode()[start:end]``)."""

    token_id: int
    text: str
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class SpanEvent:
    """Drafted tokens the model accepted, verified in the one forward that appended them.
    ``source`` names the draft source (a rewrite's ``"line"``: aligned with a line of the
    prediction; ``"rejoin"``: the same after a line the prediction did not hold; ``"resync"``:
    the rest of a changed line; ``"lookup"``, ``"echo"``, ``"prompt"``: n-gram lookup in the
    prediction, the output, the prompt; a program's drafters name theirs). ``start``/``end``:
    the span's bytes in the output."""

    token_ids: tuple[int, ...]
    text: str
    source: str = ""
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class CopyEvent:
    """A copy op closed; its lines were spliced into the cache as ``n_tokens`` tokens."""

    lines: LineRange
    n_tokens: int


@dataclass(frozen=True)
class RetractEvent:
    """The output from byte ``start`` on was withdrawn (always between characters): a verified
    copy (``verify_copies``) was cut short, so its tag was rewritten (the copy's
    :class:`CopyEvent` names the lines it kept), or a search/replace block that changed nothing
    is written again from the model's runner-up token at one choice (``retry_unchanged``). The
    events after this one continue from ``start``."""

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
    ``"auto"`` runs one of them per edit; a redone edit's is ``"rewrite"``). ``stop_reason``:
    why the run ended (:data:`StopReason`): a program always ends on its end (``"eos"``: one
    that reaches its budget first is an error, not a result); a rewrite ends on its end, after
    the line that closes its file's fence (``"stop"``: what the model would write after it, an
    explanation, never changes the file), on its budget or a full context, and then ``text`` is
    cut short (the edit check refuses it)."""

    text: str
    program: Program
    program_text: str
    stats: RunStats
    raw: str = ""
    damage: tuple[Damage, ...] = ()
    redone: EditResult | None = None
    mode: str = "program"
    stop_reason: StopReason = "eos"

    def __post_init__(self) -> None:
        if not self.raw:
            object.__setattr__(self, "raw", self.program_text)

    @property
    def finish_reason(self) -> Literal["stop", "length"]:
        """:func:`finish_reason` of :attr:`stop_reason`: ``"length"`` where the text is cut
        short."""
        return finish_reason(self.stop_reason)

    @property
    def speedup(self) -> float:
        """Estimated speedup over decoding every output token: the output's token count times
        this run's mean decode-step time (its one-token forwards' time over their number: a
        token chosen from a batched forward's logits took no step of its own), over this run's
        generation time (use :func:`copygram.bench.replay.replay` for a measured one). NaN
        where the run took no one-token decode step to time (every choice read from a batched
        forward)."""
        steps = self.stats.forward_tokens.count(1)
        if not steps or not self.stats.wall_s or self.stats.decode_s <= 0:
            return float("nan")
        return self.stats.output_tokens * (self.stats.decode_s / steps) / self.stats.wall_s


@dataclass(frozen=True)
class RedoEvent:
    """Program mode's edit, ``result``, would damage the file (its ``damage`` says how): the
    edit is done again in rewrite mode, whose events follow (``on_damage = "rewrite"``)."""

    result: EditResult


@dataclass(frozen=True)
class Completion:
    """A finished chat completion (:meth:`~copygram.session.EditSession.complete`).

    ``text``: the output, cut before the first stop string. ``raw``: every generated token's text
    (the stop string and anything after it in the same token included; no EOS). ``token_ids``:
    the generated tokens (no EOS). ``stop_reason``: see :data:`StopReason`; ``finish_reason`` is
    OpenAI's name for it. ``stats``: forwards, decoded and accepted/rejected prediction tokens,
    times (:class:`~copygram.decode.stats.RunStats`)."""

    text: str
    raw: str
    token_ids: tuple[int, ...]
    stop_reason: StopReason
    stats: RunStats

    @property
    def finish_reason(self) -> Literal["stop", "length"]:
        """``"stop"`` (an end-of-generation token or a stop string) or ``"length"``."""
        return finish_reason(self.stop_reason)

    @property
    def prompt_tokens(self) -> int:
        return self.stats.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def accepted_prediction_tokens(self) -> int:
        """Prediction tokens the output took (OpenAI Predicted Outputs' name)."""
        return self.stats.drafted_tokens

    @property
    def rejected_prediction_tokens(self) -> int:
        """Prediction tokens computed in a verifying forward and not taken."""
        return self.stats.rejected_tokens


R = TypeVar("R", EditResult, Completion)


@dataclass(frozen=True)
class DoneEvent(Generic[R]):
    """The last event: the run's ``result`` (an :class:`EditResult` for an edit, a
    :class:`Completion` for a chat completion) and ``text``, the output text no earlier event
    released (a tail held back until the end)."""

    result: R
    text: str = ""


Event = (PrefillEvent | TokenEvent | SpanEvent | CopyEvent | RetractEvent | RedoEvent
         | DoneEvent[EditResult])
"""What an edit streams: :class:`PrefillEvent` s while the prompt is read, then
:class:`TokenEvent` and :class:`SpanEvent` in every mode,
:class:`CopyEvent` and (with ``verify_copies`` or ``retry_unchanged``) :class:`RetractEvent` in
program mode, then a :class:`DoneEvent`. A program whose edit would damage the file is followed
by a :class:`RedoEvent` and rewrite mode's events (``on_damage = "rewrite"``)."""

CompletionEvent = PrefillEvent | TokenEvent | SpanEvent | DoneEvent[Completion]
"""What a chat completion streams: :class:`PrefillEvent` s while the prompt is read, its token
and span events, then a :class:`DoneEvent`."""


def count_markup_forwards(events: Iterable[Event], syntax: str = DEFAULT_TAGS) -> int:
    """Forwards a run spent on op markup and line numbers rather than on gen text: the tokens
    the model chose from a forward of their own (not drafted) that start or end outside a gen
    op's text. ``events`` are one run's, ending with its :class:`DoneEvent`.

    Computed after the run from the program text and the tokens' byte offsets, so the decode
    loop does not pay for a statistic only benchmarks read: the gen texts' byte spans come from
    the program's ops (:meth:`~copygram.language.syntaxes.Syntax.gen_text_spans`)."""
    tokens: list[TokenEvent] = []
    program = ""
    for event in events:
        if isinstance(event, TokenEvent):
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


__all__ = ["Completion", "CompletionEvent", "CopyEvent", "DoneEvent", "EditResult", "Event",
           "PrefillEvent", "RedoEvent", "RetractEvent", "SpanEvent", "StopReason", "TokenEvent",
           "count_markup_forwards"]
