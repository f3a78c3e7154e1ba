"""Engine-agnostic token guards, and the shared stateful part of every constraint.

A regular grammar of size O(log n) can bound each line number to 1..n, but not require
``start <= end`` of a copy. Two guards, applied on top of whatever the base engine allows, close
the gap. Both follow the copy tag ``OPEN i SEP j CLOSE`` (literals read from the grammar file,
:func:`~copygram.constraints.grammar.copy_tag`) byte by byte with a tiny tracker:

* **range guard** -- once ``i`` is known and ``j`` has digits ``jp`` so far, a token is allowed
  only if some ``j`` starting with ``jp`` has ``i <= j <= n``; a token ending ``j`` needs
  ``i <= j``. Together with the grammar this makes every accepted copy satisfy
  ``1 <= i <= j <= n``, so :func:`copygram.resolve` cannot fail on an accepted program.
* **tag-end guard** -- a token that closes a copy tag must end right there (the tag's last byte
  is the token's last byte). The decode loop splices the copied lines into the KV cache right
  after the closing token; a token reaching past the tag would put text before the copied lines.

Cost: per vocabulary, one pass over the token bytes (~30 ms for 49k tokens, cached) finds the
few tokens the guards can ever reject in each tracker phase. Per step, the guard looks only at
those of them the engine allows: none outside copy tags (where the only candidates are tokens
holding a whole ``<copy lines="``), a handful of digit/quote/slash tokens inside one, ~1 us
each. No dead end: the grammar's single-byte tokens (required at compile time) never cross a tag
end, and the range guard keeps a valid completion of ``j`` (at worst ``j = i``) reachable.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from copygram.constraints.base import Mask
from copygram.constraints.grammar import CopyTag
from copygram.constraints.vocab import Vocab
from copygram.errors import ConstraintError
from copygram.types import LineRange

# Tracker phases.
OUT, OPEN, FIRST, SEP, SECOND, CLOSE = range(6)

State = tuple[int, int, int, str]
"""(phase, bytes of the current literal matched, start line i, digits so far)."""

INITIAL: State = (OUT, 0, 0, "")
_DIGITS = frozenset(b"0123456789")


def end_prefix_ok(digits: str, start: int, n_lines: int) -> bool:
    """Whether some canonical ``j`` beginning with ``digits`` has ``start <= j <= n_lines``."""
    if not digits:
        return start <= n_lines
    width = len(digits)
    for total in range(width, len(str(n_lines)) + 1):
        pad = total - width
        low, high = int(digits + "0" * pad), int(digits + "9" * pad)
        if high >= start and low <= n_lines:
            return True
    return False


class Tracker:
    """Follows the copy tag through program bytes and applies both guards; immutable."""

    __slots__ = ("n_lines", "tag")

    def __init__(self, tag: CopyTag, n_lines: int) -> None:
        self.tag = tag
        self.n_lines = n_lines

    def advance(self, state: State, data: bytes) -> tuple[State, LineRange | None] | None:
        """The state after ``data`` and the copy it closes, or ``None`` if a guard rejects it."""
        phase, k, start, digits = state
        tag = self.tag
        if phase == OUT and tag.open[0] not in data:
            return state, None  # the common case: gen text or tags other than copy
        closed: LineRange | None = None
        for byte in data:
            if closed is not None:
                return None  # tag-end guard: the closing byte must be the token's last
            if phase == OUT:
                if byte == tag.open[0]:
                    phase, k = (OPEN, 1) if len(tag.open) > 1 else (FIRST, 0)
            elif phase == OPEN:
                if byte == tag.open[k]:
                    k += 1
                    if k == len(tag.open):
                        phase, k, digits = FIRST, 0, ""
                else:
                    phase, k = (OPEN, 1) if byte == tag.open[0] else (OUT, 0)
            elif phase == FIRST:
                if byte in _DIGITS:
                    digits += chr(byte)
                elif byte == tag.sep[0] and digits:
                    start = int(digits)
                    if len(tag.sep) == 1:
                        phase, k, digits = SECOND, 0, ""
                    else:
                        phase, k = SEP, 1
                else:
                    return None
            elif phase == SEP:
                if byte != tag.sep[k]:
                    return None
                k += 1
                if k == len(tag.sep):
                    phase, k, digits = SECOND, 0, ""
            elif phase == SECOND:
                if byte in _DIGITS:
                    digits += chr(byte)
                    if not end_prefix_ok(digits, start, self.n_lines):
                        return None  # range guard
                elif byte == tag.close[0] and digits:
                    if not start <= int(digits) <= self.n_lines:
                        return None  # range guard
                    phase, k = CLOSE, 1
                else:
                    return None
            else:  # CLOSE
                if byte != tag.close[k]:
                    return None
                k += 1
            if phase == CLOSE and k == len(tag.close):
                closed = LineRange(start, int(digits))
                phase, k, start, digits = OUT, 0, 0, ""
        return (phase, k, start, digits), closed

    def forced_bytes(self, state: State) -> bytes:
        """What must come next inside a copy tag: the rest of the separator or the close, or
        the one digit or literal that a line number's range leaves (``-`` after ``14`` and
        ``1`` after ``14-`` when ``n = 19``); ``b""`` where there is a choice."""
        phase, k, start, digits = state
        tag = self.tag
        if phase == SEP:
            return tag.sep[k:]
        if phase == CLOSE:
            return tag.close[k:]
        if phase not in (FIRST, SECOND):
            return b""
        if phase == FIRST:
            options = [d for d in "0123456789" if (digits or d != "0")
                       and int(digits + d) <= self.n_lines]
            ends = bool(digits)
        else:
            options = [d for d in "0123456789" if (digits or d != "0")
                       and end_prefix_ok(digits + d, start, self.n_lines)]
            ends = bool(digits) and start <= int(digits)
        if ends:
            return b"" if options else (tag.sep if phase == FIRST else tag.close)
        return options[0].encode() if len(options) == 1 else b""


IdArray = npt.NDArray[np.intp]


class GuardSets:
    """Per phase, the token ids a guard could ever reject (see module doc); per vocabulary."""

    def __init__(self, vocab: Vocab, tag: CopyTag) -> None:
        numeric = _DIGITS | set(tag.sep) | set(tag.close)
        out, open_, inside = [], [], []
        for token_id, data in enumerate(vocab.token_bytes):
            if not data:
                continue
            if tag.open in data:
                out.append(token_id)
            if tag.open[-1] in data:
                open_.append(token_id)
            if numeric.intersection(data):
                inside.append(token_id)
        ids = {OUT: out, OPEN: open_}
        for phase in (FIRST, SEP, SECOND, CLOSE):
            ids[phase] = inside
        self.by_phase: dict[int, IdArray] = {
            phase: np.asarray(v, dtype=np.intp) for phase, v in ids.items()
        }
        # Tokens spelling a digit or a piece of the separator or close, to force them by bytes.
        pieces = {literal[a:b] for literal in (tag.sep, tag.close)
                  for a in range(len(literal)) for b in range(a + 1, len(literal) + 1)}
        pieces.update(bytes([digit]) for digit in _DIGITS)
        self.literal_tokens: dict[bytes, int] = {}
        for token_id, data in enumerate(vocab.token_bytes):
            if data in pieces:
                self.literal_tokens.setdefault(data, token_id)


@functools.lru_cache(maxsize=16)
def guard_sets(vocab: Vocab, tag: CopyTag) -> GuardSets:
    """:class:`GuardSets` for ``vocab``; ~30 ms for 49k tokens, cached."""
    return GuardSets(vocab, tag)


def check_vocab_covers(vocab: Vocab, needed: bytes) -> None:
    """Raise ConstraintError unless every byte of ``needed`` is a token on its own."""
    singles = vocab.single_byte_tokens()
    missing = sorted({b for b in needed if b not in singles})
    if missing:
        shown = ", ".join(repr(bytes([b])) for b in missing)
        raise ConstraintError(
            f"the tokenizer has no single-byte token for {shown}, which edit programs need; "
            "constrained decoding cannot guarantee progress with this vocabulary"
        )


class GuardedConstraint(ABC):
    """Shared state of a :class:`~copygram.constraints.base.Constraint`: guards, text, EOS.

    Engines supply the base grammar: a mask, a try-advance, a rollback and acceptance.
    """

    def __init__(self, vocab: Vocab, tracker: Tracker, sets: GuardSets) -> None:
        self._vocab = vocab
        self._tokens = vocab.token_bytes
        self._tracker = tracker
        self._sets = sets
        self._states: list[State] = [INITIAL]
        self._text = bytearray()
        self._lengths: list[int] = []
        self._finished = False

    # -- engine hooks -------------------------------------------------------------------------
    @abstractmethod
    def _fill_base(self, out: Mask) -> None:
        """Write the base grammar's mask (EOS bit irrelevant) into ``out``."""

    @abstractmethod
    def _try_advance(self, token_id: int) -> bool:
        """Advance the base grammar by one token; False (state unchanged) if it rejects it."""

    @abstractmethod
    def _rollback_base(self, n_tokens: int) -> None: ...

    @abstractmethod
    def _accepting(self) -> bool: ...

    @abstractmethod
    def _forced_candidates(self) -> list[int]:
        """Tokens the base grammar forces next (before the guards check them)."""

    # -- Constraint API -----------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self._vocab.vocab_size

    @property
    def eos_token_id(self) -> int:
        return self._vocab.eos_token_id

    @property
    def n_lines(self) -> int:
        return self._tracker.n_lines

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def done(self) -> bool:
        return not self._finished and self._states[-1][0] == OUT and self._accepting()

    @property
    def n_consumed(self) -> int:
        return len(self._lengths) + self._finished

    @property
    def program_bytes(self) -> bytes:
        return bytes(self._text)

    @property
    def program_text(self) -> str:
        return self._text.decode("utf-8", errors="replace")

    def allowed(self) -> Mask:
        out = np.empty(self._vocab.vocab_size, dtype=np.bool_)
        self.fill_allowed(out)
        return out

    def fill_allowed(self, out: Mask) -> None:
        if out.shape != (self._vocab.vocab_size,) or out.dtype != np.bool_:
            raise ConstraintError(
                f"fill_allowed needs a bool array of shape ({self._vocab.vocab_size},)"
            )
        if self._finished:
            out[:] = False
            return
        self._fill_base(out)
        out[self._vocab.eos_token_id] = self.done
        state = self._states[-1]
        risky = self._sets.by_phase[state[0]]
        if risky.size:
            advance, tokens = self._tracker.advance, self._tokens
            for token_id in risky[out[risky]].tolist():
                if advance(state, tokens[token_id]) is None:
                    out[token_id] = False

    def consume(self, token_id: int) -> LineRange | None:
        if self._finished:
            raise ConstraintError("the program is finished (EOS consumed); roll back first")
        if token_id == self._vocab.eos_token_id:
            if not self.done:
                raise ConstraintError(
                    f"EOS is not allowed here: the program is incomplete ({self._tail()})"
                )
            self._finished = True
            return None
        if not 0 <= token_id < len(self._tokens) or not self._tokens[token_id]:
            raise ConstraintError(f"token {token_id} is special or unknown; not allowed here")
        data = self._tokens[token_id]
        result = self._tracker.advance(self._states[-1], data)
        if result is None:
            raise ConstraintError(
                f"token {token_id} {data!r} is not allowed after {self._tail()} "
                f"(copy ranges need 1 <= start <= end <= {self.n_lines}, and a copy tag must "
                "end at a token boundary)"
            )
        if not self._try_advance(token_id):
            raise ConstraintError(
                f"token {token_id} {data!r} is not allowed after {self._tail()}: not in the "
                "edit-program grammar"
            )
        state, closed = result
        self._states.append(state)
        self._text += data
        self._lengths.append(len(data))
        return closed

    def consume_many(self, token_ids: Sequence[int]) -> list[LineRange | None]:
        closed: list[LineRange | None] = []
        try:
            for token_id in token_ids:
                closed.append(self.consume(token_id))
        except ConstraintError:
            self.rollback(len(closed))
            raise
        return closed

    def rollback(self, n_tokens: int) -> None:
        if not 0 <= n_tokens <= self.n_consumed:
            raise ConstraintError(
                f"cannot roll back {n_tokens} tokens: {self.n_consumed} were consumed"
            )
        if n_tokens and self._finished:
            self._finished = False
            n_tokens -= 1
        if not n_tokens:
            return
        self._rollback_base(n_tokens)
        drop = sum(self._lengths[-n_tokens:])
        del self._lengths[-n_tokens:]
        del self._states[-n_tokens:]
        del self._text[len(self._text) - drop :]

    def forced(self) -> list[int]:
        if self._finished or self.done:
            return []
        forced: list[int] = []
        state = self._states[-1]
        for token_id in self._forced_candidates():
            result = self._tracker.advance(state, self._tokens[token_id])
            if result is None:
                break
            state = result[0]
            forced.append(token_id)
        if not forced:
            # Engines hold back bytes whose tokenization the next bytes could change (``"/>``
            # after an end line, lest ``"/><`` follow), but the tag-end guard rules such tokens
            # out, so the longest allowed token spelling the forced bytes is the canonical one.
            # Forcing it lets the close share the forward that splices the copy.
            rest = self._tracker.forced_bytes(state)
            if rest:
                mask = self.allowed()
                for size in range(len(rest), 0, -1):
                    piece = self._sets.literal_tokens.get(rest[:size])
                    if piece is not None and mask[piece]:
                        forced.append(piece)
                        break
        return forced

    def _tail(self) -> str:
        text = self.program_text
        return repr(text[-40:]) if text else "the start"
