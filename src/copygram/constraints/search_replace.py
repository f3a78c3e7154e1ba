"""The constraint of search/replace programs (:mod:`copygram.language.search_replace`).

Per document, a Lark grammar of O(n) rules that only admits blocks whose search part is a run of
real lines at or after the cursor, compiled by llguidance::

    f_k: (OPEN a_k)?                 the rest of the program, cursor at line k
    a_k: L_k r_k | a_{k+1}           a run starts at line k, or later
    r_k: L_{k+1} r_{k+1} | TAIL f_{k+1}   the run goes on, or the replacement follows

With heads (``search_scope = "head"``) a search part is one line and the cursor moves past the
unit it opens (:func:`~copygram.language.units.unit_end`)::

    a_k: L_k TAIL f_{u(k)+1} | a_{k+1}

With ``touch`` (line ranges: the definitions an instruction names, ``touch_named``), the rules
come twice: ``uf_k``/``ua_k`` (and ``ur_k``) before a block's run has overlapped a range, with no
empty program and no head past the last line from which a range can still be reached, and the
rules above once one has::

    uf_k: OPEN ua_k
    ua_k: L_k TAIL f_{u(k)+1} | ua_{k+1}       the unit of k overlaps a range
    ua_k: L_k TAIL uf_{u(k)+1} | ua_{k+1}      it does not

``L_k`` is line k as a search part writes it; ``TAIL`` is the divider, the replacement (lines,
none reading ``>>>>>>> REPLACE``, nor ``=======`` or ``<<<<<<< SEARCH`` unless the document has
such a line: the format's markup never reaches the file) and the closing marker as one lexeme,
so that llguidance's greedy lexer ends the replacement at the first closing marker.
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
from copygram.constraints.vocab import Mask, Vocab
from copygram.errors import ConstraintError
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    MAX_PLAN_CHARS,
    PLAN_PREFIX,
    search_line,
    searchable,
    unheld_markers,
)
from copygram.language.types import LineRange
from copygram.language.units import body_lines, unit_end


def _char_class_except(chars: str) -> str:
    """Any one character but those of ``chars`` and ``\\n``."""
    return "[^" + "".join("\\" + c if c in "]\\^-[" else c for c in chars) + "\\n]"


_Trie = dict[str, "_Trie"]


def line_except(*words: str) -> str:
    """A regex of one line (any text, then ``\\n``) whose text is none of ``words`` (each
    without ``\\n``): the complement of a finite set, spelled along the words' trie."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def rest(node: _Trie) -> str:
        # Text s such that (the node's prefix) + s is no word: a child's character and what
        # follows it, or a character that leaves every word here and then anything.
        children = sorted(c for c in node if c)
        parts = [regex_escape(c) + rest(node[c]) for c in children]
        parts.append(_char_class_except("".join(children)) + "[^\\n]*")
        return "(?:" + "|".join(parts) + ")" + ("" if "" in node else "?")

    return rest(trie) + "\\n"


def tail_regex(banned: Sequence[str] = ()) -> str:
    """The divider, the replacement's lines and the closing marker, as one regex; no
    replacement line reads as the closing marker or as one of the ``banned`` marker lines."""
    close = BLOCK_CLOSE.rstrip("\n")
    others = [line.rstrip("\n") for line in banned]
    return (regex_escape(DIVIDER.rstrip("\n")) + "\\n" + "(?:" + line_except(close, *others)
            + ")*" + regex_escape(close) + "\\n")


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def document_lark(lines: Sequence[str], plan: bool = False, heads: bool = False,
                  body_heads: bool = True, touch: Sequence[tuple[int, int]] = ()) -> str:
    """The per-document grammar (module doc) for the document ``lines`` (split with endings);
    with ``plan``, the program opens with one ``Plan:`` line of the model's words (at most
    :data:`MAX_PLAN_CHARS` after the prefix) before its blocks; with ``heads``, a search part is
    one head line and its block replaces the unit (module doc); without ``body_heads``, no head
    is a line inside a function's body (:func:`~copygram.language.units.body_lines`); with
    ``touch`` (line ranges, 1-based and inclusive), some block's run must overlap one of them
    (:func:`_untouched_rules`; where no run can, the grammar is the one without ``touch``)."""
    n = len(lines)
    inside = body_lines(lines) if heads and not body_heads else frozenset()
    ok = [False] + [searchable(line) and k not in inside
                    for k, line in enumerate(lines, start=1)] + [False]
    # has_run[k]: some run can start at line k or later.
    has_run = [False] * (n + 2)
    for k in range(n, 0, -1):
        has_run[k] = ok[k] or has_run[k + 1]
    untouched = _untouched_rules(lines, ok, has_run, heads, touch) if touch else []
    first = "uf1" if untouched else "f1" if has_run[1] else '""'
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
    rules.append(f"TAIL: /{tail_regex(unheld_markers(lines))}/")
    if plan:
        rules.append(f"PLAN: /{regex_escape(PLAN_PREFIX)}[^\\n]{{1,{MAX_PLAN_CHARS}}}\\n/")
    return "\n".join(rules) + "\n"


