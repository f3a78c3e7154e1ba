"""What the decode loop needs of each program format, registered by family: the document's
constraint, the incremental reader of its ops, the drafter, the program read from the finished
text, and program mode's prompt (:func:`prompt_builder`). The family is decided once, by
:func:`~copygram.language.formats.get_format` from the options' ``syntax``; the loop calls
:func:`decode_format` and never tests a syntax's name."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from copygram.config import SessionConfig
from copygram.decode.document import EditDocument
from copygram.decode.drafting import Drafter, DraftSource
from copygram.decode.drafting.blocks import BlockDrafter
from copygram.decode.program_reader import OpReader
from copygram.decode.prompt import (
    DefaultPromptBuilder,
    PromptBuilder,
    RewritePromptBuilder,
    SearchReplacePromptBuilder,
)
from copygram.decode.setup import EditSetup
from copygram.language.formats import Family, get_format
from copygram.language.ops import Program
from copygram.language.search_replace import parse as parse_blocks
from copygram.language.syntaxes import get_syntax
from copygram.language.types import Reach, Scope

if TYPE_CHECKING:
    from copygram.constraints import Constraint

__all__ = ["DecodeFormat", "decode_format", "prompt_builder"]


class DecodeFormat(Protocol):
    """A format as the decode loop uses it, for one session's options."""

    def constraint(self, setup: EditSetup, lines: Sequence[str], touch: Reach = (),
                   only: Scope = ()) -> tuple[Constraint, OpReader | None]:
        """A fresh constraint for the document ``lines`` and the reader of its ops (``None``
        where the program is read once complete); ``touch``: requirements, each line ranges of
        which some block must reach one, and ``only``: line ranges one of which every block
        must reach (blocks only: ``touch_named``). Costs: the grammar's
        (milliseconds, cached), and on a backend's first call its vocabulary view (seconds:
        ``prepare``)."""
        ...

    def drafter(self, setup: EditSetup, document: EditDocument, instruction: str,
                constraint: Constraint, reader: OpReader | None) -> DraftSource | None:
        """The edit's draft source (``None``: drafting is off), reading the program from
        ``constraint`` or the loop's context."""
        ...

    def program(self, text: str, lines: Sequence[str], reader: OpReader | None) -> Program:
        """The program of the finished ``text`` (which the constraint accepted)."""
        ...

    def prompt(self) -> PromptBuilder:
        """Program mode's prompt, which teaches the format."""
        ...


def _constraint(setup: EditSetup, lines: Sequence[str], touch: Reach = (),
                only: Scope = ()) -> Constraint:
    from copygram.constraints import compile_constraint

    o = setup.options
    return compile_constraint(lines, setup.backend, engine=o.engine, syntax=o.syntax,
                              ordered=o.ordered_copies, to_end=o.copy_to_end,
                              search_scope=o.search_scope, plan=o.search_plan,
                              body_heads=o.body_heads, touch=touch, only=only)


@dataclass(frozen=True)
class _Tags:
    """Copy tags: read op by op as they are written (the reader is shared with the drafter)."""

    options: SessionConfig

    def constraint(self, setup: EditSetup, lines: Sequence[str], touch: Reach = (),
                   only: Scope = ()) -> tuple[Constraint, OpReader | None]:
        return (_constraint(setup, lines, touch, only),
                OpReader(get_syntax(self.options.syntax)))

    def drafter(self, setup: EditSetup, document: EditDocument, instruction: str,
                constraint: Constraint, reader: OpReader | None) -> DraftSource | None:
        draft, syntax, backend = setup.draft, self.options.syntax, setup.backend
        if not draft.max_tokens:
            return None
        return Drafter(document.lines, backend.tokenize, setup.token_bytes, draft, syntax,
                       backend.batch_profile, instruction,
                       document_tokens=(document.gen_tokens(get_syntax(syntax).escape)
                                        if draft.gen else None),
                       reader=reader, program=lambda: constraint.program_text)

    def program(self, text: str, lines: Sequence[str], reader: OpReader | None) -> Program:
        return (reader or OpReader(get_syntax(self.options.syntax))).program(text)

    def prompt(self) -> PromptBuilder:
        o = self.options
        return DefaultPromptBuilder(syntax=o.syntax, with_example=o.prompt_example,
                                    line_view=o.line_view, order=o.prompt_order)


@dataclass(frozen=True)
class _Blocks:
    """Search/replace blocks: read once complete, against the document."""

    options: SessionConfig

    def constraint(self, setup: EditSetup, lines: Sequence[str], touch: Reach = (),
                   only: Scope = ()) -> tuple[Constraint, OpReader | None]:
        return _constraint(setup, lines, touch, only), None

    def drafter(self, setup: EditSetup, document: EditDocument, instruction: str,
                constraint: Constraint, reader: OpReader | None) -> DraftSource | None:
        if not setup.draft.max_tokens:
            return None
        backend = setup.backend
        return BlockDrafter(document.lines, backend.tokenize, setup.token_bytes, setup.draft,
                            backend.batch_profile, heads=setup.heads, instruction=instruction)

    def program(self, text: str, lines: Sequence[str], reader: OpReader | None) -> Program:
        return parse_blocks(text, lines, merge=self.options.merge_retyped,
                            heads=self.options.search_scope == "head")

    def prompt(self) -> PromptBuilder:
        o = self.options
        return SearchReplacePromptBuilder(with_example=o.prompt_example, scope=o.search_scope,
                                          plan=o.search_plan, order=o.prompt_order)


_BY_FAMILY: dict[Family, type[_Tags | _Blocks]] = {"tags": _Tags, "blocks": _Blocks}


def decode_format(options: SessionConfig) -> DecodeFormat:
    """The decode loop's view of ``options``' format. Microseconds."""
    return _BY_FAMILY[get_format(options.syntax).family](options)


def prompt_builder(options: SessionConfig) -> PromptBuilder:
    """The prompt a session sends unless given one: the rewrite prompt in rewrite mode, else
    the one that teaches the options' format (auto sessions' programs are program mode's)."""
    if options.mode == "rewrite":
        return RewritePromptBuilder(order=options.prompt_order)
    return decode_format(options).prompt()
