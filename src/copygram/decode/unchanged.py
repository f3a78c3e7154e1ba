"""Search/replace blocks that change nothing, taken back and written again from the model's most
likely change (``retry_unchanged``).

Asked to fix a bug it does not see, a model often writes a block whose replacement is its lines
again, unchanged: the edit is a no-op (9 of the 30 dev rows of docs/quality.md; the rewrite
baseline leaves 8 rows unchanged, the same kind of failure). Such a block is still evidence: the
model chose that function, and reading it back token by token it was less sure of some tokens
than of others. Where a block closes unchanged, this takes the program back to the one choice
inside the replacement where the model's best *different* token came closest to the token it
took (the smallest logit margin), takes that token instead, and lets the model go on from there
(the rest drafted from the block's lines as before). So the program is the model's greedy
program but for one token: its most likely edit among those that change the block.

Where the instruction asks to remove a definition
(:func:`~copygram.language.targets.removal_targets`) and a block's head is a line of it and its replacement is not empty (the model wrote the
definition again, changed or not), the choice taken back is the replacement's first token, and
the token taken there the closing marker, where the model ranked it among its
:data:`CANDIDATES` (the block then removes its unit, which is what was asked). The JS
remove_function row of docs/quality.md wrote the function again unchanged, with the removal its
runner-up there (3.6 under) and the smallest margin elsewhere; small rows wrote it again with a
semicolon added or a body simplified, which the miss check then redid in a rewrite that kept it
too.

Where a block closes and its replacement breaks the file's parse (the document parses, and
with this block alone applied it does not: a head block closed after its changed first line, a
``{`` left open, its body and ``}`` gone), the choice taken back is the one that began the
closing marker, and the token taken there the model's best other one, where it is within
:data:`GO_ON_MARGIN` of the close: the model goes on writing the unit. On the large edit-kinds
rows shown as a view (docs/quality.md) the default model closed blocks so after the first line it changed (a parameter added, a comment written), which
the damage check then redid in rewrite mode at the cost of the whole file.

Where the instruction adds a unit (:func:`~copygram.language.additions.addition_places`) and a
block heads one of its places and writes none of the names it adds (the unit written again and
closed, where the new one should follow), the choice taken back is the one that began the
closing marker, and the token the model's best other one there at any margin, a blank line
included: the model goes on after the unit (a blank line, then the new one). Such a block that
then closes where the file no longer parses (the new function's first line, ``{`` left open) is
taken back once more, as any block that breaks the parse is; so is one that ends with the new
definition's first line (``const f = (n) => {``: read as a head block that stops where a body
begins, it replaces only the place's header, and the new definition takes the place's body; a
JavaScript program on a 1,056-line file read so) or gives it nothing in its body (its header
and docstring alone: a Python program on a 728-line file), the two at any margin: as they
stand they are misses.

Once per block (but for that): the block written again is kept whatever it holds. Only the model's own greedy
choices are candidates (a token the grammar forced was no choice; a sampled run keeps its
blocks). A candidate must change the text: not a token that spells a prefix of what the block
went on with (another tokenization of the same bytes), nor one that parts from it only inside
the closing marker (a block closed on its last line, ``x >>> REPLACE``: at its arrows), nor a
line break, spaces or arrows where such a block closed (the same close), nor a carriage return
before a line end (a block's lines take the
document's endings), nor a closing marker where closing there leaves the block unchanged (a
head block closed after its header keeps the body). A choice that starts inside a UTF-8
character is not taken back to.

Cost: each choice inside a replacement keeps its best :data:`CANDIDATES` other allowed tokens (a
few O(vocabulary) passes, ~0.1 ms for 151k tokens); following the program's blocks costs O(1)
amortised per byte; a retry costs the forwards of the block's rest written again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from copygram.errors import ProgramSyntaxError
from copygram.language.additions import empty_definitions
from copygram.language.block_scan import BlockScanner, BlockSpan
from copygram.language.damage import LANGUAGES, parses
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    Block,
    closes_loosely,
    leaves_unchanged,
    merge_retyped,
    parse_blocks,
)
from copygram.language.units import unit_end

CANDIDATES = 4
"""How many of the best other allowed tokens each choice in a replacement keeps."""

GO_ON_MARGIN = 8.0
"""The furthest under the closing marker (in logits) the model's other token may be for a
block that breaks the parse to go on with it (module doc); further under, it is no choice the
model would make (e^-8 of the close's weight), and the block is left to the damage check."""

_OPEN, _DIVIDER, _CLOSE = BLOCK_OPEN.encode(), DIVIDER.encode(), BLOCK_CLOSE.encode()


@dataclass(frozen=True)
class Choice:
    """One choice the model made inside a replacement: program token ``index`` (starting at
    byte ``offset`` of the program), taken with logit ``logit``; ``others``: the best other
    allowed tokens, ``(token id, logit)``, best first."""

    index: int
    offset: int
    logit: float
    others: tuple[tuple[int, float], ...]
    width: int = 1  # the bytes of the token taken


@dataclass(frozen=True)
class Retry:
    """Take the program back to token ``index`` and take ``token`` there (``margin``: how far
    under the model's own choice its logit was)."""

    index: int
    token: int
    margin: float


class UnchangedBlocks:
    """Finds blocks that leave their lines unchanged, or keep a definition asked to be removed,
    and the choice to take back (module doc).

    The decode loop calls :meth:`note` for each greedy choice, :meth:`forget` where it takes
    program tokens back, and :meth:`retry` after each step. ``heads`` and ``merge``: how the
    session reads its blocks (``search_scope = "head"``, ``merge_retyped``); ``removing``: the
    line ranges of the definitions the instruction asks to remove; ``language``: the document's,
    whose parse a closed block must not break (module doc; ``None``: not checked); ``adding``
    and ``added``: the places of an edit that adds a unit and the names it adds
    (:mod:`copygram.language.additions`)."""

    def __init__(self, lines: Sequence[str], token_bytes: Sequence[bytes], eos_ids: Iterable[int],
                 *, heads: bool, merge: bool = False,
                 removing: Sequence[tuple[int, int]] = (), language: str | None = None,
                 adding: Sequence[tuple[int, int]] = (),
                 added: Iterable[str] = ()) -> None:
        self._lines = list(lines)
        self._adding, self._added = tuple(adding), tuple(added)
        self._language = language if language in LANGUAGES else None  # prose: no parse
        self._parsed: bool | None = None  # whether the document parses, read once
        self._removing = tuple(removing)
        self._token_bytes = token_bytes
        self._eos = frozenset(eos_ids)
        self._heads, self._merge = heads, merge
        self._choices: list[Choice] = []
        self._scanner = BlockScanner(loose=closes_loosely(self._lines))
        self._checked = 0  # closed blocks examined so far
        # Blocks (by position) written again already: once each, but for an addition's block
        # that then closes where the file no longer parses (once more, to go on writing it).
        self._retried: dict[int, str] = {}

    def note(self, program: bytes, index: int, token: int, logits: npt.NDArray[np.float32],
             allowed: npt.NDArray[np.bool_]) -> None:
        """The model chose ``token`` as program token ``index`` after ``program`` from
        ``logits`` over ``allowed``; kept where ``program`` ends inside a replacement. Costs a
        few O(vocabulary) passes there, the new bytes' scan elsewhere."""
        self._scanner.advance(program)
        if not self._scanner.in_replacement:
            return
        scores = np.where(allowed[: len(logits)], logits[: len(allowed)], -np.inf)
        taken = float(scores[token])
        scores[token] = -np.inf
        others: list[tuple[int, float]] = []
        while len(others) < CANDIDATES:
            best = int(scores.argmax())
            value = float(scores[best])
            if value == -np.inf:
                break
            scores[best] = -np.inf
            if best not in self._eos:
                others.append((best, value))
        self._choices.append(Choice(index, len(program), taken, tuple(others),
                                    len(self._token_bytes[token])))

    def forget(self, n_tokens: int) -> None:
        """The program now holds ``n_tokens`` tokens: drop the choices past them."""
        while self._choices and self._choices[-1].index >= n_tokens:
            self._choices.pop()

    def retry(self, program: bytes) -> Retry | None:
        """Where a block closed since the last call was not written again yet and leaves its
        lines unchanged, writes over a definition the instruction asks to remove, heads an
        addition's place and adds nothing, or breaks the file's parse (module doc): the choice
        to take back and the token to take there (``None``: nothing to do, or no choice in the
        block could change it, or remove it). Costs the new bytes' scan, and a parse or two of
        the program where a block closed."""
        self._scanner.advance(program)
        spans = self._scanner.spans
        while self._checked < len(spans):
            position = self._checked
            self._checked += 1
            span = spans[position]
            before = self._retried.get(position)
            if before not in (None, "addition"):
                continue
            block = self._last_block(program[: span.end])  # one parse serves every check
            found, reason = None, "breaks"
            if before is None:
                found, reason = self._removal(program, span, block), "removal"
                if found is None and self._adds_nothing(block):
                    found = self._go_on(program, span, margin=None, blank=True)
                    reason = "addition"
                if found is None and block is not None and leaves_unchanged(block, self._lines):
                    found, reason = self._best_change(program, span), "unchanged"
            if found is None and reason != "unchanged" and self._unfinished_addition(block):
                # Known wrong as it stands: the model goes on at any margin.
                found, reason = self._go_on(program, span, margin=None), "breaks"
            elif found is None and reason != "unchanged" and self._breaks(block):
                found, reason = self._go_on(program, span), "breaks"
            if found is None:
                continue
            self._retried[position] = reason
            self._checked = position
            return found
        return None

    def _last_block(self, program: bytes) -> Block | None:
        """The last block of ``program`` (which ends with a closed block) as the session reads
        it (``merge_retyped`` too), or ``None`` where it does not parse."""
        try:
            blocks = parse_blocks(program.decode("utf-8"), self._lines, heads=self._heads)
        except (ProgramSyntaxError, UnicodeDecodeError):
            return None
        if self._merge:
            blocks = merge_retyped(blocks, self._lines)
        return blocks[-1] if blocks else None

    def _unchanged(self, program: bytes) -> bool:
        """Whether the last block of ``program`` (which ends with a closed block) is a no-op."""
        block = self._last_block(program)
        return block is not None and leaves_unchanged(block, self._lines)

    def _removal(self, program: bytes, span: BlockSpan, block: Block | None) -> Retry | None:
        """Where ``span``'s block heads a definition the instruction asks to remove and writes
        something in its place (``block``: that block as read): the closing marker as the
        replacement's first token, if the model ranked it (module doc)."""
        if not self._removing or span.close == span.replacement:
            return None
        # Its head in the definition (the comment block above it counts) and the lines it
        # replaces reaching the definition's end: an empty replacement removes the definition.
        if block is None or not any(start <= block.search.start <= end <= block.search.end
                                    for start, end in self._removing):
            return None
        for choice in self._choices:
            if choice.offset != span.replacement:
                continue
            for token, logit in choice.others:
                data = self._token_bytes[token]
                if data and (data.startswith(_CLOSE) or _CLOSE.startswith(data)) \
                        and self._changes(program, span, choice.offset, data):
                    return Retry(choice.index, token, choice.logit - logit)
        return None

    def _adds_nothing(self, block: Block | None) -> bool:
        """Whether ``block`` (the block just closed, as read) heads a place of an edit that
        adds a unit and writes none of the names it adds: the unit written again (changed or
        not) and closed, where the new one should follow (module doc)."""
        return (block is not None and self._at_place(block)
                and not any(_word(name).search(block.replacement) for name in self._added))

    def _at_place(self, block: Block) -> bool:
        return bool(self._added) and any(start <= block.search.start <= end
                                         for start, end in self._adding)

    def _unfinished_addition(self, block: Block | None) -> bool:
        """Whether ``block`` heads an addition's place and writes an added name, but stops
        where the new definition's body would begin (a head block's replacement that ends
        opening a body replaces only its unit's header,
        :func:`~copygram.language.search_replace.head_run`: the new definition would take the
        place's body) or gives it nothing in its body
        (:func:`~copygram.language.additions.empty_definitions`: its header and docstring
        alone). Either is a miss as it stands (:func:`~copygram.language.targets.find_misses`).
        A parse of the replacement."""
        if block is None or not self._at_place(block):
            return False
        written = {name for name in self._added if _word(name).search(block.replacement)}
        if not written:
            return False
        if block.search.end < unit_end(self._lines, block.search.start):
            return True
        return bool(empty_definitions(block.replacement, written, self._language))

    def _breaks(self, block: Block | None) -> bool:
        """Whether ``block`` (the block just closed, as read), applied alone, makes the document,
        which parses, no longer parse. An empty replacement (a removal) is left to the damage
        check. One parse (and the document's, once)."""
        if self._language is None:
            return False
        if block is None or not block.replacement:
            return False
        if self._parsed is None:
            self._parsed = parses("".join(self._lines), self._language)
        if not self._parsed:
            return False
        start, end = block.search.start, block.search.end
        edited = "".join([*self._lines[: start - 1], block.replacement, *self._lines[end:]])
        return not parses(edited, self._language)

    def _go_on(self, program: bytes, span: BlockSpan,
               margin: float | None = GO_ON_MARGIN, blank: bool = False) -> Retry | None:
        """The model's best token other than the one that began ``span``'s closing marker, where
        a choice of the model began it (not a guard's close), that token writes something else
        there and it is within ``margin`` of the close (``None``: at any margin; module doc);
        with ``blank``, a blank line goes on too (a new unit after this one opens with one)."""
        choice = next((c for c in reversed(self._choices)
                       if span.replacement <= c.offset <= span.close < c.offset + c.width), None)
        if choice is None:
            return None
        went_on = program[choice.offset : span.end]
        for token, logit in choice.others:
            data = self._token_bytes[token]
            rest = data[len(os.path.commonprefix([data, went_on])):]
            if not rest:
                continue  # the same bytes
            at = choice.offset + len(data) - len(rest)  # where it parts from what was written
            at_line_start = at == 0 or program[at - 1] == 0x0A
            closes = not rest.strip(b" \t\n") and (b"\n" in rest or not at_line_start)
            if at >= span.close and ((closes and not blank)
                                     or rest.lstrip(b" \t\n").startswith(b">")):
                # The same close spelled otherwise, or after a blank line (indentation at a
                # line's start is the unit going on).
                continue
            if margin is not None and choice.logit - logit > margin:
                return None  # the model is sure the block ends there: its others are noise
            return Retry(choice.index, token, choice.logit - logit)
        return None

    def _best_change(self, program: bytes, span: BlockSpan) -> Retry | None:
        """The choice in ``span``'s replacement whose best changing candidate has the smallest
        margin. Costs O(choices in the block x :data:`CANDIDATES`), and a parse per candidate
        that would close the block."""
        best: Retry | None = None
        for choice in self._choices:
            if not span.replacement <= choice.offset <= span.close:
                continue
            if 0x80 <= program[choice.offset] <= 0xBF:
                continue  # inside a UTF-8 character: the stream could not be cut there
            for token, logit in choice.others:
                if not self._changes(program, span, choice.offset, self._token_bytes[token]):
                    continue
                margin = choice.logit - logit
                if best is None or margin < best.margin:
                    best = Retry(choice.index, token, margin)
                break  # the others are less likely
        return best

    def _changes(self, program: bytes, span: BlockSpan, offset: int, data: bytes) -> bool:
        """Whether ``data`` written at byte ``offset`` in place of what the no-op block ``span``
        went on with makes the block change something (module doc)."""
        went_on = program[offset : span.end]
        same = len(os.path.commonprefix([data, went_on]))
        if same == len(data) or offset + same > span.close:
            return False  # the same bytes, or a change inside the closing marker
        if data[same : same + 1] == b"\r" and went_on[same : same + 1] == b"\n":
            return False  # a line ending the block's lines take from the document anyway
        at_line_start = offset + same == 0 or program[offset + same - 1] == 0x0A
        if (not at_line_start and went_on[same:].lstrip(b" \t").startswith(b">")
                and (not data[same:].strip(b" \t\n")
                     or data[same:].lstrip(b" \t").startswith(b">"))):
            # A line break, spaces or arrows where the block closed after its last line: the
            # same close, spelled otherwise.
            return False
        closes = data[same:].startswith(_CLOSE) or _CLOSE.startswith(data[same:])
        if at_line_start and closes:
            # Closing the block here: a change unless the block then reads as unchanged (a head
            # block closed after its header keeps the body, one closed before its `}` keeps it).
            return not self._unchanged(program[: offset + same] + _CLOSE)
        return True


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


__all__ = ["CANDIDATES", "GO_ON_MARGIN", "Choice", "Retry", "UnchangedBlocks"]
