"""Engine-agnostic token guards: the copy-tag tracker and the token sets it checks.

A regular grammar of size O(log n) can bound each line number to 1..n, but not require
``start <= end`` of a copy. Two guards, applied on top of whatever the base engine allows, close
the gap. Both follow the copy tag ``OPEN i SEP j CLOSE`` (literals read from the grammar file,
:func:`~copygram.constraints.document_grammar.copy_tag`) byte by byte with a tiny tracker:

* **range guard** -- once ``i`` is known and ``j`` has digits ``jp`` so far, a token is allowed
  only if some ``j`` starting with ``jp`` has ``i <= j <= n``; a token ending ``j`` needs
  ``i <= j``. Together with the grammar this makes every accepted copy satisfy
  ``1 <= i <= j <= n``, so :func:`copygram.language.resolve` cannot fail on an accepted program.
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

import numpy as np
import numpy.typing as npt

from copygram.constraints.document_grammar import CopyTag
from copygram.constraints.vocab import Vocab
from copygram.errors import ConstraintError
from copygram.language.types import LineRange

# Tracker phases. GEN_OPEN: the opener of a gen op after its first byte; GEN: inside gen text,
# which may hold "<" and even a whole copy tag, so the tracker must know it is there.
OUT, OPEN, FIRST, SEP, SECOND, CLOSE, GEN_OPEN, GEN = range(8)

State = tuple[int, int, int, str, int]
"""(phase, bytes of the current literal matched, start line i, digits so far, end line of the
last copy - 0 before the first, and always 0 unless copies are ordered)."""

INITIAL: State = (OUT, 0, 0, "", 0)
_DIGITS = frozenset(b"0123456789")


def number_prefix_ok(digits: str, low: int, high: int) -> bool:
    """Whether some canonical number beginning with ``digits`` lies in ``low..high``."""
    if not digits:
        return low <= high
    width = len(digits)
    for total in range(width, len(str(high)) + 1):
        pad = total - width
        smallest, largest = int(digits + "0" * pad), int(digits + "9" * pad)
        if largest >= low and smallest <= high:
            return True
    return False


class Tracker:
    """Follows the copy tag through program bytes and applies the guards; immutable.

    ``ordered``: copies keep the document's order - a copy starts after the end of the previous
    one (the order guard). Every program is then bounded by the document: at most ``n`` copied
    lines, and no copy at all once line ``n`` is copied (the tag is refused where it stops
    being a possible gen tag, so the grammar never dead-ends inside it). ``to_end`` (ordered
    only): the program ends only after a copy of the document's last line.
    """

    __slots__ = ("n_lines", "ordered", "tag", "to_end")

    def __init__(self, tag: CopyTag, n_lines: int, *, ordered: bool = False,
                 to_end: bool = False) -> None:
        if to_end and not ordered:
            raise ConstraintError("copies to the end need ordered copies (to know the end)")
        self.tag = tag
        self.n_lines = n_lines
        self.ordered = ordered
        self.to_end = to_end

    def may_end(self, state: State) -> bool:
        """Whether a program may end in ``state`` (between ops): with ``to_end``, only once a
        copy reached the document's last line (a model that stops after its fix drops the
        rest of the file; this makes it copy or rewrite the rest first)."""
        return state[0] == OUT and (not self.to_end or state[4] >= self.n_lines)

    def advance(self, state: State, data: bytes) -> tuple[State, LineRange | None] | None:
        """The state after ``data`` and the copy it closes, or ``None`` if a guard rejects it."""
        phase, k, start, digits, floor = state
        tag = self.tag
        if phase == GEN and k == 0 and tag.gen_close[0] not in data:
            return state, None  # the common case: gen text
        closed: LineRange | None = None
        no_copy_left = floor >= self.n_lines
        for byte in data:
            if closed is not None:
                return None  # tag-end guard: the closing byte must be the token's last
            if phase == OUT:
                if byte != tag.open[0]:
                    return None  # the grammar admits only an op's opener here
                phase, k = (OPEN, 1) if len(tag.open) > 1 else (FIRST, 0)
                if no_copy_left and tag.exclusive <= 1:
                    return None  # order guard: line n is copied, no copy can follow
            elif phase == OPEN:
                if byte == tag.open[k]:
                    k += 1
                    if no_copy_left and k >= tag.exclusive:
                        return None  # order guard, as early as the tag is surely a copy
                    if k == len(tag.open):
                        phase, k, digits = FIRST, 0, ""
                elif k < min(tag.exclusive, len(tag.gen_open)) and byte == tag.gen_open[k]:
                    # The grammar admits only ops here: not the copy opener, so the gen one.
                    phase, k = (GEN, 0) if k + 1 == len(tag.gen_open) else (GEN_OPEN, k + 1)
                else:
                    return None
            elif phase == GEN_OPEN:
                if byte != tag.gen_open[k]:
                    return None
                k += 1
                if k == len(tag.gen_open):
                    phase, k = GEN, 0
            elif phase == GEN:
                # The closing tag's first byte does not recur in it: no backtracking needed.
                if byte == tag.gen_close[k]:
                    k += 1
                    if k == len(tag.gen_close):
                        phase, k = OUT, 0
                else:
                    k = 1 if byte == tag.gen_close[0] else 0
            elif phase == FIRST:
                if byte in _DIGITS:
                    digits += chr(byte)
                    if not number_prefix_ok(digits, floor + 1, self.n_lines):
                        return None  # order guard (the grammar bounds the start by n)
                elif byte == tag.sep[0] and digits:
                    start = int(digits)
                    if not floor < start <= self.n_lines:
                        return None  # order guard
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
                    if not number_prefix_ok(digits, start, self.n_lines):
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
                if self.ordered:
                    floor = closed.end
        return (phase, k, start, digits, floor), closed

    def forced_bytes(self, state: State) -> bytes:
        """What must come next inside a copy tag: the rest of the separator or the close, or
        the one digit or literal that a line number's range leaves (``-`` after ``14`` and
        ``1`` after ``14-`` when ``n = 19``); ``b""`` where there is a choice."""
        phase, k, start, digits, floor = state
        tag = self.tag
        if phase == SEP:
            return tag.sep[k:]
        if phase == CLOSE:
            return tag.close[k:]
        if phase not in (FIRST, SECOND):
            return b""
        low = floor + 1 if phase == FIRST else start
        options = [d for d in "0123456789" if (digits or d != "0")
                   and number_prefix_ok(digits + d, low, self.n_lines)]
        ends = bool(digits) and low <= int(digits)
        if ends:
            return b"" if options else (tag.sep if phase == FIRST else tag.close)
        return options[0].encode() if len(options) == 1 else b""


IdArray = npt.NDArray[np.intp]


class GuardSets:
    """Per phase, the token ids a guard could ever reject (see module doc); per vocabulary."""

    def __init__(self, vocab: Vocab, tag: CopyTag) -> None:
        numeric = _DIGITS | set(tag.sep) | set(tag.close)
        out, open_, inside = [], [], []
        # Outside a tag the order guard can refuse a token as soon as it holds the exclusive
        # part of the opener; inside the opener, any token that continues it.
        exclusive, opener = tag.open[: tag.exclusive], set(tag.open)
        for token_id, data in enumerate(vocab.token_bytes):
            if not data:
                continue
            if exclusive in data:
                out.append(token_id)
            if opener.intersection(data):
                open_.append(token_id)
            if numeric.intersection(data):
                inside.append(token_id)
        # In gen text and its opener, a token can reach a copy tag only through the closing tag
        # and the copy's exclusive opener.
        ids = {OUT: out, OPEN: open_, GEN_OPEN: out, GEN: out}
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


@functools.lru_cache(maxsize=16)
def _single_bytes(vocab: Vocab) -> frozenset[int]:
    # A scan of the whole vocabulary (~30 ms for Qwen2.5's 151k tokens): once per vocabulary,
    # not per edit (a Vocab hashes by identity).
    return frozenset(vocab.single_byte_tokens())


def check_vocab_covers(vocab: Vocab, needed: bytes) -> None:
    """Raise ConstraintError unless every byte of ``needed`` is a token on its own (the scan of
    the vocabulary is cached per vocabulary)."""
    singles = _single_bytes(vocab)
    missing = sorted({b for b in needed if b not in singles})
    if missing:
        shown = ", ".join(repr(bytes([b])) for b in missing)
        raise ConstraintError(
            f"the tokenizer has no single-byte token for {shown}, which edit programs need; "
            "constrained decoding cannot guarantee progress with this vocabulary"
        )
