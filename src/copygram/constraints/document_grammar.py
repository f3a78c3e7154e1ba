"""Per-document constraint grammars derived from the syntax's own Lark file.

The Lark file (e.g. ``grammars/lines.lark``) is the single source of the language. Constraints use
it in two ways:

* :func:`document_lark` replaces its ``LINE_NUMBER`` terminal by ``range_regex(1, n)``, giving the
  grammar llguidance compiles for a document of ``n`` lines;
* :func:`document_regex` converts the same (regular) grammar into one regex for outlines_core.

:func:`copy_tag` takes the literal pieces of the copy op (``<copy lines="``, ``-``, ``"/>``) that
:class:`~copygram.language.syntaxes.Syntax` read from the same file; the token-level guards
(:mod:`copygram.constraints.guard`) track them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copygram.constraints.ranges import range_regex
from copygram.errors import ConstraintError
from copygram.language.syntaxes import LINE_NUMBER, get_syntax, grammar_parser

if TYPE_CHECKING:
    import lark

_LINE_NUMBER_DEF = re.compile(rf"^{LINE_NUMBER}\s*:.*$", re.MULTILINE)


def document_lark(syntax: str, n_lines: int) -> str:
    """The syntax's Lark grammar with ``LINE_NUMBER`` restricted to 1..n_lines."""
    grammar = get_syntax(syntax).grammar
    matches = _LINE_NUMBER_DEF.findall(grammar)
    if len(matches) != 1:
        raise ConstraintError(
            f"syntax {syntax!r} must define the terminal {LINE_NUMBER} exactly once "
            f"to be constrained per document; found {len(matches)} definitions"
        )
    return _LINE_NUMBER_DEF.sub(
        lambda _: f"{LINE_NUMBER}: /{range_regex(1, n_lines)}/", grammar, count=1
    )


def _lark(syntax: str) -> lark.Lark:
    return grammar_parser(get_syntax(syntax).grammar_file)


@dataclass(frozen=True)
class CopyTag:
    """The literal bytes around the two line numbers of a copy op: ``open i sep j close``, and
    the gen op's tags, which tell the trackers where gen text (free to hold ``<``) runs.

    ``exclusive``: how many bytes of ``open`` are written before the text can only be a copy tag
    (``<c`` of ``<copy lines="``; ``<`` alone may still start ``<gen>``).
    """

    open: bytes
    sep: bytes
    close: bytes
    exclusive: int
    gen_open: bytes = b"<gen>"
    gen_close: bytes = b"</gen>"


@functools.cache
def copy_tag(syntax: str) -> CopyTag:
    """The copy op's literals (read from the syntax's grammar by :class:`Syntax`), checked to be
    trackable byte by byte; cached per syntax.

    Raises :class:`ConstraintError` if the literals could be confused with line numbers (the
    guards rely on that).
    """
    s = get_syntax(syntax)
    open_, sep, close = (s.copy_open.encode(), s.copy_sep.encode(), s.copy_close.encode())
    others = (s.gen_open.encode(), s.gen_close.encode())
    exclusive = next((k for k in range(1, len(open_) + 1)
                      if not any(other.startswith(open_[:k]) for other in others)), len(open_))
    digits = set(b"0123456789")
    if (
        not open_
        or open_[0] in open_[1:]  # the tracker matches OPEN without backtracking
        or not sep
        or not close
        or sep[0] in digits
        or close[0] in digits
        or sep[0] == close[0]
        # Gen text ends at the first closing tag: its first byte must not recur in it.
        or others[1][:1] != open_[:1]
        or others[1][0] in others[1][1:]
        or others[0][: exclusive - 1] != open_[: exclusive - 1]
    ):
        raise ConstraintError(f"syntax {syntax!r}: copy-rule literals are not trackable")
    return CopyTag(open_, sep, close, exclusive, gen_open=others[0], gen_close=others[1])


_META = frozenset("\\.+*?()|[]{}^$")


def regex_escape(literal: str) -> str:
    """``literal`` as a regex every engine reads the same (Rust, Python, outlines_core)."""
    # Only the metacharacters every engine agrees on; re.escape also escapes ' ' and '-', which
    # Rust's regex syntax does not promise to accept outside verbose mode / classes.
    return "".join("\\" + ch if ch in _META else ch for ch in literal)


def _terminal_regex(parser: lark.Lark, name: str) -> str:
    for terminal in parser.terminals:
        if terminal.name == name:
            pattern = terminal.pattern
            if pattern.flags:
                raise ConstraintError(f"terminal {name} uses regex flags; not supported")
            if type(pattern).__name__ == "PatternStr":
                return regex_escape(str(pattern.value))
            return f"(?:{pattern.value})"
    raise ConstraintError(f"unknown terminal {name}")


def grammar_regex(syntax: str, line_number: str) -> str:
    """The syntax's language as one regex, with ``line_number`` as the LINE_NUMBER pattern.

    Works for grammars whose rules are either non-recursive or left-recursive stars
    (``R: X | R Y`` becomes ``X Y*``), which is what Lark makes of ``op*``; anything else
    raises :class:`ConstraintError` (the syntax is not regular in this simple sense).
    """
    parser = _lark(syntax)
    by_origin: dict[str, list[list[tuple[bool, str]]]] = {}
    for rule in parser.rules:
        by_origin.setdefault(rule.origin.name, []).append(
            [(sym.is_term, sym.name) for sym in rule.expansion]
        )

    def rule_regex(name: str, active: frozenset[str]) -> str:
        if name in active:
            raise ConstraintError(f"syntax {syntax!r}: rule {name} is recursive; not regular")
        inner = active | {name}

        def seq(symbols: list[tuple[bool, str]]) -> str:
            return "".join(
                (line_number if sym == LINE_NUMBER else _terminal_regex(parser, sym))
                if is_term
                else rule_regex(sym, inner)
                for is_term, sym in symbols
            )

        bases, repeats = [], []
        for expansion in by_origin[name]:
            if expansion and expansion[0] == (False, name):
                repeats.append(seq(expansion[1:]))
            else:
                bases.append(seq(expansion))
        regex = "(?:" + "|".join(bases) + ")"
        if repeats and sorted(repeats) == sorted(bases):
            regex += "+"
        elif repeats:
            regex += "(?:" + "|".join(repeats) + ")*"
        return regex

    return rule_regex("start", frozenset())


def document_regex(syntax: str, n_lines: int) -> str:
    """:func:`grammar_regex` with LINE_NUMBER restricted to 1..n_lines."""
    return grammar_regex(syntax, f"(?:{range_regex(1, n_lines)})")


@functools.cache
def literal_bytes(syntax: str) -> bytes:
    """Every byte a program may need that is not free text: the grammar's literals and digits."""
    parser = _lark(syntax)
    s = get_syntax(syntax)
    needed = set(b"0123456789") | set((s.gen_open + s.gen_close).encode())
    for terminal in parser.terminals:
        if type(terminal.pattern).__name__ == "PatternStr":
            needed.update(str(terminal.pattern.value).encode())
    return bytes(sorted(needed))
