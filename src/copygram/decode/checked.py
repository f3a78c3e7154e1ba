"""An edit is checked before it counts: a damaged result is redone, refused or kept marked.

Every edit's result is read against its document by
:func:`~copygram.language.damage.find_damage` (the format's markers in the file, a file that
parsed and no longer does, a definition duplicated, a name used and no longer defined). What
happens to a damaged one is the session's ``on_damage``:

* ``"rewrite"`` (the default): program mode's edit is done again in rewrite mode, on the same
  model, and that result is checked in turn (rewrite mode's own edits have nothing to fall back
  to and are refused). Rewrite mode is the fallback because it is plain greedy decoding of the
  whole file (docs/rewrite.md): it cannot misplace a block, and a model writes renames and
  spread-out edits whole.
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
from copygram.errors import ConfigError, DamagedEditError
from copygram.language.damage import LANGUAGES, PROSE, Damage, find_damage, guess_language


def checked(events: Iterator[Event], document: str, *, on_damage: str,
            language: str | None = None,
            redo: Callable[[], Iterator[Event]] | None = None) -> Iterator[Event]:
    """``events`` (one edit's, ending with its :class:`DoneEvent`) with the result checked
    against ``document`` (``language``: as :func:`find_damage` takes it). A damaged result is
    handled as ``on_damage`` says (module doc); ``redo`` runs the edit again in rewrite mode
    (``None``: nothing to fall back to). Raises :class:`DamagedEditError`, and a
    :class:`~copygram.errors.ConfigError` (before any event) for an unknown ``language``."""
    if language is None:
        language = guess_language(document)  # once, for the edit and a redo alike
    elif language not in (*LANGUAGES, PROSE):
        raise ConfigError(f"language {language!r} is not one the damage check reads; use one of "
                          f"{', '.join(LANGUAGES)}, {PROSE!r} (not code: the marker check "
                          "alone), or leave it out to guess it from the text")
    # Prose, or a language none of the checks reads: the markers alone.
    return _checked(events, document, on_damage, language or PROSE, redo)


def _checked(events: Iterator[Event], document: str, on_damage: str, language: str,
             redo: Callable[[], Iterator[Event]] | None) -> Iterator[Event]:
    for event in events:
        if not isinstance(event, DoneEvent):
            yield event
            continue
        result = event.result
        damage = find_damage(document, result.text, language=language)
        if not damage:
            yield event
            return
        damaged = dataclasses.replace(result, damage=damage)
        if on_damage == "keep":
            yield DoneEvent(damaged)
            return
        if on_damage == "error" or redo is None:
            raise _refusal(damaged, damage, redone=None)
        yield RedoEvent(damaged)
        for again in redo():
            if not isinstance(again, DoneEvent):
                yield again
                continue
            second = find_damage(document, again.result.text, language=language)
            if second:
                raise _refusal(dataclasses.replace(again.result, damage=second, redone=damaged),
                               second, redone=damaged)
            yield DoneEvent(dataclasses.replace(again.result, redone=damaged))
            return


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


__all__ = ["checked"]
