"""A scoped rewrite: rewrite mode on the part of a long file an instruction names, spliced back.

A program for a file of 300-1,500 lines that misses (a definition it names left as it was, a
parse it breaks, a block written twice) was redone in rewrite mode over the whole file: 3-25
minutes of prefill, verify forwards and decode on a 2-core CPU, for rewrites that passed 1 of
20 large edit-kinds rows (docs/quality.md, "Files of 300-1,500 lines, every kind"). Where the
instruction targets definitions of the document ("Fix bugs in parse and render", "Replace the
docstring of f with ...") or adds a unit after one of its places ("Add a function f(x): ..."),
its edit lies there, so the redo rewrites an **excerpt** instead
(:func:`~copygram.language.focus.excerpt_view`: the file's head and those definitions or
places, each run between them one elision line) in rewrite mode, as it would a file (the
excerpt its verified draft, plain greedy's output token for token), and puts each rewritten run
back where it was (:func:`~copygram.language.focus.splice`). The result is read against the
whole document by the same checks as any redo's (:func:`~copygram.language.damage.find_damage`,
:func:`~copygram.language.targets.find_misses`): one that still misses what the instruction
names is refused (:class:`~copygram.errors.DamagedEditError`, kind ``missed``), not written as
a success (by the check of every redo, :func:`~copygram.decode.checked.checked`). A rewrite
that dropped or changed an elision line (its runs cannot be put back) is
redone over the whole file, as every redo was before.

Why not the whole file after a miss: on those rows the default model's excerpt rewrites pass 3
of 20 in 772 s in all (the whole file's rewrites 1 of 20 in 10,058 s); on the 15 whose
instruction names definitions the excerpt rewrites pass none and the whole file's none of the
12 run: a second, whole-file try would cost minutes for nothing. A session that wants the
whole file rewritten asks for it (``mode = "rewrite"``).

The same scoped rewrite is the edit itself, with no program before it, where ``mode = "auto"``
rewrites a long file whose instruction removes part of a definition it names
(:mod:`copygram.decode.modes`; "Remove the debug branch at the start of f"): there the
default model's programs wrote ``if (false)`` for the branch's condition, and whole-file
rewrites cost minutes; one that misses is refused too.

Cost: a rewrite of the excerpt (its lines, not the file's); the token and span events of that
rewrite are not passed on (their text is the excerpt's, not the file's): the
:class:`~copygram.decode.events.DoneEvent` carries the whole edited file as its text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from copygram.decode.document import EditDocument
from copygram.decode.events import DoneEvent, EditResult, Event, PrefillEvent, RedoEvent
from copygram.decode.policies import Policy
from copygram.decode.prompt import OUTLINE_NOTE
from copygram.decode.rewrite import stream_rewrite
from copygram.decode.setup import EditSetup
from copygram.language.damage import Damage
from copygram.language.focus import View, excerpt_view, splice
from copygram.language.lines import split_lines
from copygram.language.ops import Gen, Program
from copygram.language.passages import lost_paragraphs, paragraph_runs, revised_paragraphs
from copygram.language.reading import Reading


def scoped_redo(setup: EditSetup, document: EditDocument, instruction: str, policy: Policy,
                language: str | None, reading: Reading | None = None,
                ) -> Callable[[], Iterator[Event]]:
    """The redo of a program that missed (``setup``: a rewrite-mode session's): a scoped rewrite
    where :func:`scoped_rewrite` gives one, else a whole-file rewrite."""
    scoped = scoped_rewrite(setup, document, instruction, policy, language, reading)
    if scoped is not None:
        return scoped

    def whole() -> Iterator[Event]:
        return stream_rewrite(setup, document, instruction, policy)

    return whole


def scoped_rewrite(setup: EditSetup, document: EditDocument, instruction: str, policy: Policy,
                   language: str | None, reading: Reading | None = None,
                   ) -> Callable[[], Iterator[Event]] | None:
    """A rewrite of the excerpt of ``document`` that ``instruction`` names, spliced back, and of
    the whole file where its lines cannot be put back (module doc; ``setup``: a rewrite-mode
    session's), where the document is longer than ``focus_tokens`` (or, in prose, whatever its
    length, where ``reading`` found the passages the instruction quotes; ``focus_tokens = 0``:
    never) and :func:`excerpt_view` gives an excerpt (``reading``: the edit's, as it takes it);
    ``None`` otherwise."""
    focus = setup.options.focus_tokens
    # Asked to revise one paragraph of a short text, the default model's rewrite was that
    # paragraph alone: written as the whole text, it lost every other one (3 of 3 such texts).
    quoted = reading is not None and bool(reading.passages)
    if language is None or focus == 0 or not (quoted or focus < len(document.tokens)):
        return None
    view = excerpt_view(document.text, instruction, language, reading=reading)
    if view is None:
        return None
    chosen = view

    def whole() -> Iterator[Event]:
        return stream_rewrite(setup, document, instruction, policy)

    def run() -> Iterator[Event]:
        return _scoped_then_whole(setup, document, instruction, policy, chosen, whole)

    return run


def stream_scoped(setup: EditSetup, document: EditDocument, instruction: str, policy: Policy,
                  view: View) -> Iterator[Event]:
    """A rewrite of ``view`` (an excerpt of ``document``) spliced back into ``document``: its
    prefill events, then a :class:`DoneEvent` with the whole file as ``text`` and the excerpt's
    rewrite as ``raw``; ``damage`` ``marker`` where the rewrite did not keep the excerpt's
    elision lines (``text`` is then the document as it was)."""
    excerpt = EditDocument(view.text, setup.backend.tokenize)
    if view.outline:
        instruction = "\n".join((instruction, OUTLINE_NOTE, *view.outline))
    # The whole file's budget: an added unit makes the output longer than the excerpt (the
    # default model's added function on a 9-line excerpt ran past the excerpt's own budget).
    for event in stream_rewrite(setup, excerpt, instruction, policy,
                                budget_tokens=len(document.tokens)):
        if isinstance(event, PrefillEvent):
            yield event
        if not isinstance(event, DoneEvent):
            continue
        result = event.result
        text = splice(document.text, view, result.text)
        damage: tuple[Damage, ...] = ()
        if text is None:
            text = document.text
            damage = (Damage("marker", "the rewrite of the excerpt dropped or changed a line "
                                       "that stands for lines not shown"),)
        result.stats.scope_lines = sum(end - start + 1 for start, end in view.shown)
        yield DoneEvent(dataclasses.replace(result, text=text, program=Program([Gen(text)]),
                                            damage=damage), text)


def _scoped_then_whole(setup: EditSetup, document: EditDocument, instruction: str,
                       policy: Policy, view: View,
                       whole: Callable[[], Iterator[Event]]) -> Iterator[Event]:
    for event in stream_scoped(setup, document, instruction, policy, view):
        if not isinstance(event, DoneEvent):
            yield event
            continue
        result = event.result
        if result.damage:  # the excerpt's lines could not be put back: the whole file
            yield RedoEvent(result)
            yield from whole()
            return
        # A rewrite of what the instruction names that leaves it as it was is no edit: the
        # redo's check (decode.checked) refuses it as missed instead of rewriting the whole
        # file, which on these edits measured no better (module doc).
        yield event
        return


def kept_text(events: Iterator[Event], document: str, instruction: str, *,
              put_back: bool) -> Iterator[Event]:
    """``events`` of a rewrite of the whole of ``document``, a prose text, with a result that
    lost most of the text (:func:`~copygram.language.passages.lost_paragraphs`: the default
    model's answer to "revise the paragraph about ..." is that paragraph alone) put back as the
    revision of the paragraphs it resembles, each in its place (``put_back``, where the session
    chose the rewrite and each is recognisable:
    :func:`~copygram.language.passages.revised_paragraphs`), or else marked ``lost`` (refused by
    :func:`~copygram.decode.checked.checked`: nothing written). Cost: a word-level diff of the
    reply's paragraphs against each paragraph, where it is lost."""
    for event in events:
        if isinstance(event, DoneEvent):
            event = _kept(event, document, instruction, put_back)
        yield event


def _kept(event: DoneEvent[EditResult], document: str, instruction: str,
          put_back: bool) -> DoneEvent[EditResult]:
    result = event.result
    why = lost_paragraphs(document, result.text, instruction)
    if why is None:
        return event
    spans = revised_paragraphs(document, result.text) if put_back else None
    if spans is None:
        return DoneEvent(dataclasses.replace(result, damage=(*result.damage, Damage("lost", why))),
                         event.text)
    lines, replies = split_lines(document), split_lines(result.text)
    pieces, done = [], 0
    for (start, end), (first, last) in zip(spans, paragraph_runs(replies), strict=True):
        revised = "".join(replies[first - 1:last]).rstrip("\r\n")
        pieces += [*lines[done:start - 1], revised + _ending(lines[end - 1])]
        done = end
    text = "".join([*pieces, *lines[done:]])
    result.stats.scope_lines = sum(end - start + 1 for start, end in spans)
    return DoneEvent(dataclasses.replace(result, text=text, program=Program([Gen(text)])), text)


def _ending(line: str) -> str:
    """``line``'s line ending ("\n" where it has none: a paragraph that ended the text)."""
    return line[len(line.rstrip("\r\n")):] or "\n"


__all__ = ["kept_text", "scoped_redo", "scoped_rewrite", "stream_scoped"]
