"""Search/replace blocks that change nothing, taken back and written again from the model's most
likely change (``retry_unchanged``).

Asked to fix a bug it does not see, a model often writes a block whose replacement is its lines
again, unchanged: the edit is a no-op (9 of the 30 dev rows of docs/quality.md, where the
rewrite baseline leaves the same rows unchanged). Such a block is still evidence: the model
chose that function, and reading it back token by token it was less sure of some tokens than of
others. Where a block closes unchanged, this takes the program back to the one choice inside
the replacement where the model's best *different* token came closest to the token it took
(the smallest logit margin), takes that token instead, and lets the model go on from there (the
rest drafted from the block's lines as before). So the program is the model's greedy program
but for one token: the most likely edit among those that change the block.

Once per block: the block written again is kept whatever it holds. Only the model's own choices
are candidates (a token the grammar forced was no choice). A candidate must change the text: a
token that spells a prefix of what the block went on with (another tokenization of the same
bytes) is not one, nor one that leaves the replacement only inside its closing marker.

Cost: while a replacement is written, each choice keeps its best :data:`CANDIDATES` other
allowed tokens (a few O(vocabulary) passes, ~0.1 ms for 151k tokens); a retry costs the forwards
of the block's rest written again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from copygram.errors import ProgramSyntaxError
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    leaves_unchanged,
    parse_blocks,
)

CANDIDATES = 4
"""How many of the best other allowed tokens each choice in a replacement keeps."""

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


@dataclass(frozen=True)
class Retry:
    """Take the program back to token ``index`` and take ``token`` there (``margin``: how far
    under the model's own choice its logit was)."""

    index: int
    token: int
    margin: float


@dataclass(frozen=True)
class BlockSpan:
    """Byte offsets in a program of one closed block: its replacement starts at
    ``replacement``, its closing marker line spans ``close`` to ``end``."""

    replacement: int
    close: int
    end: int


def scan_blocks(program: bytes) -> tuple[list[BlockSpan], bool]:
    """The closed blocks of ``program`` (a search/replace program's bytes, possibly partial), in
    order, and whether it ends inside a replacement. Linear in the program."""
    spans: list[BlockSpan] = []
    state, replacement, at = "outside", 0, 0
    while (newline := program.find(b"\n", at)) >= 0:
        line = program[at : newline + 1]
        if state == "outside" and line == _OPEN:
            state = "search"
        elif state == "search" and line == _DIVIDER:
            state, replacement = "replacement", newline + 1
        elif state == "replacement" and line == _CLOSE:
            spans.append(BlockSpan(replacement, at, newline + 1))
            state = "outside"
        at = newline + 1
    return spans, state == "replacement"


class UnchangedBlocks:
    """Finds blocks that leave their lines unchanged and the choice to take back (module doc).

    The decode loop calls :meth:`note` for each choice and :meth:`forget` where it takes program
    tokens back; :meth:`retry` after each step."""

    def __init__(self, lines: Sequence[str], token_bytes: Sequence[bytes], eos_ids: Iterable[int],
                 *, heads: bool) -> None:
        self._lines = list(lines)
        self._token_bytes = token_bytes
        self._eos = frozenset(eos_ids)
        self._heads = heads
        self._choices: list[Choice] = []
        self._checked = 0  # closed blocks examined so far
        self._retried: set[int] = set()  # blocks (by position) written again already
        self.retries = 0

    def note(self, program: bytes, index: int, token: int, logits: npt.NDArray[np.float32],
             allowed: npt.NDArray[np.bool_]) -> None:
        """The model chose ``token`` as program token ``index`` after ``program`` from
        ``logits`` over ``allowed``; kept where ``program`` ends inside a replacement."""
        if not scan_blocks(program)[1]:
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
        self._choices.append(Choice(index, len(program), taken, tuple(others)))

    def forget(self, n_tokens: int) -> None:
        """The program now holds ``n_tokens`` tokens: drop the choices past them."""
        while self._choices and self._choices[-1].index >= n_tokens:
            self._choices.pop()

    def retry(self, program: bytes) -> Retry | None:
        """Where a block closed since the last call leaves its lines unchanged and was not
        written again yet: the choice to take back and the token to take there (``None``:
        nothing to do, or no choice in the block could change it)."""
        spans, _ = scan_blocks(program)
        while self._checked < len(spans):
            position = self._checked
            self._checked += 1
            span = spans[position]
            if position in self._retried or not self._unchanged(program[: span.end]):
                continue
            found = self._best_change(program, span)
            if found is None:
                continue
            self._retried.add(position)
            self._checked = position
            self.retries += 1
            return found
        return None

    def _unchanged(self, program: bytes) -> bool:
        try:
            blocks = parse_blocks(program.decode("utf-8"), self._lines, heads=self._heads)
        except (ProgramSyntaxError, UnicodeDecodeError):
            return False
        return bool(blocks) and leaves_unchanged(blocks[-1], self._lines)

    def _best_change(self, program: bytes, span: BlockSpan) -> Retry | None:
        best: Retry | None = None
        for choice in self._choices:
            if not span.replacement <= choice.offset <= span.close:
                continue
            went_on = program[choice.offset : span.end]
            for token, logit in choice.others:
                data = self._token_bytes[token]
                same = _common_prefix(data, went_on)
                # A change: the token leaves the text the block went on with, and does so
                # before its closing marker (at the marker: another line instead of closing).
                if same == len(data) or choice.offset + same > span.close:
                    continue
                margin = choice.logit - logit
                if best is None or margin < best.margin:
                    best = Retry(choice.index, token, margin)
                break  # the others are less likely
        return best


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


__all__ = ["CANDIDATES", "BlockSpan", "Choice", "Retry", "UnchangedBlocks", "scan_blocks"]
