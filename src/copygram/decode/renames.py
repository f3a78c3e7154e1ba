"""A held rename program's result, its documentation's calls of the old name renamed too.

A program held to a rename's definition and uses (:func:`~copygram.language.targets.rename_scope`)
renames the code; the documentation's calls of the old name (a docstring's doctests, a
comment's examples) it leaves as they were, where its blocks may not or did not reach them
(:mod:`copygram.language.mentions`: 11 of 12 medium rename rows). :func:`renamed_documentation`
renames those in the program's result, where the program did rename the definition (the new
name defined, the old one no longer). A rewrite's result is the model's own text, and stays so
(rewrite mode's promise: plain greedy's output).

Cost: a parse of the result (milliseconds), only for an edit whose instruction asks a rename.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from copygram.decode.events import DoneEvent, EditResult, Event
from copygram.language.definitions import definitions
from copygram.language.mentions import rename_documented_calls
from copygram.language.ops import Gen, Program


def renamed_documentation(events: Iterator[Event], pairs: Sequence[tuple[str, str]],
                          language: str | None) -> Iterator[Event]:
    """``events`` of an edit that asks the renames ``pairs`` (old, new), with a program's
    result's documented calls of an old name renamed (module doc; ``RunStats.doc_renames``
    counts them). Any other result passes as it is: a rewrite's, a damaged one, one where the
    definition was not renamed."""
    for event in events:
        if isinstance(event, DoneEvent) and pairs:
            event = _renamed(event, pairs, language)
        yield event


def _renamed(event: DoneEvent[EditResult], pairs: Sequence[tuple[str, str]],
             language: str | None) -> DoneEvent[EditResult]:
    result = event.result
    if result.mode != "program" or result.damage:
        return event
    defined = definitions(result.text, language)
    done = [(old, new) for old, new in pairs if new in defined and old not in defined]
    text, count = rename_documented_calls(result.text, done, language)
    if not count:
        return event
    result.stats.doc_renames = count
    return DoneEvent(dataclasses.replace(result, text=text, program=Program([Gen(text)])),
                     event.text)


__all__ = ["renamed_documentation"]
