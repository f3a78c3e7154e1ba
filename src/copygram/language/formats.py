"""Program formats: one object per syntax family, chosen once from the syntax's name.

Two families write the same :class:`~copygram.language.ops.Program`: **copy tags**
(:class:`TagFormat`: the ``lines`` and ``compact`` syntaxes, numbered copies and gens, read
without the document) and **search/replace blocks** (:class:`BlockFormat`: copies implicit,
each change anchored by the content of the lines it replaces, read against the document; with
``heads`` a block names a unit by its first line and replaces all of it: program mode's default
route). Everything that differs by family is a method or an attribute here (parsing, rendering,
which options apply, the defaults that follow the syntax); the layers above register their own
per-family parts (the constraint in :mod:`copygram.constraints`, the reader, drafter and prompt
in :mod:`copygram.decode.formats`) by :attr:`ProgramFormat.family` and never test a syntax's
name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from copygram.errors import ConfigError, CopygramError
from copygram.language.block_render import render as render_blocks
from copygram.language.block_render import render_head_program
from copygram.language.lines import split_lines
from copygram.language.ops import Program
from copygram.language.search_replace import SEARCH_REPLACE
from copygram.language.search_replace import parse as parse_blocks
from copygram.language.syntaxes import DEFAULT_TAGS, get_syntax, syntax_names

__all__ = ["DEFAULT_SYNTAX", "DEFAULT_TAGS", "BlockFormat", "Family", "FormatOptions",
           "ProgramFormat", "TagFormat", "default_syntax", "format_names", "get_format", "parse",
           "render"]

Family = Literal["tags", "blocks"]

DEFAULT_SYNTAX: Final = SEARCH_REPLACE
"""Program mode's default syntax (on llguidance): search/replace blocks, as head blocks."""


class FormatOptions(Protocol):
    """What a format checks of a session's options (a :class:`~copygram.config.SessionConfig`
    has them all)."""

    @property
    def engine(self) -> str: ...
    @property
    def ordered_copies(self) -> bool: ...
    @property
    def copy_to_end(self) -> bool: ...
    @property
    def verify_copies(self) -> bool: ...
    @property
    def line_view(self) -> str: ...
    @property
    def merge_retyped(self) -> bool: ...
    @property
    def search_plan(self) -> bool: ...
    @property
    def search_scope(self) -> str: ...
    @property
    def retry_unchanged(self) -> bool | None: ...
    @property
    def touch_named(self) -> bool | None: ...


class ProgramFormat(Protocol):
    """A syntax family's way of writing programs."""

    @property
    def name(self) -> str:
        """The syntax's name (a config's ``syntax``)."""
        ...

    @property
    def family(self) -> Family:
        """``"tags"`` (copies named by line numbers) or ``"blocks"`` (copies implicit)."""
        ...

    @property
    def default_scope(self) -> str:
        """``search_scope`` where it is left out."""
        ...

    @property
    def retries_unchanged(self) -> bool:
        """``retry_unchanged`` where it is left out: whether the format has blocks to write
        again."""
        ...

    @property
    def touches_named(self) -> bool:
        """``touch_named`` where it is left out: whether the format's constraint can hold a
        program to reach the definitions its instruction names."""
        ...

    def parse(self, text: str, document: str | Sequence[str] | None = None) -> Program:
        """The program ``text`` spells (for the ``document``: text or its lines, where the
        format reads against it); :class:`~copygram.errors.ProgramSyntaxError` if none."""
        ...

    def render(self, program: Program, document: str | Sequence[str] | None = None) -> str:
        """Text that :meth:`parse` reads back as an edit with ``program``'s result."""
        ...

    def check(self, options: FormatOptions) -> None:
        """A :class:`~copygram.errors.ConfigError` for options this format cannot honour
        (rather than a route that silently ignores them)."""
        ...


@dataclass(frozen=True)
class TagFormat:
    """Copy tags of one syntax (``lines`` or ``compact``): ``<copy lines="i-j"/>`` and
    ``<gen>…</gen>``; read and written without the document."""

    name: str = DEFAULT_TAGS
    family: Family = "tags"
    default_scope: str = "lines"  # tags name lines: no other scope
    retries_unchanged: bool = False  # no blocks
    touches_named: bool = False  # copies name line numbers: no runs to hold

    def parse(self, text: str, document: str | Sequence[str] | None = None) -> Program:
        return get_syntax(self.name).parse(text)

    def render(self, program: Program, document: str | Sequence[str] | None = None) -> str:
        return get_syntax(self.name).render(program)

    def check(self, options: FormatOptions) -> None:
        for key, value in (("merge_retyped", options.merge_retyped),
                           ("search_plan", options.search_plan),
                           ("search_scope", options.search_scope != "lines"),
                           ("retry_unchanged", options.retry_unchanged),
                           ("touch_named", options.touch_named)):
            if value:
                engine = ' with engine = "llguidance"' if options.engine != "llguidance" else ""
                raise ConfigError(f'{key} acts on search/replace blocks, and this session writes '
                                  f'copy tags (syntax "{self.name}"): set syntax = '
                                  f'"{SEARCH_REPLACE}"{engine}, or leave {key} out')


