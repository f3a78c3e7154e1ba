"""Token-level constraints: which tokens may come next in an edit program for one document.

``compile_constraint(document, tokenizer, syntax=...)`` returns a :class:`Constraint`, a cheap
stateful matcher over the program's tokens, built from a compiled grammar that is cached per
(engine, syntax, document line count, vocabulary) for copy tags and per document for
search/replace blocks -- the xgrammar split: compile once, match per edit. See
docs/constraints.md for the guards and the costs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from copygram.constraints.base import Constraint
from copygram.constraints.document_grammar import literal_bytes
from copygram.constraints.guard import check_vocab_covers
from copygram.constraints.ranges import range_regex
from copygram.constraints.vocab import Mask, Vocab, vocab_for
from copygram.errors import ConfigError, DocumentError
from copygram.language.formats import DEFAULT_TAGS, Family, get_format
from copygram.language.lines import count_lines, split_lines
from copygram.language.types import Reach, Scope

Engine = Literal["llguidance", "outlines"]
ENGINES: tuple[str, ...] = ("llguidance", "outlines")
DEFAULT_MAX_LINES: dict[str, int] = {"llguidance": 100_000, "outlines": 100_000}
"""Largest document (in lines) each engine compiles unless ``max_lines`` says otherwise."""


def _line_count(document: str | Sequence[str]) -> int:
    if isinstance(document, str):
        return count_lines(document)
    return len(document)


def compile_constraint(
    document: str | Sequence[str],
    tokenizer: Any,
    *,
    engine: str = "llguidance",
    syntax: str = DEFAULT_TAGS,
    max_lines: int | None = None,
    ordered: bool = False,
    to_end: bool = False,
    search_scope: str | None = None,
    plan: bool = False,
    body_heads: bool = True,
    touch: Reach = (),
    only: Sequence[tuple[int, int]] = (),
) -> Constraint:
    """A fresh :class:`Constraint` for editing ``document`` (text, or its split lines) in
    ``syntax``: copy tags (``"lines"``, ``"compact"``) or search/replace blocks
    (``"search_replace"``, program mode's default: head blocks unless ``search_scope`` says
    ``"lines"`` or ``"unit"``; ``plan``: a ``Plan:`` line before the blocks; ``body_heads``
    false: no head block heads with a line inside a function's body; ``touch``:
    requirements, each line ranges of which some block's run must overlap one, the definitions
    an instruction names, blocks only; ``only``: line ranges one of which every block's run must
    overlap, a rename's definition and uses, blocks only).

    ``tokenizer`` is a copygram Backend, a Hugging Face fast tokenizer, an
    ``llguidance.LLTokenizer`` or ``"byte"``. Costs: the vocabulary view is built once per
    tokenizer object (~0.4 s for 49k tokens, guard sets included); a tag grammar once per
    (engine, syntax, line count, vocabulary): llguidance 3-9 ms, outlines ~30 ms, nearly flat in
    the line count since the range regex is O(log n) (docs/constraints.md); a block grammar once
    per document (O(lines) rules, cached); the constraint itself costs microseconds.

    ``ordered`` (copy tags): copies must keep the document's order (each starts after the
    previous one's end), which also bounds every program by the document; off, any valid range
    may be copied anywhere (edits that move code). ``to_end`` (needs ``ordered``): the program
    ends only after a copy of the document's last line. Blocks always keep the order.

    Raises :class:`DocumentError` for an empty document or one longer than ``max_lines``
    (default :data:`DEFAULT_MAX_LINES` per engine), :class:`ConfigError` for an unknown engine
    or options the syntax cannot honour, :class:`~copygram.errors.ConstraintError` for a
    vocabulary that cannot spell programs.
    """
    if engine not in ENGINES:
        raise ConfigError(f"unknown constraint engine {engine!r}; choose one of {list(ENGINES)}")
    program_format = get_format(syntax, search_scope=search_scope)
    n_lines = _line_count(document)
    if n_lines == 0:
        raise DocumentError(
            "the document is empty, so there is nothing to copy; generate the text without a "
            "copy constraint (plain generation) instead"
        )
    limit = DEFAULT_MAX_LINES[engine] if max_lines is None else max_lines
    if n_lines > limit:
        raise DocumentError(
            f"the document has {n_lines} lines, more than max_lines={limit} for the {engine} "
            "engine; raise max_lines (compile time and memory grow with it) or use the "
            "llguidance engine"
        )
    # Blocks always keep the document's order, whatever ``ordered`` says (it is the tags').
    program_format.check(_Checked(engine=engine, copy_to_end=to_end, search_plan=plan,
                                  search_scope=search_scope or program_format.default_scope))
    if (touch or only) and program_format.family != "blocks":
        raise ConfigError("touch and only act on search/replace blocks; copy tags name their "
                          "lines")
    return _BUILDERS[program_format.family](document, tokenizer, engine, syntax, n_lines,
                                            ordered, to_end, plan, search_scope, body_heads,
                                            touch, tuple(only))


@dataclass(frozen=True)
class _Checked:
    """The options :func:`compile_constraint` takes, as a format checks them."""

    engine: str
    copy_to_end: bool
    search_plan: bool
    search_scope: str
    ordered_copies: bool = True
    verify_copies: bool = False
    line_view: str = "pipe"
    merge_retyped: bool = False
    retry_unchanged: bool | None = None
    touch_named: bool | None = None


def _tags(document: str | Sequence[str], tokenizer: Any, engine: str, syntax: str,
          n_lines: int, ordered: bool, to_end: bool, plan: bool,
          search_scope: str | None, body_heads: bool,
          touch: Reach, only: Scope) -> Constraint:
    vocab = vocab_for(tokenizer)
    check_vocab_covers(vocab, literal_bytes(syntax))
    if engine == "llguidance":
        from copygram.constraints.llguidance import compile_llguidance

        return compile_llguidance(vocab, syntax, n_lines).new_constraint(ordered=ordered,
                                                                     to_end=to_end)
    from copygram.constraints.outlines import compile_outlines

    return compile_outlines(vocab, syntax, n_lines).new_constraint(ordered=ordered,
                                                                   to_end=to_end)


def _blocks(document: str | Sequence[str], tokenizer: Any, engine: str, syntax: str,
            n_lines: int, ordered: bool, to_end: bool, plan: bool,
            search_scope: str | None, body_heads: bool,
            touch: Reach, only: Scope) -> Constraint:
    from copygram.constraints.search_replace import search_replace_constraint

    lines = split_lines(document) if isinstance(document, str) else document
    return search_replace_constraint(lines, tokenizer, plan,
                                     heads=(search_scope or "head") == "head",
                                     body_heads=body_heads, touch=touch, only=only)


_BUILDERS: dict[Family, Callable[..., Constraint]] = {"tags": _tags, "blocks": _blocks}
"""Each format family's constraint (the family is decided once, by
:func:`~copygram.language.formats.get_format`)."""


__all__ = [
    "DEFAULT_MAX_LINES",
    "ENGINES",
    "Constraint",
    "Engine",
    "Mask",
    "Vocab",
    "compile_constraint",
    "range_regex",
    "vocab_for",
]
