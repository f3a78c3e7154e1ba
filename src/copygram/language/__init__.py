"""The edit-program language: ops and programs, the program formats (copy tags, whose Lark
grammars are the one definition of the tag syntaxes, and search/replace blocks), documents as
lines, the resolver and the oracles.

Pure Python with no model and no inference stack: every layer above may import it; it imports
nothing of copygram but :mod:`copygram.errors`.
"""

from __future__ import annotations

from copygram.language.formats import (
    DEFAULT_SYNTAX,
    DEFAULT_TAGS,
    ProgramFormat,
    get_format,
    parse,
    render,
)
from copygram.language.lines import count_lines, split_lines
from copygram.language.ops import Copy, Gen, Op, Program
from copygram.language.oracle import oracle
from copygram.language.resolve import resolve
from copygram.language.syntaxes import (
    Syntax,
    escape_gen_text,
    get_syntax,
    unescape_gen_text,
)
from copygram.language.types import LineRange, TokenId

__all__ = ["DEFAULT_SYNTAX", "DEFAULT_TAGS", "Copy", "Gen", "LineRange", "Op", "Program",
           "ProgramFormat", "Syntax", "TokenId", "count_lines", "escape_gen_text", "get_format",
           "get_syntax", "oracle", "parse", "render", "resolve", "split_lines",
           "unescape_gen_text"]
