"""The outlines_core engine: the grammar converted to one regex, indexed over the vocabulary.

The regex comes from the same Lark file (:func:`~copygram.constraints.document_grammar.document_regex`),
so both engines accept the same language; the token guards are shared.

Working around outlines_core 0.2.14: in an ``Index``, a *final* state keeps only the transitions
that lead to final states (``(?:ab)*`` over the tokens ``a``, ``b`` allows nothing but EOS at the
start). Every op boundary of an edit program is final, so we append a sentinel character
(U+10FFFF) to the regex: the only final states are then after the sentinel, and "the program may
end here" means "the sentinel could come next". The sentinel and its suffixes are extra,
out-of-range token ids; real tokens that would enter the sentinel (a byte-level vocabulary can
spell it) are removed from the masks.

Costs: building the ``Index`` takes ~30 ms for a 49k vocabulary at 10..100k lines (the range
regex is O(log n), so n barely matters; docs/constraints.md). The mask of each DFA state is
built on first use (~2-5 ms) and cached with the compiled grammar.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field

import numpy as np

from copygram.constraints.base import GuardedConstraint
from copygram.constraints.document_grammar import copy_tag, document_regex
from copygram.constraints.guard import GuardSets, Tracker, guard_sets
from copygram.constraints.vocab import Mask, Vocab
from copygram.errors import ConstraintError, missing_dependency

try:
    import outlines_core
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_dependency("outlines_core", "outlines") from exc

SENTINEL = "\U0010ffff".encode()


@functools.lru_cache(maxsize=4)
def _vocabulary(vocab: Vocab) -> outlines_core.Vocabulary:
    """The outlines_core vocabulary: real tokens by bytes, the sentinel and its suffixes."""
    by_bytes: dict[bytes, list[int]] = {}
    for token_id, data in enumerate(vocab.token_bytes):
        if data and token_id != vocab.eos_token_id:
            by_bytes.setdefault(data, []).append(token_id)
    base = vocab.vocab_size
    for k in range(len(SENTINEL)):
        by_bytes.setdefault(SENTINEL[k:], []).append(base + k)
    return outlines_core.Vocabulary(vocab.eos_token_id, by_bytes)


@dataclass(frozen=True, eq=False)
class OutlinesGrammar:
    """The compiled grammar for one (syntax, document size, vocabulary): an outlines Index.

    Immutable apart from a lock-protected cache of per-state masks.
    """

    vocab: Vocab
    syntax: str
    n_lines: int
    index: outlines_core.Index = field(repr=False)
    tracker: Tracker = field(repr=False)
    sets: GuardSets = field(repr=False)
    _masks: dict[int, Mask] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def new_constraint(self, *, ordered: bool = False,
                       to_end: bool = False) -> OutlinesConstraint:
        """A fresh matcher; ``ordered`` adds the order guard (copies in document order);
        ``to_end``: the program ends only after a copy of the last line."""
        return OutlinesConstraint(self, ordered=ordered, to_end=to_end)

    @functools.cached_property
    def _sentinel_starters(self) -> frozenset[int]:
        first = SENTINEL[0]
        return frozenset(i for i, data in enumerate(self.vocab.token_bytes) if first in data)

    def accepts_end(self, state: int) -> bool:
        # Inside gen text the sentinel is just a character; only at an op boundary does it end.
        after = self.index.get_next_state(state, self.vocab.vocab_size)
        return after is not None and bool(self.index.is_final_state(after))

    def _enters_sentinel(self, state: int) -> bool:
        if self.index.is_final_state(state):
            return True
        base = self.vocab.vocab_size
        for k in range(1, len(SENTINEL)):
            after = self.index.get_next_state(state, base + k)
            if after is not None and self.index.is_final_state(after):
                return True
        return False

    def base_mask(self, state: int) -> Mask:
        """Real tokens the regex allows in ``state`` (EOS and sentinel excluded); cached."""
        mask = self._masks.get(state)
        if mask is not None:
            return mask
        size = self.vocab.vocab_size
        ids = np.asarray(self.index.get_allowed_tokens(state), dtype=np.intp)
        mask = np.zeros(size, dtype=np.bool_)
        mask[ids[ids < size]] = True
        mask[self.vocab.eos_token_id] = False
        for token_id in self._sentinel_starters:
            if mask[token_id]:
                after = self.index.get_next_state(state, token_id)
                if after is None or self._enters_sentinel(after):
                    mask[token_id] = False
        mask.flags.writeable = False
        with self._lock:
            self._masks[state] = mask
        return mask


@functools.lru_cache(maxsize=16)
def compile_outlines(vocab: Vocab, syntax: str, n_lines: int) -> OutlinesGrammar:
    """Build the outlines_core Index for the document size; ~30 ms for 49k tokens (cached)."""
    regex = f"(?:{document_regex(syntax, n_lines)}){SENTINEL.decode()}"
    try:
        index = outlines_core.Index(regex, _vocabulary(vocab))
    except (ValueError, RuntimeError) as exc:
        raise ConstraintError(f"outlines_core could not index the {syntax!r} grammar: {exc}") from None
    tag = copy_tag(syntax)
    return OutlinesGrammar(
        vocab, syntax, n_lines, index, Tracker(tag, n_lines), guard_sets(vocab, tag)
    )


class OutlinesConstraint(GuardedConstraint):
    """A :class:`~copygram.constraints.base.Constraint` walking an outlines_core Index.

    ``forced()``: while exactly one token (and not EOS) is allowed, that token. With a real
    vocabulary this is rarely more than nothing (``lines="`` has many spellings).
    """

    _FORCED_LIMIT = 64

    def __init__(self, compiled: OutlinesGrammar, *, ordered: bool = False,
                 to_end: bool = False) -> None:
        tracker = (Tracker(compiled.tracker.tag, compiled.n_lines, ordered=True,
                           to_end=to_end) if ordered or to_end else compiled.tracker)
        super().__init__(compiled.vocab, tracker, compiled.sets)
        self._grammar = compiled
        self._index_states: list[int] = [compiled.index.get_initial_state()]

    def _fill_base(self, out: Mask) -> None:
        out[:] = self._grammar.base_mask(self._index_states[-1])

    def _try_advance(self, token_id: int) -> bool:
        state = self._index_states[-1]
        if not self._grammar.base_mask(state)[token_id]:
            return False
        after = self._grammar.index.get_next_state(state, token_id)
        if after is None:
            return False
        self._index_states.append(after)
        return True

    def _rollback_base(self, n_tokens: int) -> None:
        del self._index_states[-n_tokens:]

    def _accepting(self) -> bool:
        return self._grammar.accepts_end(self._index_states[-1])

    def _forced_candidates(self) -> list[int]:
        forced: list[int] = []
        mask = np.empty(self.vocab_size, dtype=np.bool_)
        try:
            while len(forced) < self._FORCED_LIMIT and not self.done:
                self.fill_allowed(mask)
                (ids,) = np.nonzero(mask)
                if len(ids) != 1:
                    break
                token_id = int(ids[0])
                self.consume(token_id)
                forced.append(token_id)
        finally:
            self.rollback(len(forced))
        return forced
