"""An edit is checked before it counts: a damaged result is redone, refused or kept marked.

Every edit's result is read against its document by
:func:`~copygram.language.damage.find_damage` (the format's markers in the file, a file that
parsed and no longer does, a definition duplicated, a name used and no longer defined). What
happens to a damaged one is the session's ``on_damage``:

* ``"rewrite"`` (the default): program mode's edit is done again in rewrite mode, on the same
  model, and that result is checked in turn, for misses too: a redo that still damages the file
  or misses what the instruction names is refused (rewrite mode's own edits, chosen by the
  session, have nothing to fall back to: a damaged one is refused). In a long file the redo
  rewrites an excerpt (:mod:`copygram.decode.scoped`). Rewrite mode is the fallback because it
  is plain greedy decoding of the whole file (docs/rewrite.md): it cannot misplace a block, and
  a model writes renames and spread-out edits whole. A program that never finishes (the model
  repeats itself past its budget: a :class:`~copygram.errors.GenerationError`) is redone so
  too, marked ``unfinished``,
  and so is one that missed what the instruction names (a definition it names left untouched,
  a name it introduces never written: :mod:`copygram.language.targets`), marked ``missed``.
  A rewrite that stops on its token budget or a full context before its reply ends (its file
  would be cut short: ``EditResult.stop_reason``) is damaged too, marked ``unfinished``.
  A result that dropped definitions the instruction does not account for (the model's reply
  was part of the file: :mod:`copygram.language.lost`) is damaged too, marked ``lost``; a
  rewrite the session chose gets them put back as the document has them instead, where that
  leaves it sound; so is one that dropped the documentation of a definition it kept
  (:mod:`copygram.language.lost_docs`), which any edit the session chose gets put back. A
  rewrite the session chose is refused for a ``certain`` miss
  (:func:`~copygram.language.targets.find_misses`) where nothing is left to redo it.
  Before any of that, an edit the session chose has the lines it wrote in another indentation
  unit than the document's (four spaces in a file indented with tabs) put in the document's
  (:mod:`copygram.language.indent_style`), where that adds no damage and the instruction
  says nothing of layout.
* ``"error"``: a :class:`~copygram.errors.DamagedEditError` with the damaged result.
* ``"keep"``: the result as it is, ``EditResult.damage`` saying what is wrong (a caller that
  writes files, such as ``copygram edit``, still refuses it without ``--force``).

Cost: the check parses the document and the result once (milliseconds; module doc of
:mod:`copygram.language.damage`); a redo costs a rewrite-mode edit on top of the program's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from copygram.decode.events import DoneEvent, EditResult, Event, RedoEvent
from copygram.decode.stats import RunStats
from copygram.errors import ConfigError, DamagedEditError, GenerationError, LengthError
from copygram.language.damage import (
    DATA_FORMATS,
    LANGUAGES,
    PROSE,
    Damage,
    code_language,
    find_damage,
    guess_language,
)
from copygram.language.data_files import kept_removals, lost_keys
from copygram.language.indent_style import asks_layout, restyled
from copygram.language.lost import lost_definitions, put_back
from copygram.language.lost_docs import LostDoc, lost_documentation, put_back_documentation
from copygram.language.ops import Gen, Program
from copygram.language.targets import find_misses


def checked(events: Iterator[Event], document: str, *, on_damage: str,
            language: str | None = None, instruction: str = "",
            redo: Callable[[], Iterator[Event]] | None = None,
            misses: bool = False, chosen: bool = False) -> Iterator[Event]:
    """``events`` (one edit's, ending with its :class:`DoneEvent`) with the result checked
    against ``document`` (``language``: as :func:`find_damage` takes it). A damaged result is
    handled as ``on_damage`` says (module doc); ``redo`` runs the edit again in rewrite mode
    (``None``: nothing to fall back to); a program that missed what ``instruction`` names
    (:func:`~copygram.language.targets.find_misses`) is redone too where there is a redo and
    ``on_damage`` is ``"rewrite"``, and passes as it is otherwise, unless ``misses`` (an edit
    whose miss has nothing better to go to: a scoped rewrite the session chose), where it is
    damage as any other. A result that dropped definitions ``instruction`` does not account for
    (:func:`~copygram.language.lost.lost_definitions`: a rewrite whose reply was part of the
    file) is damage of kind ``lost``. Where ``chosen`` (the session chose the mode: auto), a
    rewrite's dropped definitions are put back as the document has them where they can be
    placed and the result is then sound (``RunStats.restored_definitions``), and a rewrite with
    nothing to fall back to is refused for a miss no reference edit shows (``certain``:
    :func:`~copygram.language.targets.find_misses`: a quoted docstring never written, a
    rename's old name left, a removed definition kept, ...). Raises
    :class:`DamagedEditError`, and a
    :class:`~copygram.errors.ConfigError` (before any event) for an unknown ``language``."""
    if language is None:
        language = guess_language(document)  # once, for the edit and a redo alike
    elif language not in (*LANGUAGES, *DATA_FORMATS, PROSE):
        raise ConfigError(f"language {language!r} is not one the damage check reads; use one of "
                          f"{', '.join((*LANGUAGES, *DATA_FORMATS))}, {PROSE!r} (not code: the "
                          "marker check alone), or leave it out to guess it from the text")
    # Prose, or a language none of the checks reads: the markers alone.
    return _checked(events, document, on_damage, language or PROSE, instruction, redo, misses,
                    chosen)


def _checked(events: Iterator[Event], document: str, on_damage: str, language: str,
             instruction: str, redo: Callable[[], Iterator[Event]] | None,
             misses: bool, chosen: bool) -> Iterator[Event]:
    try:
        for event in events:
            if not isinstance(event, DoneEvent):
                yield event
                continue
            result, damage = _read(document, event.result, language, instruction, chosen)
            if result is not event.result:  # put back: the stream's own tail stays its tail
                event = DoneEvent(result, event.text)
            if not damage and (misses or (redo is not None and on_damage == "rewrite")):
                damage = missed(document, result.text, instruction, language)
            elif not damage and chosen and redo is None and result.mode == "rewrite":
                damage = missed(document, result.text, instruction, language,
                                certain=True)
            if not damage:
                yield event
                return
            damaged = dataclasses.replace(result, damage=damage)
            if on_damage == "keep":
                yield DoneEvent(damaged, event.text)  # its text: the output's held-back tail
                return
            if on_damage == "error" or redo is None:
                raise _refusal(damaged, damage, redone=None)
            break
        else:
            return  # pragma: no cover - every edit's events end with a DoneEvent
    except GenerationError as exc:
        if not _redoable(exc, on_damage, redo):
            raise
        damaged = _unfinished(exc, document)
    assert redo is not None
    yield RedoEvent(damaged)
    for again in redo():
        if not isinstance(again, DoneEvent):
            yield again
            continue
        # A redo that still misses what the instruction names is no edit to report either.
        redone, second = _read(document, again.result, language, instruction, chosen)
        if redone is not again.result:
            again = DoneEvent(redone, again.text)
        if not second:
            second = missed(document, again.result.text, instruction, language)
        if second:
            raise _refusal(dataclasses.replace(again.result, damage=second, redone=damaged),
                           second, redone=damaged)
        yield DoneEvent(dataclasses.replace(again.result, redone=damaged), again.text)
        return


def missed(document: str, text: str, instruction: str, language: str | None, *,
           certain: bool = False) -> tuple[Damage, ...]:
    """What ``text`` (an edit of ``document``) missed of what ``instruction`` names, as damage of
    kind ``missed`` (:func:`~copygram.language.targets.find_misses`, ``certain`` ones alone where
    asked; in a data file, a key asked removed and kept, certain too:
    :func:`~copygram.language.data_files.kept_removals`; none for no instruction). Milliseconds:
    a parse of each text."""
    if not instruction:
        return ()
    found = list(find_misses(document, text, instruction,
                             None if language is None else code_language(language),
                             certain=certain))
    if language in DATA_FORMATS:  # a key asked removed and kept: certain, as a definition's
        found += [f"the instruction removes {name} and the edit kept it"
                  for name in kept_removals(document, text, instruction, language)]
    return tuple(Damage("missed", miss) for miss in found)


def _read(document: str, result: EditResult, language: str, instruction: str,
          chosen: bool) -> tuple[EditResult, tuple[Damage, ...]]:
    """``result``'s damage: its own verdict (a scoped rewrite that missed: decode.scoped), a
    cut-short output, :func:`find_damage`'s, then definitions and documentation it lost; where
    ``chosen``, a result whose only damage is what it lost comes back with it put back where
    that leaves it sound (the result returned is then a new one): a rewrite's definitions, any
    edit's documentation. Where ``chosen``, the lines the edit wrote in another indentation
    unit than the document's are put in the document's first, where that adds no damage to the
    edit and the instruction says nothing of layout. A data file (JSON, TOML, YAML) is read by
    the damage check alone (:func:`~copygram.language.damage.code_language`)."""
    checks, language = language, code_language(language)
    if chosen and language != PROSE and not asks_layout(instruction):
        result = _restyled(document, result, language)
    damage = (result.damage + _cut_short(result)
              + find_damage(document, result.text, language=checks))
    if checks in DATA_FORMATS and not damage and instruction:
        keys = lost_keys(document, result.text, instruction, checks)
        if keys:
            damage = (Damage("lost", f"the edit took out {', '.join(keys[:5])}"
                                     f"{f' and {len(keys) - 5} more' if len(keys) > 5 else ''}"
                                     ", which the instruction does not name; name them in "
                                     "the instruction to remove them"),)
    if damage or not instruction:
        return result, damage
    lost = lost_definitions(document, result.text, instruction, language)
    docs = lost_documentation(document, result.text, instruction, language)
    if not lost and not docs:
        return result, ()
    if chosen and (result.mode == "rewrite" or not lost):
        restored = _restored(document, result.text, lost, docs, language, instruction)
        if restored is not None:
            text, result.stats.restored_documentation = restored
            result.stats.restored_definitions = len(lost)
            return dataclasses.replace(result, text=text, program=Program([Gen(text)])), ()
    found = []
    if lost:
        found.append(Damage("lost", f"the edit dropped {', '.join(lost)}, which the instruction "
                            "does not name (the model's reply was part of the file); name "
                            f"{'it' if len(lost) == 1 else 'them'} in the instruction to "
                            f"remove {'it' if len(lost) == 1 else 'them'}"))
    if docs:
        found.append(Damage("lost", "the edit dropped the documentation of "
                            f"{', '.join(sorted({doc.name for doc in docs}))} (lines "
                            f"{', '.join(f'{doc.start}-{doc.end}' for doc in docs)}), which the "
                            "instruction does not ask for; say so in the instruction to "
                            "remove it"))
    return result, tuple(found)


def _restyled(document: str, result: EditResult, language: str) -> EditResult:
    """``result`` with its lines in the document's indentation unit
    (:func:`~copygram.language.indent_style.restyled`), where that leaves no damage
    (``RunStats.restyled_lines``); ``result`` itself otherwise."""
    text, moved = restyled(document, result.text)
    # Read against the edit's own text: whitespace that breaks a parse the edit had is no
    # restyle, even in a document that did not parse (a fix of an illegal indentation).
    if not moved or find_damage(result.text, text, language=language):
        return result
    result.stats.restyled_lines = moved
    return dataclasses.replace(result, text=text, program=Program([Gen(text)]))


def _restored(document: str, text: str, lost: tuple[str, ...], docs: tuple[LostDoc, ...],
              language: str, instruction: str) -> tuple[str, int] | None:
    """``text`` with ``lost`` definitions (:func:`~copygram.language.lost.put_back`) and
    ``docs`` (:func:`~copygram.language.lost_docs.put_back_documentation`) put back, where that
    leaves no damage and nothing lost, and how many documentation blocks that put back;
    ``None`` otherwise."""
    restored: str | None = put_back(document, text, lost, language) if lost else text
    if restored is not None and lost:
        # The definitions put back bring their own documentation; read again what is missing.
        docs = lost_documentation(document, restored, instruction, language)
    if restored is not None and docs:
        restored = put_back_documentation(document, restored, docs, language)
    if (restored is None or find_damage(document, restored, language=language)
            or lost_definitions(document, restored, instruction, language)
            or lost_documentation(document, restored, instruction, language)):
        return None
    return restored, len(docs)


def _cut_short(result: EditResult) -> tuple[Damage, ...]:
    """``unfinished`` where the output stopped on its budget or a full context (a rewrite: its
    text is the reply so far, cut short; a program never ends so, it fails)."""
    if result.stop_reason == "max_tokens":
        return (Damage("unfinished", f"the output stopped on its token budget "
                       f"({result.stats.output_tokens} tokens) before it ended, so the file "
                       "would be cut short; raise max_new_tokens"),)
    if result.stop_reason == "context":
        return (Damage("unfinished", "the output filled the model's context before it ended, "
                       "so the file would be cut short; raise n_ctx or edit a smaller part"),)
    return ()


def _redoable(exc: GenerationError, on_damage: str,
              redo: Callable[[], Iterator[Event]] | None) -> bool:
    """Whether a program that failed with ``exc`` is done again in rewrite mode: where the
    session redoes damaged edits, for a model that repeated itself past the default budget, not
    for a limit the caller set or a full context (a rewrite needs more room than a program) and
    not for a refusal (already this module's verdict)."""
    return (on_damage == "rewrite" and redo is not None
            and not isinstance(exc, LengthError | DamagedEditError))


def _unfinished(exc: GenerationError, document: str) -> EditResult:
    """The result standing for a program that never finished: the document unchanged, the
    partial program, damage ``unfinished`` with the error's message."""
    stats = exc.stats if isinstance(exc.stats, RunStats) else RunStats()
    return EditResult(text=document, program=Program([]), program_text=exc.partial_program,
                      stats=stats, damage=(Damage("unfinished", str(exc)),))


def _refusal(result: EditResult, damage: tuple[Damage, ...],
             redone: EditResult | None) -> DamagedEditError:
    listed = "; ".join(str(d) for d in damage)
    before = ("" if redone is None else
              f" (program mode's edit was damaged too: "
              f"{'; '.join(str(d) for d in redone.damage)}; redone in rewrite mode)")
    return DamagedEditError(
        f"the edit would damage the file, so it was not applied: {listed}{before}. Rephrase the "
        "instruction, use a larger model, or edit a smaller part; the program is attached "
        "(copygram edit --show-program prints it, --force writes the edit anyway)",
        result=result, damage=damage)


__all__ = ["checked", "missed"]
