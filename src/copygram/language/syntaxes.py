"""Surface syntaxes of the edit-program language, each defined by a Lark grammar file.

All syntaxes describe the same :class:`~copygram.language.ops.Program` (copy and gen ops), so the
resolver, the oracle and the losslessness properties are shared; a syntax only decides how ops are
written. ``lines`` is the paper's ``<copy lines="i-j"/>`` syntax and the default; ``compact``
writes ``<@i-j>`` and ``<g>TEXT</g>``.

The grammar file is the only place the language is written: a :class:`Syntax` reads its op
literals (the copy rule's ``OPEN N SEP N CLOSE``, the gen rule's ``OPEN GEN_TEXT? CLOSE``) and the
gen-text pattern from it, and builds from them the renderer, the one regex of a complete op
(:attr:`Syntax.op_pattern`, used by the drafter) and the test for "inside gen text".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from copygram.errors import CopygramError, ProgramSyntaxError
from copygram.language.ops import Copy, Gen, Op, Program, escape_gen_text, unescape_gen_text

if TYPE_CHECKING:
    import lark

DEFAULT_SYNTAX = "lines"
LINE_NUMBER = "LINE_NUMBER"
GEN_TEXT = "GEN_TEXT"


def load_grammar(filename: str) -> str:
    """The text of a grammar file shipped in ``copygram/language/grammars``."""
    grammars = resources.files("copygram.language.grammars")
    return grammars.joinpath(filename).read_text(encoding="utf-8")


@functools.cache
def grammar_parser(grammar_file: str) -> lark.Lark:
    """The LALR parser of a grammar file (~30 ms once per file, cached)."""
    import lark

    return lark.Lark(load_grammar(grammar_file), parser="lalr", lexer="contextual", start="start")


@dataclass(frozen=True)
class _Literals:
    copy_open: str
    copy_sep: str
    copy_close: str
    gen_open: str
    gen_close: str
    gen_text: str  # the GEN_TEXT terminal's regex


@functools.cache
def _literals(grammar_file: str) -> _Literals:
    """The op literals of a grammar file, read from its ``copy`` and ``gen`` rules."""
    parser = grammar_parser(grammar_file)
    terminals = {t.name: t.pattern for t in parser.terminals}

    def literal(name: str, rule: str) -> str:
        pattern = terminals.get(name)
        if pattern is None or type(pattern).__name__ != "PatternStr":
            raise CopygramError(f"{grammar_file}: {rule}-rule piece {name} must be a literal")
        return str(pattern.value)

    def shape(rule: str) -> list[str]:
        expansions = [[sym.name for sym in r.expansion] for r in parser.rules
                      if r.origin.name == rule]
        # ``gen: OPEN GEN_TEXT? CLOSE`` expands to two alternatives; keep the longest.
        if not expansions:
            raise CopygramError(f"{grammar_file}: no {rule!r} rule")
        return max(expansions, key=len)

    copy = shape("copy")
    if len(copy) != 5 or copy[1::2] != [LINE_NUMBER] * 2:
        raise CopygramError(f"{grammar_file}: the copy rule must be OPEN N SEP N CLOSE")
    gen = shape("gen")
    if len(gen) != 3 or gen[1] != GEN_TEXT:
        raise CopygramError(f"{grammar_file}: the gen rule must be OPEN {GEN_TEXT}? CLOSE")
    text = terminals.get(GEN_TEXT)
    if text is None or type(text).__name__ != "PatternRE":
        raise CopygramError(f"{grammar_file}: {GEN_TEXT} must be a regex terminal")
    copy_open, copy_sep, copy_close = (literal(n, "copy") for n in copy[0::2])
    return _Literals(copy_open, copy_sep, copy_close,
                     literal(gen[0], "gen"), literal(gen[2], "gen"), str(text.value))


@dataclass(frozen=True)
class Syntax:
    """One surface syntax: its name and grammar file; everything else is read from the file."""

    name: str
    grammar_file: str

    @property
    def grammar(self) -> str:
        return load_grammar(self.grammar_file)

    @property
    def copy_open(self) -> str:
        return _literals(self.grammar_file).copy_open

    @property
    def copy_sep(self) -> str:
        return _literals(self.grammar_file).copy_sep

    @property
    def copy_close(self) -> str:
        return _literals(self.grammar_file).copy_close

    @property
    def gen_open(self) -> str:
        return _literals(self.grammar_file).gen_open

    @property
    def gen_close(self) -> str:
        return _literals(self.grammar_file).gen_close

    @property
    def op_pattern(self) -> re.Pattern[str]:
        """One complete op: groups 1 and 2 are a copy's line numbers, group 3 a gen's escaped
        text (``None`` for a copy; ``None`` too for an empty gen)."""
        return _op_pattern(self.grammar_file)

    @property
    def partial_copy_pattern(self) -> re.Pattern[str]:
        """A copy tag cut after its first number (and maybe some digits of the second), at the
        end of a text: groups are the start and the end digits written so far."""
        return _partial_copy_pattern(self.grammar_file)

    def render_copy(self, start: int, end: int) -> str:
        return f"{self.copy_open}{start}{self.copy_sep}{end}{self.copy_close}"

    def render_op(self, op: Op) -> str:
        if isinstance(op, Copy):
            return self.render_copy(op.start, op.end)
        return self.gen_open + escape_gen_text(op.text) + self.gen_close

    def render(self, program: Program) -> str:
        return "".join(self.render_op(op) for op in program)

    def in_gen_text(self, program_text: str) -> bool:
        """Whether ``program_text`` ends inside a gen op's text (after its opener).

        Every op literal starts with ``<`` and escaped text never holds one, so the last ``<``
        starts the op being written."""
        return program_text.startswith(self.gen_open, program_text.rfind("<"))

    def describe(self) -> str:
        """The two ops in this syntax, for the prompt."""
        return (
            f"{self.copy_open}i{self.copy_sep}j{self.copy_close} copies lines i "
            f"to j (1-based, inclusive) of the original document unchanged.\n"
            f"{self.gen_open}TEXT{self.gen_close} writes new text. Inside TEXT write \"<\" as "
            f"\"&lt;\" and \"&\" as \"&amp;\"."
        )

    def parse(self, text: str) -> Program:
        import lark

        try:
            tree = grammar_parser(self.grammar_file).parse(text)
        except lark.exceptions.UnexpectedInput as exc:
            line, column = exc.line, exc.column
            if line < 1:  # lark reports end-of-input without a position
                line = text.count("\n") + 1
                column = len(text) - (text.rfind("\n") + 1) + 1
            raise ProgramSyntaxError(
                f"not a valid edit program in the {self.name!r} syntax: "
                f"{_describe(exc)}; see docs/language.md",
                line=line,
                column=column,
                text=text,
            ) from None
        return Program(_ops_from_tree(tree))

    def op_from_match(self, match: re.Match[str]) -> Op:
        """The op an :attr:`op_pattern` match spells."""
        if match.group(1) is not None:
            return Copy(int(match.group(1)), int(match.group(2)))
        return Gen(unescape_gen_text(match.group(3) or ""))


@functools.cache
def _op_pattern(grammar_file: str) -> re.Pattern[str]:
    lit = _literals(grammar_file)
    return re.compile(
        f"{re.escape(lit.copy_open)}([0-9]+){re.escape(lit.copy_sep)}([0-9]+)"
        f"{re.escape(lit.copy_close)}"
        f"|{re.escape(lit.gen_open)}({lit.gen_text})?{re.escape(lit.gen_close)}"
    )


@functools.cache
def _partial_copy_pattern(grammar_file: str) -> re.Pattern[str]:
    lit = _literals(grammar_file)
    return re.compile(f"{re.escape(lit.copy_open)}([0-9]+){re.escape(lit.copy_sep)}([0-9]*)\\Z")


def _describe(exc: Exception) -> str:
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first_line


def _ops_from_tree(tree: lark.Tree[lark.Token]) -> list[Op]:
    ops: list[Op] = []
    for node in tree.children:
        assert not isinstance(node, str)
        if node.data == "copy":
            start, end = (int(str(tok)) for tok in node.children)
            ops.append(Copy(start, end))
        else:
            ops.append(Gen(unescape_gen_text(str(node.children[0])) if node.children else ""))
    return ops


_SYNTAXES: dict[str, Syntax] = {
    # The paper's syntax: readable, and what Copy-as-Decode was specified with.
    "lines": Syntax("lines", "lines.lark"),
    # Fewer tokens per op (SmolLM2: 8 instead of 10 per copy), same ops and guards.
    "compact": Syntax("compact", "compact.lark"),
}


def get_syntax(name: str) -> Syntax:
    """The syntax called ``name``; raises :class:`CopygramError` listing the known ones."""
    try:
        return _SYNTAXES[name]
    except KeyError:
        raise CopygramError(
            f"unknown edit syntax {name!r}; choose one of {sorted(_SYNTAXES)}"
        ) from None


def syntax_names() -> list[str]:
    return sorted(_SYNTAXES)


def parse(text: str, syntax: str = DEFAULT_SYNTAX) -> Program:
    """Parse program text into a :class:`Program`; raises :class:`ProgramSyntaxError`."""
    return get_syntax(syntax).parse(text)


def render(program: Program, syntax: str = DEFAULT_SYNTAX) -> str:
    """The canonical program text of ``program`` in ``syntax``."""
    return get_syntax(syntax).render(program)
