"""The constraint of search/replace programs (:mod:`copygram.language.search_replace`).

Per document, a Lark grammar of O(n) rules that only admits blocks whose search part is a run of
real lines at or after the cursor, compiled by llguidance::

    f_k: (OPEN a_k)?                 the rest of the program, cursor at line k
    a_k: L_k r_k | a_{k+1}           a run starts at line k, or later
    r_k: L_{k+1} r_{k+1} | TAIL f_{k+1}   the run goes on, or the replacement follows

With heads (``search_scope = "head"``) a search part is one line and the cursor moves past the
unit it opens (:func:`~copygram.language.units.unit_end`)::

    a_k: L_k TAIL f_{u(k)+1} | a_{k+1}

With ``touch`` (requirements, each the line ranges of a definition an instruction names,
``touch_named``: a block's run must overlap a range of each), the rules come once more for each
set ``S`` of requirements met so far: ``uSf_k``/``uSa_k`` (and ``uSr_k``), where the program may
not end and may not head past the last line from which the rest can still be met, then the
rules above once all are::

    uSf_k: OPEN uSa_k
    uSa_k: L_k TAIL f_{u(k)+1} | uSa_{k+1}      the unit of k meets the last requirement
    uSa_k: L_k TAIL uTf_{u(k)+1} | uSa_{k+1}    it meets those of T (S and more, not all)

``L_k`` is line k as a search part writes it; ``TAIL`` is the divider, the replacement (lines,
none reading ``>>>>>>> REPLACE``, nor ``=======`` or ``<<<<<<< SEARCH`` unless the document has
such a line, and none holding ``>>>>>>>`` after other text unless a line of the document holds
that run: the format's markup never reaches the file) and the closing line (the marker, or a
line that closes the block after its text: :func:`~copygram.language.search_replace.read_close`)
as one lexeme (:mod:`copygram.constraints.replacement`), so that llguidance's greedy lexer ends
the replacement at the first closing line.
Marker-like document lines are left out of every run. Every program the constraint accepts
parses and resolves against its document.

Cost: building and compiling the grammar is linear in the document (~1 ms per 100 lines,
measured in tests/constraints/test_search_replace.py; with heads, linear in the units' lines
too: the document times its nesting depth), once per document text (cached); a
constraint per edit is a deep copy of the compiled matcher (~5 us). Where a run is decided (the
line's first bytes tell it apart), llguidance forces the rest of the line and the marker bytes:
:meth:`forced` returns them, and the decode loop appends them in one forward, so a search part
costs about one decode step per line.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import llguidance

from copygram.constraints.base import ProgramState
from copygram.constraints.document_grammar import regex_escape
from copygram.constraints.llguidance import MatcherMask
from copygram.constraints.replacement import tail_rules
from copygram.constraints.vocab import Mask, Vocab
from copygram.errors import ConstraintError
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    MAX_PLAN_CHARS,
    PLAN_PREFIX,
    bars_arrows,
    closes_loosely,
    may_head,
    search_line,
    searchable,
    unheld_marker_starts,
    unheld_markers,
)
from copygram.language.types import MAX_REACH, LineRange, Reach, Scope
from copygram.language.units import body_lines, unit_end


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def document_lark(lines: Sequence[str], plan: bool = False, heads: bool = False,
                  body_heads: bool = True, touch: Reach = (),
                  only: Scope = ()) -> str:
    """The per-document grammar (module doc) for the document ``lines`` (split with endings);
    with ``plan``, the program opens with one ``Plan:`` line of the model's words (at most
    :data:`MAX_PLAN_CHARS` after the prefix) before its blocks; with ``heads``, a search part is
    one head line and its block replaces the unit (module doc); without ``body_heads``, no head
    is a line inside a function's body (:func:`~copygram.language.units.body_lines`); with
    ``touch`` (requirements, at most :data:`MAX_REACH`, each line ranges, 1-based and inclusive),
    a block's run must overlap a range of each (:func:`_untouched_rules`; where no program can,
    the grammar is the one without ``touch``); with ``only`` (line ranges, 1-based and
    inclusive: a rename's definition and uses), a block's run must overlap one of them (a head
    block's: the unit it opens), so that no block edits elsewhere."""
    if len(touch) > MAX_REACH:
        raise ValueError(f"touch holds {len(touch)} requirements; at most {MAX_REACH}")
    n = len(lines)
    inside = body_lines(lines) if heads and not body_heads else frozenset()
    ok = [False] + [searchable(line) and k not in inside and (not heads or may_head(line))
                    and (not only or _within(only, k, unit_end(lines, k) if heads else k))
                    for k, line in enumerate(lines, start=1)] + [False]
    # has_run[k]: some run can start at line k or later.
    has_run = [False] * (n + 2)
    for k in range(n, 0, -1):
        has_run[k] = ok[k] or has_run[k + 1]
    untouched = _untouched_rules(lines, ok, has_run, heads, touch) if touch else []
    first = "u0f1" if untouched else "f1" if has_run[1] else '""'
    rules = ["start: " + ("PLAN " if plan else "") + first, *untouched]
    for k in range(1, n + 1):
        if has_run[k]:
            rules.append(f"f{k}: (OPEN a{k})?")
            after = _after_head(k, has_run, lines) if heads else f"r{k}"
            starts = [f"{_literal(search_line(lines[k - 1]))} {after}"] if ok[k] else []
            if has_run[k + 1]:
                starts.append(f"a{k + 1}")
            rules.append(f"a{k}: " + " | ".join(starts))
        if ok[k] and not heads:
            rest = f"TAIL f{k + 1}" if has_run[k + 1] else "TAIL"
            goes_on = ([f"{_literal(search_line(lines[k]))} r{k + 1} | "]
                       if k < n and ok[k + 1] else [""])
            rules.append(f"r{k}: {goes_on[0]}{rest}")
    rules.append(f"OPEN: {_literal(BLOCK_OPEN)}")
    # The format's own marker lines may not be written into the file, unless it holds them.
    rules += tail_rules(unheld_markers(lines), bars_arrows(lines), closes_loosely(lines),
                        unheld_marker_starts(lines))
    if plan:
        rules.append(f"PLAN: /{regex_escape(PLAN_PREFIX)}[^\\n]{{1,{MAX_PLAN_CHARS}}}\\n/")
    return "\n".join(rules) + "\n"


def _within(only: Scope, first: int, last: int) -> bool:
    """Whether lines ``first``-``last`` overlap a range of ``only``."""
    return any(start <= last and first <= end for start, end in only)


def _after_head(k: int, has_run: Sequence[bool], lines: Sequence[str]) -> str:
    """What follows head line ``k``: the tail, then the blocks after its unit."""
    following = unit_end(lines, k) + 1
    return f"TAIL f{following}" if has_run[following] else "TAIL"


def _untouched_rules(lines: Sequence[str], ok: Sequence[bool], has_run: Sequence[bool],
                     heads: bool, touch: Reach) -> list[str]:
    """The rules of the program before its blocks' runs have overlapped a range of every
    requirement of ``touch``: for each set ``S`` of requirements met so far (a bit mask), the
    same blocks (``u{S}f_k``, ``u{S}a_k``, and without heads ``u{S}r_k``: a run so far), but no
    end, and no block after which the rest can no longer be met; the block that meets the last
    one goes on in the grammar's own rules (``f_k``, ``r_k``). Empty where no program can meet
    them all. Linear in the document times the ``2 ** len(touch)`` sets."""
    n = len(lines)
    full = (1 << len(touch)) - 1
    hit = [0] * (n + 2)  # hit[k]: the requirements one of whose ranges holds line k
    for bit, spans in enumerate(touch):
        for start, end in spans:
            for k in range(max(1, start), min(n, end) + 1):
                hit[k] |= 1 << bit
    ends = {k: unit_end(lines, k) for k in range(1, n + 1) if heads and ok[k]}
    meets = {k: _bits(hit, k, ends[k]) for k in ends}  # what a head block at k overlaps
    # ua[S][k]: with S met, a block may start at line k or later and the program still meet
    # every requirement; ur[S][k] (without heads): so may a run that ends at line k so far.
    ua = [[False] * (n + 2) for _ in range(full)]
    ur = [[False] * (n + 2) for _ in range(full)]

    def goes_on(table: list[list[bool]], met: int, k: int) -> bool:
        return met == full or table[met][k]

    for k in range(n, 0, -1):
        for met in range(full):
            if not heads:
                ur[met][k] = ((k < n and ok[k + 1] and goes_on(ur, met | hit[k + 1], k + 1))
                              or ua[met][k + 1])
        for met in range(full):
            if heads:
                reach = ok[k] and goes_on(ua, met | meets[k], ends[k] + 1)
            else:
                reach = ok[k] and goes_on(ur, met | hit[k], k)
            ua[met][k] = reach or ua[met][k + 1]
    if not ua[0][1]:
        return []
    tables = _ReachTables(full, hit, ends, meets, ua, ur)
    rules: list[str] = []
    for met in range(full):
        for k in range(1, n + 1):
            if ua[met][k]:
                rules += _untouched_at(lines, k, met, ok, has_run, heads, tables)
    return rules


@dataclass(frozen=True)
class _ReachTables:
    """:func:`_untouched_rules`' tables: ``full`` every requirement's bit; ``hit[k]`` the
    requirements line k holds; ``ends``/``meets`` each head's unit end and the requirements its
    unit overlaps; ``ua``/``ur`` the programs that can still meet them all, by set met."""

    full: int
    hit: list[int]
    ends: dict[int, int]
    meets: dict[int, int]
    ua: list[list[bool]]
    ur: list[list[bool]]


def _bits(hit: Sequence[int], first: int, last: int) -> int:
    found = 0
    for k in range(first, last + 1):
        found |= hit[k]
    return found


def _untouched_at(lines: Sequence[str], k: int, met: int, ok: Sequence[bool],
                  has_run: Sequence[bool], heads: bool, tables: _ReachTables) -> list[str]:
    """Line ``k``'s rules with the requirements ``met`` met (:func:`_untouched_rules`)."""
    n, full, hit, ua, ur = len(lines), tables.full, tables.hit, tables.ua, tables.ur
    rules = [f"u{met}f{k}: OPEN u{met}a{k}"]
    starts = []
    line = _literal(search_line(lines[k - 1]))
    if heads and ok[k]:
        now, following = met | tables.meets[k], tables.ends[k] + 1
        if now == full:
            starts.append(f"{line} {_after_head(k, has_run, lines)}")
        elif ua[now][following]:
            starts.append(f"{line} TAIL u{now}f{following}")
    elif not heads and ok[k]:
        now = met | hit[k]
        if now == full:
            starts.append(f"{line} r{k}")
        elif ur[now][k]:
            starts.append(f"{line} u{now}r{k}")
    if ua[met][k + 1]:
        starts.append(f"u{met}a{k + 1}")
    rules.append(f"u{met}a{k}: " + " | ".join(starts))
    # A run so far (without heads) reaches this line with ``met`` only where ``ur`` allows it.
    if not heads and ok[k] and ur[met][k]:
        nxt = k + 1
        more = []
        if k < n and ok[nxt]:
            now = met | hit[nxt]
            if now == full:
                more.append(f"{_literal(search_line(lines[k]))} r{nxt}")
            elif ur[now][nxt]:
                more.append(f"{_literal(search_line(lines[k]))} u{now}r{nxt}")
        if ua[met][nxt]:
            more.append(f"TAIL u{met}f{nxt}")
        rules.append(f"u{met}r{k}: " + " | ".join(more))
    return rules


@dataclass(frozen=True, eq=False)
class SearchReplaceGrammar:
    """The compiled grammar for one document text and vocabulary; :meth:`new_constraint` per
    edit."""

    vocab: Vocab
    lines: tuple[str, ...]
    grammar: str = field(repr=False)
    template: llguidance.LLMatcher = field(repr=False)

    def new_constraint(self) -> SearchReplaceConstraint:
        return SearchReplaceConstraint(self)


@functools.lru_cache(maxsize=16)
def compile_search_replace(vocab: Vocab, lines: tuple[str, ...], plan: bool = False,
                           heads: bool = False, body_heads: bool = True,
                           touch: Reach = (),
                           only: Scope = ()) -> SearchReplaceGrammar:
    """Build and compile the grammar of ``lines`` (cached per document text, vocabulary,
    ``plan``, ``heads``, ``body_heads``, ``touch`` and ``only``)."""
    grammar = document_lark(lines, plan, heads, body_heads, touch, only)
    # At a run's first line every later line is a candidate, so an Earley row holds ~2 items per
    # line: llguidance's default cap (2000 items) would stop at ~1000 lines.
    n = len(lines)
    # With ``touch`` the rules come once per set of requirements not yet met, and once after.
    copies = 1 << len(touch)
    limits = llguidance.LLParserLimits(max_items_in_row=max(2000, 3 * copies * n + 64),
                                       step_max_items=max(50_000, 30 * copies * n))
    template = llguidance.LLMatcher(vocab.ll_tokenizer, llguidance.grammar_from("lark", grammar),
                                    log_level=0, limits=limits)
    if template.is_error():
        raise ConstraintError(f"llguidance rejected the search/replace grammar: "
                              f"{template.get_error()}")
    return SearchReplaceGrammar(vocab, lines, grammar, template)


class SearchReplaceConstraint(ProgramState):
    """A :class:`~copygram.constraints.base.Constraint` over search/replace programs; no copy
    op ever closes (the copies are implicit), so :meth:`consume` returns ``None``."""

    def __init__(self, compiled: SearchReplaceGrammar) -> None:
        super().__init__(compiled.vocab)
        self._n_lines = len(compiled.lines)
        self._matcher = compiled.template.deep_copy()
        self._mask = MatcherMask(compiled.vocab)

    @property
    def n_lines(self) -> int:
        return self._n_lines

    @property
    def done(self) -> bool:
        return not self._finished and bool(self._matcher.is_accepting())

    def fill_allowed(self, out: Mask) -> None:
        self._check_mask(out)
        if self._finished:
            out[:] = False
            return
        self._mask.fill(self._matcher, out)
        out[self._vocab.eos_token_id] = self.done

    def consume(self, token_id: int) -> LineRange | None:
        if token_id == self._vocab.eos_token_id and not self._finished:
            if not self.done:
                raise ConstraintError("EOS is not allowed here: the last block is not closed")
            self._finished = True
            return None
        self._check_consumable(token_id)
        if token_id >= self._mask.ll_size or self._matcher.try_consume_tokens([token_id]) != 1:
            raise ConstraintError(
                f"token {token_id} {self._tokens[token_id]!r} is not allowed after "
                f"{self.program_text[-40:]!r}: a search part must be a run of document lines "
                "after the previous block's")
        self._append(token_id)
        return None

    def rollback(self, n_tokens: int) -> None:
        n_tokens = self._check_rollback(n_tokens)
        if not n_tokens:
            return
        if not self._matcher.rollback(n_tokens):
            raise ConstraintError(f"llguidance could not roll back {n_tokens} tokens")
        self._drop(n_tokens)

    def forced(self) -> list[int]:
        if self._finished or self.done:
            return []
        return [int(t) for t in self._matcher.compute_ff_tokens()]


def search_replace_constraint(lines: Sequence[str], tokenizer: object, plan: bool = False,
                              heads: bool = False, body_heads: bool = True,
                              touch: Reach = (),
                              only: Sequence[tuple[int, int]] = ()) -> SearchReplaceConstraint:
    """A fresh constraint for search/replace programs over the document ``lines``; ``tokenizer``
    as :func:`~copygram.constraints.compile_constraint` takes it; ``plan``: the program opens
    with a ``Plan:`` line; ``heads``: search parts are head lines; ``body_heads``: a head may be
    a line inside a function's body; ``touch``: requirements, each line ranges of which some
    block's run must overlap one; ``only``: line ranges one of which every block's run must
    overlap (:func:`document_lark`)."""
    from copygram.constraints.guard import check_vocab_covers
    from copygram.constraints.vocab import vocab_for

    vocab = vocab_for(tokenizer)
    check_vocab_covers(vocab, "".join(sorted(set(BLOCK_OPEN + DIVIDER + BLOCK_CLOSE))).encode())
    return compile_search_replace(vocab, tuple(lines), plan, heads, body_heads,
                                  tuple(tuple((int(a), int(b)) for a, b in spans)
                                        for spans in touch),
                                  tuple((int(a), int(b)) for a, b in only)).new_constraint()


__all__ = ["SearchReplaceConstraint", "SearchReplaceGrammar", "compile_search_replace",
           "document_lark", "search_replace_constraint"]