def _after_head(k: int, has_run: Sequence[bool], lines: Sequence[str]) -> str:
    """What follows head line ``k``: the tail, then the blocks after its unit."""
    following = unit_end(lines, k) + 1
    return f"TAIL f{following}" if has_run[following] else "TAIL"


def _untouched_rules(lines: Sequence[str], ok: Sequence[bool], has_run: Sequence[bool],
                     heads: bool, touch: Sequence[tuple[int, int]]) -> list[str]:
    """The rules of the program before a block's run has overlapped a ``touch`` range: the same
    blocks (``uf_k``, ``ua_k``, and without heads ``ur_k``: a run so far clear of them), but no
    end, and no block whose run takes the cursor past the last line from which a run can still
    reach one; a block whose run overlaps one goes on in the grammar's own rules (``f_k``,
    ``r_k``). Empty where no run can overlap one. Linear in the document."""
    n = len(lines)
    hit = [False] * (n + 2)
    for start, end in touch:
        for k in range(max(1, start), min(n, end) + 1):
            hit[k] = True
    hits_before = [0] * (n + 2)  # hits_before[k]: touched lines among 1..k-1
    for k in range(1, n + 1):
        hits_before[k + 1] = hits_before[k] + hit[k]
    # ua[k]: a block may start at line k or later and the program still reach a range;
    # ur[k] (without heads): a run that ends at line k so far clear of every range may still.
    ua = [False] * (n + 2)
    ur = [False] * (n + 2)
    ends = {k: unit_end(lines, k) for k in range(1, n + 1) if heads and ok[k]}
    for k in range(n, 0, -1):
        if heads:
            reach = ok[k] and (hits_before[ends[k] + 1] > hits_before[k] or ua[ends[k] + 1])
        else:
            ur[k] = (k < n and ok[k + 1] and (hit[k + 1] or ur[k + 1])) or ua[k + 1]
            reach = ok[k] and (hit[k] or ur[k])
        ua[k] = reach or ua[k + 1]
    if not ua[1]:
        return []
    rules: list[str] = []
    for k in range(1, n + 1):
        if not ua[k]:
            continue
        rules.append(f"uf{k}: OPEN ua{k}")
        starts = []
        line = _literal(search_line(lines[k - 1]))
        if heads and ok[k]:
            following = ends[k] + 1
            if hits_before[following] > hits_before[k]:
                starts.append(f"{line} {_after_head(k, has_run, lines)}")
            elif ua[following]:
                starts.append(f"{line} TAIL uf{following}")
        elif not heads and ok[k] and (hit[k] or ur[k]):
            starts.append(f"{line} {'r' if hit[k] else 'ur'}{k}")
        if ua[k + 1]:
            starts.append(f"ua{k + 1}")
        rules.append(f"ua{k}: " + " | ".join(starts))
        if not heads and ok[k] and ur[k]:
            nxt = k + 1
            goes_on = ([f"{_literal(search_line(lines[k]))} {'r' if hit[nxt] else 'ur'}{nxt}"]
                       if k < n and ok[nxt] and (hit[nxt] or ur[nxt]) else [])
            ends_here = [f"TAIL uf{nxt}"] if ua[nxt] else []
            rules.append(f"ur{k}: " + " | ".join(goes_on + ends_here))
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
                           touch: tuple[tuple[int, int], ...] = ()) -> SearchReplaceGrammar:
    """Build and compile the grammar of ``lines`` (cached per document text, vocabulary,
    ``plan``, ``heads``, ``body_heads`` and ``touch``)."""
    grammar = document_lark(lines, plan, heads, body_heads, touch)
    # At a run's first line every later line is a candidate, so an Earley row holds ~2 items per
    # line: llguidance's default cap (2000 items) would stop at ~1000 lines.
    n = len(lines)
    # With ``touch`` the rules come twice (before and after a run has reached a range).
    copies = 2 if touch else 1
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
                              touch: Sequence[tuple[int, int]] = ()) -> SearchReplaceConstraint:
    """A fresh constraint for search/replace programs over the document ``lines``; ``tokenizer``
    as :func:`~copygram.constraints.compile_constraint` takes it; ``plan``: the program opens
    with a ``Plan:`` line; ``heads``: search parts are head lines; ``body_heads``: a head may be
    a line inside a function's body; ``touch``: line ranges of which some block's run must
    overlap one (:func:`document_lark`)."""
    from copygram.constraints.guard import check_vocab_covers
    from copygram.constraints.vocab import vocab_for

    vocab = vocab_for(tokenizer)
    check_vocab_covers(vocab, "".join(sorted(set(BLOCK_OPEN + DIVIDER + BLOCK_CLOSE))).encode())
    return compile_search_replace(vocab, tuple(lines), plan, heads, body_heads,
                                  tuple((int(a), int(b)) for a, b in touch)).new_constraint()


__all__ = ["SearchReplaceConstraint", "SearchReplaceGrammar", "compile_search_replace",
           "document_lark", "line_except", "search_replace_constraint", "tail_regex"]
