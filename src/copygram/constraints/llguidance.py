"""The llguidance engine: the Lark grammar compiled by llguidance, plus the token guards."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import llguidance
import numpy as np
import numpy.typing as npt

from copygram.constraints.base import GuardedConstraint
from copygram.constraints.document_grammar import copy_tag, document_lark
from copygram.constraints.guard import GuardSets, Tracker, guard_sets
from copygram.constraints.vocab import Mask, Vocab
from copygram.errors import ConstraintError


@dataclass(frozen=True, eq=False)
class LLGuidanceGrammar:
    """The compiled, immutable grammar for one (syntax, document size, vocabulary).

    ``template`` is a fresh matcher that is never advanced; each edit deep-copies it (~5 us).
    """

    vocab: Vocab
    syntax: str
    n_lines: int
    grammar: str = field(repr=False)
    template: llguidance.LLMatcher = field(repr=False)
    tracker: Tracker = field(repr=False)
    sets: GuardSets = field(repr=False)

    def new_constraint(self, *, ordered: bool = False,
                       to_end: bool = False) -> LLGuidanceConstraint:
        """A fresh matcher; ``ordered`` adds the order guard (copies in document order);
        ``to_end``: the program ends only after a copy of the last line."""
        return LLGuidanceConstraint(self, ordered=ordered, to_end=to_end)


@functools.lru_cache(maxsize=32)
def compile_llguidance(vocab: Vocab, syntax: str, n_lines: int) -> LLGuidanceGrammar:
    """Compile the per-document grammar; ~1 ms for a 49k vocabulary at any n (cached).

    The first call for a vocabulary also builds its guard sets (~30 ms).
    """
    grammar = llguidance.grammar_from("lark", document_lark(syntax, n_lines))
    template = llguidance.LLMatcher(vocab.ll_tokenizer, grammar, log_level=0)
    if template.is_error():
        raise ConstraintError(f"llguidance rejected the {syntax!r} grammar: {template.get_error()}")
    tag = copy_tag(syntax)
    return LLGuidanceGrammar(
        vocab, syntax, n_lines, grammar, template, Tracker(tag, n_lines), guard_sets(vocab, tag)
    )


class MatcherMask:
    """An ``llguidance.LLMatcher``'s token mask as a bool array over a :class:`Vocab`: one
    bitmask computed in place (~0.1-1 ms), unpacked; ids past llguidance's vocabulary and its
    EOS ids are never allowed (the caller decides about EOS)."""

    def __init__(self, vocab: Vocab) -> None:
        self.ll_size = int(vocab.ll_tokenizer.vocab_size)
        self._bitmask: npt.NDArray[np.int32] = np.zeros((self.ll_size + 31) // 32,
                                                         dtype=np.int32)
        self._ll_eos = [t for t in vocab.ll_tokenizer.eos_tokens if t < self.ll_size]

    def fill(self, matcher: llguidance.LLMatcher, out: Mask) -> None:
        bitmask = self._bitmask
        matcher.unsafe_compute_mask_ptr(bitmask.ctypes.data, bitmask.nbytes)
        bits = np.unpackbits(bitmask.view(np.uint8), count=self.ll_size, bitorder="little")
        out[: self.ll_size] = bits.view(np.bool_)
        out[self.ll_size :] = False
        out[self._ll_eos] = False


class LLGuidanceConstraint(GuardedConstraint):
    """A :class:`~copygram.constraints.base.Constraint` driven by an ``llguidance.LLMatcher``.

    ``forced()`` is llguidance's fast-forward tokens (the canonical tokenization of the bytes
    the grammar forces, e.g. ``opy lines="`` after ``<c``), checked by the guards.
    """

    def __init__(self, compiled: LLGuidanceGrammar, *, ordered: bool = False,
                 to_end: bool = False) -> None:
        tracker = (Tracker(compiled.tracker.tag, compiled.n_lines, ordered=True,
                           to_end=to_end) if ordered or to_end else compiled.tracker)
        super().__init__(compiled.vocab, tracker, compiled.sets)
        self._matcher = compiled.template.deep_copy()
        self._mask = MatcherMask(compiled.vocab)
        self._ll_size = self._mask.ll_size

    def _fill_base(self, out: Mask) -> None:
        self._mask.fill(self._matcher, out)

    def _try_advance(self, token_id: int) -> bool:
        if token_id >= self._ll_size:
            return False
        return bool(self._matcher.try_consume_tokens([token_id]) == 1)

    def _rollback_base(self, n_tokens: int) -> None:
        if not self._matcher.rollback(n_tokens):
            raise ConstraintError(f"llguidance could not roll back {n_tokens} tokens")

    def _accepting(self) -> bool:
        return bool(self._matcher.is_accepting())

    def _forced_candidates(self) -> list[int]:
        return [int(t) for t in self._matcher.compute_ff_tokens()]
