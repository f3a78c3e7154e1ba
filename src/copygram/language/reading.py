"""What an instruction asks of one document, read once per edit.

The mode an edit runs in (:func:`~copygram.decode.modes.choose_mode`), the view its prompt shows
(:func:`~copygram.language.focus.focus_view`), the advice it is given, the places its
constraint holds it to and the blocks it may retry (:func:`~copygram.decode.loop.edit_job`), and
the excerpt a missed program's redo rewrites (:func:`~copygram.language.focus.excerpt_view`) all
read the same things from the instruction and the document: which definitions it targets, which
it renames, removes or adds to. :func:`read_edit` reads them once into a :class:`Reading` that
each of those takes, so that they agree by construction.

Cost: milliseconds for a file of a few thousand lines (the definitions are parsed once and
cached per document; the rest are scans of the instruction's words and the document's lines).
"""

from __future__ import annotations

from dataclasses import dataclass

from copygram.language.additions import added_names, addition_places
from copygram.language.asks import documentation_only
from copygram.language.passages import named_passages
from copygram.language.targets import (
    block_scope,
    introduces_names,
    lists_definitions,
    named_reach,
    removal_targets,
    removes_part,
    renames,
    targets_definitions,
)
from copygram.language.types import PROSE, Reach, Scope


@dataclass(frozen=True)
class Reading:
    """One instruction read against one document (module doc); each field names the function
    of :mod:`copygram.language.targets`, :mod:`copygram.language.additions` or
    :mod:`copygram.language.passages` that gives it."""

    reach: Reach = ()  # named_reach: what a program must reach
    scope: Scope = ()  # block_scope: where its blocks may edit (empty: anywhere)
    places: Scope = ()  # addition_places: where a new unit may go (empty: no addition)
    added: frozenset[str] = frozenset()  # added_names, where there are places
    removing: Scope = ()  # removal_targets: the definitions asked to be removed
    renamed: tuple[tuple[str, str], ...] = ()  # renames: (old, new) pairs
    names_definitions: bool = False  # targets_definitions
    documentation: bool = False  # documentation_only
    listed: bool = False  # lists_definitions
    introduces: bool = False  # introduces_names
    removes_part: bool = False  # removes_part: a removal of part of a definition
    passages: Scope = ()  # passages.named_passages (prose only): where the edit lies

    @property
    def placed(self) -> bool:
        """Whether a program can be held to the places the edit needs (``reach`` is not
        empty): what lets ``mode = "auto"`` write a program for a long document whose
        instruction introduces a name."""
        return bool(self.reach)


NOTHING = Reading()
"""The reading of an edit in a language none of the readers knows (prose): nothing targeted."""


def read_edit(document: str, instruction: str, language: str | None) -> Reading:
    """``instruction`` read against ``document`` in ``language`` (``None``: the definitions'
    layout heuristics). Milliseconds."""
    places = addition_places(document, instruction, language)
    return Reading(
        reach=named_reach(document, instruction, language),
        scope=block_scope(document, instruction, language),
        places=places,
        added=added_names(document, instruction) if places else frozenset(),
        removing=removal_targets(document, instruction, language),
        renamed=renames(document, instruction, language),
        names_definitions=targets_definitions(document, instruction, language),
        documentation=documentation_only(instruction),
        listed=lists_definitions(document, instruction, language),
        introduces=introduces_names(document, instruction),
        removes_part=removes_part(document, instruction, language),
        passages=named_passages(document, instruction) if language == PROSE else (),
    )


__all__ = ["NOTHING", "Reading", "read_edit"]