@dataclass(frozen=True)
class BlockFormat:
    """Search/replace blocks, read against their document (module doc of
    :mod:`copygram.language.search_replace`). ``heads``: a search part is one unit's first line
    and the block replaces the unit (``search_scope = "head"``); ``merge``: a replacement's
    retyped neighbours join its run (``merge_retyped``)."""

    heads: bool = True
    merge: bool = False
    name: str = SEARCH_REPLACE
    family: Family = "blocks"
    default_scope: str = "head"  # the route that passes the most tests (docs/quality.md)
    retries_unchanged: bool = True  # docs/quality.md, "A block that changes nothing"
    touches_named: bool = True  # docs/quality.md, "Which mode edits by default"

    def parse(self, text: str, document: str | Sequence[str] | None = None) -> Program:
        return parse_blocks(text, self._lines(document), merge=self.merge, heads=self.heads)

    def render(self, program: Program, document: str | Sequence[str] | None = None) -> str:
        lines = self._lines(document)
        return render_head_program(program, lines) if self.heads else render_blocks(program,
                                                                                    lines)

    def check(self, options: FormatOptions) -> None:
        if options.engine != "llguidance":
            raise ConfigError(f'syntax "{SEARCH_REPLACE}" needs engine = "llguidance" (its '
                              "grammar is context-free, not one regex); with engine "
                              f'"outlines" write copy tags: syntax = "{DEFAULT_TAGS}" (its '
                              'default there) or "compact"')
        for key, value in (("copy_to_end", options.copy_to_end),
                           ("verify_copies", options.verify_copies),
                           ("ordered_copies", not options.ordered_copies),
                           ("line_view", options.line_view != "pipe")):
            if value:
                raise ConfigError(f'{key} acts on copy tags, and syntax "{SEARCH_REPLACE}" '
                                  "(program mode's default) has none: its copies are implicit, "
                                  f'in document order. Set syntax = "{DEFAULT_TAGS}" for copy '
                                  f"tags, or leave {key} out")

    @staticmethod
    def _lines(document: str | Sequence[str] | None) -> Sequence[str]:
        if document is None:
            raise CopygramError("search/replace blocks are read against their document: pass "
                                "document= (its text, or its lines with their endings)")
        return split_lines(document) if isinstance(document, str) else document


def format_names() -> list[str]:
    """Every syntax a config may name: the copy-tag syntaxes and ``"search_replace"``."""
    return [*syntax_names(), SEARCH_REPLACE]


def default_syntax(engine: str) -> str:
    """Program mode's syntax on ``engine`` where a config names none: head blocks on
    llguidance, copy tags on outlines (its engine compiles one regex)."""
    return DEFAULT_SYNTAX if engine == "llguidance" else DEFAULT_TAGS


def get_format(syntax: str, *, search_scope: str | None = None,
               merge: bool = False) -> ProgramFormat:
    """The format of ``syntax``; for blocks ``search_scope`` (``None``: ``"head"``, the
    default route; ``"lines"`` and ``"unit"`` read alike) and ``merge``. An unknown name is a
    :class:`~copygram.errors.CopygramError` listing the known ones. Microseconds."""
    if syntax == SEARCH_REPLACE:
        return BlockFormat(heads=(search_scope or "head") == "head", merge=merge)
    get_syntax(syntax)  # an unknown name: the error that lists them
    return TagFormat(syntax)


def parse(text: str, syntax: str = DEFAULT_TAGS, document: str | Sequence[str] | None = None, *,
          search_scope: str | None = None) -> Program:
    """Parse program ``text`` of ``syntax`` into a :class:`Program`: copy tags alone, blocks
    against their ``document`` (``search_scope``: ``"head"``, the default route, or
    ``"lines"``); raises :class:`~copygram.errors.ProgramSyntaxError`."""
    return get_format(syntax, search_scope=search_scope).parse(text, document)


def render(program: Program, syntax: str = DEFAULT_TAGS,
           document: str | Sequence[str] | None = None, *,
           search_scope: str | None = None) -> str:
    """``program`` written in ``syntax``: the canonical text of copy tags; blocks that
    :func:`parse` reads back as an edit with the same result of ``document`` (head blocks by
    default, each replacing the smallest unit that holds a change)."""
    return get_format(syntax, search_scope=search_scope).render(program, document)
