"""Surface syntaxes of the edit-program language, each defined by a Lark grammar file.

All syntaxes describe the same :class:`~copygram.language.ops.Program` (copy and gen ops), so the
resolver, the oracle and the losslessness properties are shared; a syntax only decides how ops are
written. ``lines`` is the paper's ``<copy lines="i-j"/>`` syntax and the default of the copy-tag
syntaxes (program mode's default is search/replace head blocks, copygram.language.search_replace,
with this syntax's tags on the outlines engine); ``compact`` writes ``<@i-j>`` and
``<g>TEXT</g>``.

The grammar file is the only place the language is written: a :class:`Syntax` reads its op
literals (the copy rule's ``OPEN N SEP N CLOSE``, the gen terminal's ``GEN_OPEN GEN_TEXT?
GEN_CLOSE``) and the gen-text pattern from it, and builds from them the renderer, the one regex
of a complete op (:attr:`Syntax.op_pattern`, used by the drafter) and the test for "inside gen
text".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from copygram.errors import CopygramError, ProgramSyntaxError
from copygram.language import gentext
from copygram.language.ops import Copy, Gen, Op, Program

if TYPE_CHECKING:
    import lark

DEFAULT_TAGS = "lines"
"""The copy-tag syntax written where tags are asked for without a name: the paper's
``<copy lines="i-j"/>``; program mode's default on the outlines engine (whose one regex cannot
hold the blocks' context-free grammar). Program mode's default on llguidance is search/replace
head blocks (:data:`copygram.language.formats.DEFAULT_SYNTAX`)."""
LINE_NUMBER = "LINE_NUMBER"
GEN_TEXT = "GEN_TEXT"
GEN_OPEN, GEN_CLOSE = "GEN_OPEN", "GEN_CLOSE"
# Lark keeps only the terminals some rule uses; this rule (added to a copy of the grammar, never
# to the parser of programs) makes it keep the gen terminal's pieces, to read them.
_PROBE = f"\ngen_pieces__: {GEN_OPEN} {GEN_TEXT} {GEN_CLOSE}\n"


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
    """The op literals of a grammar file, read from its ``copy`` rule and ``GEN`` terminal."""
    import lark

    parser = grammar_parser(grammar_file)
    pieces = lark.Lark(load_grammar(grammar_file) + _PROBE, parser="lalr", lexer="contextual",
                       start=["start", "gen_pieces__"])
    terminals = {t.name: t.pattern for t in [*parser.terminals, *pieces.terminals]}

    def literal(name: str, rule: str) -> str:
        pattern = terminals.get(name)
        if pattern is None or type(pattern).__name__ != "PatternStr":
            raise CopygramError(f"{grammar_file}: {rule}-rule piece {name} must be a literal")
        return str(pattern.value)

    def shape(rule: str) -> list[str]:
        expansions = [[sym.name for sym in r.expansion] for r in parser.rules
                      if r.origin.name == rule]
        if not expansions:
            raise CopygramError(f"{grammar_file}: no {rule!r} rule")
        return max(expansions, key=len)

    copy = shape("copy")
    if len(copy) != 5 or copy[1::2] != [LINE_NUMBER] * 2:
        raise CopygramError(f"{grammar_file}: the copy rule must be OPEN N SEP N CLOSE")
    if shape("gen") != ["GEN"]:
        raise CopygramError(f"{grammar_file}: the gen rule must be the one terminal GEN: "
                            f"{GEN_OPEN} {GEN_TEXT}? {GEN_CLOSE}")
    text = terminals.get(GEN_TEXT)
    if text is None or type(text).__name__ != "PatternRE":
        raise CopygramError(f"{grammar_file}: {GEN_TEXT} must be a regex terminal")
    copy_open, copy_sep, copy_close = (literal(n, "copy") for n in copy[0::2])
    return _Literals(copy_open, copy_sep, copy_close, literal(GEN_OPEN, "gen"),
                     literal(GEN_CLOSE, "gen"), str(text.value))


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
    def gen_text_regex(self) -> str:
        """The ``GEN_TEXT`` terminal's regex, as the grammar file writes it."""
        return _literals(self.grammar_file).gen_text

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
        return self.gen_open + self.escape(op.text) + self.gen_close

    @property
    def reserved_words(self) -> gentext.Words:
        """What gen text may not hold (:mod:`~copygram.language.gentext`): the gen's closing
        tag and the first word of each op's opener (``</gen>``, ``<gen``, ``<copy``; ``</g>``,
        ``<g>``, ``<@`` in the compact syntax, whose openers are too short to cut)."""
        return (self.gen_close, _opener_word(self.gen_open), _opener_word(self.copy_open))

    def escape(self, text: str) -> str:
        """``text`` as gen text writes it: verbatim, unless it holds a reserved word
        (:func:`copygram.language.gentext.escape`)."""
        return gentext.escape(text, self.reserved_words)

    def unescape(self, written: str) -> str:
        return gentext.unescape(written, self.reserved_words)

    def render(self, program: Program) -> str:
        return "".join(self.render_op(op) for op in program)

    def in_gen_text(self, program_text: str) -> bool:
        """Whether ``program_text`` (a prefix of a program) ends inside a gen op's text, after
        its opener: its last gen text runs to its end (a closed gen's stops before the tag)."""
        spans = self.gen_text_spans(program_text)
        return bool(spans) and spans[-1][1] == len(program_text)

    def gen_text_spans(self, program_text: str) -> list[tuple[int, int]]:
        """The ``(start, end)`` offsets of every gen op's text in ``program_text`` (a program
        or a prefix of one; an unclosed last gen runs to the end)."""
        pattern, at, spans = self.op_pattern, 0, []
        while (match := pattern.match(program_text, at)) is not None:
            if match.group(1) is None:
                start = match.start() + len(self.gen_open)
                spans.append((start, match.end() - len(self.gen_close)))
            at = match.end()
        if program_text.startswith(self.gen_open, at):
            spans.append((at + len(self.gen_open), len(program_text)))
        return spans

    def describe(self) -> str:
        """The two ops in this syntax, for the prompt."""
        return (
            f"{self.copy_open}i{self.copy_sep}j{self.copy_close} copies lines i "
            f"to j (1-based, inclusive) of the original document unchanged.\n"
            f"{self.gen_open}TEXT{self.gen_close} writes new text TEXT, exactly as it is."
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
        return Program(_ops_from_tree(tree, self))

    def op_from_match(self, match: re.Match[str]) -> Op:
        """The op an :attr:`op_pattern` match spells."""
        if match.group(1) is not None:
            return Copy(int(match.group(1)), int(match.group(2)))
        return Gen(self.unescape(match.group(3) or ""))


def _opener_word(opener: str) -> str:
    """``<`` and the letters after it when there are three or more (``<gen`` of ``<gen>``: a
    model that writes ``<gen/>`` in gen text means an op too), else the whole opener (``<g>``
    alone would refuse code such as ``i<grid``)."""
    match = re.match(r"<[A-Za-z]{3,}", opener)
    return match.group(0) if match else opener


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


def _ops_from_tree(tree: lark.Tree[lark.Token], syntax: Syntax) -> list[Op]:
    ops: list[Op] = []
    for node in tree.children:
        assert not isinstance(node, str)
        if node.data == "copy":
            start, end = (int(str(tok)) for tok in node.children)
            ops.append(Copy(start, end))
        else:  # one GEN token: opener, text, closer
            written = str(node.children[0])[len(syntax.gen_open):-len(syntax.gen_close)]
            ops.append(Gen(syntax.unescape(written)))
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


def parse(text: str, syntax: str = DEFAULT_TAGS) -> Program:
    """Parse program text into a :class:`Program`; raises :class:`ProgramSyntaxError`."""
    return get_syntax(syntax).parse(text)


def escape_gen_text(text: str, syntax: str = DEFAULT_TAGS) -> str:
    """``text`` as a gen op of ``syntax`` writes it (:meth:`Syntax.escape`)."""
    return get_syntax(syntax).escape(text)


def unescape_gen_text(written: str, syntax: str = DEFAULT_TAGS) -> str:
    """Inverse of :func:`escape_gen_text`."""
    return get_syntax(syntax).unescape(written)


def render(program: Program, syntax: str = DEFAULT_TAGS) -> str:
    """The canonical program text of ``program`` in ``syntax``."""
    return get_syntax(syntax).render(program)
