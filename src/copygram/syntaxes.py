"""Surface syntaxes of the edit-program language, each defined by a Lark grammar file.

All syntaxes describe the same :class:`~copygram.program.Program` (copy and gen ops), so the
resolver, the oracle and the losslessness properties are shared; a syntax only decides how ops are
written. ``lines`` is the paper's ``<copy lines="i-j"/>`` syntax and the default.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from copygram.errors import CopygramError, ProgramSyntaxError
from copygram.program import Copy, Gen, Op, Program, render_op, unescape_gen_text

if TYPE_CHECKING:
    import lark

DEFAULT_SYNTAX = "lines"


def load_grammar(filename: str) -> str:
    """The text of a grammar file shipped in ``copygram/grammars``."""
    return resources.files("copygram.grammars").joinpath(filename).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Syntax:
    """One surface syntax: its grammar file and how ops map to and from its text."""

    name: str
    grammar_file: str
    render_program: Callable[[Program], str]
    ops_from_tree: Callable[[lark.Tree[lark.Token]], list[Op]]

    @property
    def grammar(self) -> str:
        return load_grammar(self.grammar_file)

    def render(self, program: Program) -> str:
        return self.render_program(program)

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
        return Program(self.ops_from_tree(tree))


def _describe(exc: Exception) -> str:
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first_line


@functools.cache
def _parser(name: str) -> lark.Lark:
    import lark

    return lark.Lark(get_syntax(name).grammar, parser="lalr", lexer="contextual", start="start")


def _render_lines(program: Program) -> str:
    return "".join(render_op(op) for op in program)


def _gen_from_tree(node: lark.Tree[lark.Token]) -> Gen:
    return Gen(unescape_gen_text(str(node.children[0])) if node.children else "")


def _ops_from_lines_tree(tree: lark.Tree[lark.Token]) -> list[Op]:
    ops: list[Op] = []
    for node in tree.children:
        assert not isinstance(node, str)
        if node.data == "copy":
            start, end = (int(tok) for tok in node.children)
            ops.append(Copy(start, end))
        else:
            ops.append(_gen_from_tree(node))
    return ops


_SYNTAXES: dict[str, Syntax] = {
    "lines": Syntax("lines", "lines.lark", _render_lines, _ops_from_lines_tree),
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
