"""The edit-program language: ops and programs, the surface syntaxes (their Lark grammars are the
one definition of the language), documents as lines, the resolver and the oracles.

Pure Python with no model and no inference stack: every layer above may import it; it imports
nothing of copygram but :mod:`copygram.errors`.
"""

from __future__ import annotations

from copygram.language.lines import count_lines, split_lines
from copygram.language.ops import Copy, Gen, Op, Program
from copygram.language.oracle import oracle
from copygram.language.resolve import resolve
from copygram.language.syntaxes import (
    DEFAULT_SYNTAX,
    Syntax,
    escape_gen_text,
    get_syntax,
    parse,
    render,
    unescape_gen_text,
)
from copygram.language.types import LineRange, TokenId

__all__ = ["DEFAULT_SYNTAX", "Copy", "Gen", "LineRange", "Op", "Program", "Syntax", "TokenId",
           "count_lines", "escape_gen_text", "get_syntax", "oracle", "parse", "render", "resolve",
           "split_lines", "unescape_gen_text"]
