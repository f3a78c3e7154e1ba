"""Surface syntaxes of the edit-program language, each defined by a Lark grammar file.

All syntaxes describe the same :class:`~copygram.program.Program` (copy and gen ops), so the
resolver, the oracle and the losslessness properties are shared; a syntax only decides how ops are
written. ``lines`` is the paper's ``<copy lines="i-j"/>`` syntax and the default; ``compact``
writes ``<@i-j>`` and ``<g>TEXT</g>``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from copygram.errors import CopygramError, ProgramSyntaxError
from copygram.program import Copy, Gen, Op, Program, escape_gen_text, unescape_gen_text

if TYPE_CHECKING:
    import lark

DEFAULT_SYNTAX = "lines"


def load_grammar(filename: str) -> str:
    """The text of a grammar file shipped in ``copygram/grammars``."""
    return resources.files("copygram.grammars").joinpath(filename).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Syntax:
    """One surface syntax: its grammar file and the literals its ops are written with.

    ``copy_open``/``copy_sep``/``copy_close`` and ``gen_open``/``gen_close`` must be the literals
    of the grammar file's ``copy`` and ``gen`` rules (a test checks that they agree).
    """

    name: str
    grammar_file: str
    copy_open: str
    copy_sep: str
    copy_close: str
    gen_open: str
    gen_close: str

    @property
    def grammar(self) -> str:
        return load_grammar(self.grammar_file)

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
            f"{self.render_copy(1, 3).replace('1', 'i', 1).replace('3', 'j', 1)} copies lines i "
            f"to j (1-based, inclusive) of the original document unchanged.\n"
            f"{self.gen_open}TEXT{self.gen_close} writes new text. Inside TEXT write \"<\" as "
            f"\"&lt;\" and \"&\" as \"&amp;\"."
        )

    def parse(self, text: str) -> Program:
        import lark

        parser = _parser(self.name)
        try:
            tree = parser.parse(text)
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


def _describe(exc: Exception) -> str:
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first_line


@functools.cache
def _parser(name: str) -> lark.Lark:
    import lark

    return lark.Lark(get_syntax(name).grammar, parser="lalr", lexer="contextual", start="start")


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
    "lines": Syntax("lines", "lines.lark", '<copy lines="', "-", '"/>', "<gen>", "</gen>"),
    # Fewer tokens per op (SmolLM2: 8 instead of 10 per copy), same ops and guards.
    "compact": Syntax("compact", "compact.lark", "<@", "-", ">", "<g>", "</g>"),
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
