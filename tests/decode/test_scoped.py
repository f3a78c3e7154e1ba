"""A program that missed in a long file is redone as a scoped rewrite: the excerpt of what the
instruction names written again and spliced back (copygram.decode.scoped); the whole file only
where the excerpt's runs cannot be put back, and a refusal where the rewrite misses too.
Scripted models: a program that writes median twice, then rewrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from copygram import EditSession
from copygram.decode.events import DoneEvent, EditResult, Event, RedoEvent
from copygram.decode.prompt import REWRITE_SYSTEM
from copygram.errors import DamagedEditError
from copygram.language.focus import ELISION, excerpt_view
from copygram.language.lines import split_lines
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import PromptedBackend

STATS = (Path(__file__).resolve().parents[2] / "examples" / "stats.py").read_text()
INSTRUCTION = "Fix bugs in median."
BUG = "        return ordered[middle]\n    return ordered[middle]\n"
FIX = ("        return ordered[middle]\n"
       "    return (ordered[middle - 1] + ordered[middle]) / 2\n")
FIXED = STATS.replace(BUG, FIX)
HEAD = "def median(values):\n"
# A program that writes median twice: damage (a definition duplicated), so it is redone.
TWICE = f"{BLOCK_OPEN}{HEAD}{DIVIDER}{HEAD}    return 0\n\n\n{HEAD}    return 1\n{BLOCK_CLOSE}"
# Only the whole file's rewrite prompt holds stdev's body (the program's view and the excerpt
# show median, its caller and the head).
WHOLE_ONLY = "return math.sqrt(variance(values))"


def _excerpt() -> str:
    view = excerpt_view(STATS, INSTRUCTION, "python")
    assert view is not None
    return view.text


def _run(scoped: str, whole: str, **options: object) -> list[Event]:
    backend = PromptedBackend(STATS, replies=((WHOLE_ONLY, whole), (REWRITE_SYSTEM, scoped),
                                              ("", TWICE)))
    session = EditSession(backend, **{"mode": "program", "focus_tokens": 64, **options})
    return list(session.stream(STATS, INSTRUCTION, language="python"))


def _result(events: list[Event]) -> DoneEvent:  # type: ignore[type-arg]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    return done


def test_the_excerpt_is_rewritten_and_spliced_back_and_the_whole_file_never() -> None:
    excerpt = _excerpt()
    assert WHOLE_ONLY not in excerpt and BUG in excerpt
    events = _run(excerpt.replace(BUG, FIX), whole=STATS + "# the whole file\n")
    redone = [e for e in events if isinstance(e, RedoEvent)]
    assert len(redone) == 1 and "duplicate" in {d.kind for d in redone[0].result.damage}
    done = _result(events)
    result = done.result
    assert result.text == FIXED and done.text == FIXED
    assert result.mode == "rewrite" and result.redone is not None
    assert 0 < result.stats.scope_lines < len(split_lines(STATS))


def test_a_rewrite_that_drops_an_elision_line_falls_back_to_the_whole_file() -> None:
    excerpt = _excerpt()
    dropped = "".join(line for line in split_lines(excerpt.replace(BUG, FIX))
                      if not ELISION.match(line))
    events = _run(dropped, whole=FIXED)
    redone = [e for e in events if isinstance(e, RedoEvent)]
    assert [sorted({d.kind for d in e.result.damage}) for e in redone][1] == ["marker"]
    result = _result(events).result
    assert result.text == FIXED and result.stats.scope_lines == 0


def test_a_scoped_rewrite_that_misses_is_refused_not_written_nor_redone_whole() -> None:
    # median written as it was: no edit, so a typed error that says so, and no whole-file
    # rewrite after it (the whole file's reply would be taken if one ran).
    with pytest.raises(DamagedEditError, match="left its definition as it was") as caught:
        _run(_excerpt(), whole=FIXED)
    refused = caught.value.result
    assert isinstance(refused, EditResult)
    assert {d.kind for d in refused.damage} == {"missed"}
    assert refused.text == STATS and refused.redone is not None


def test_a_short_file_is_redone_whole() -> None:
    events = _run(_excerpt().replace(BUG, FIX), whole=FIXED, focus_tokens=0)
    assert len([e for e in events if isinstance(e, RedoEvent)]) == 1
    result = _result(events).result
    assert result.text == FIXED and result.stats.scope_lines == 0


def test_an_added_unit_may_make_the_excerpts_rewrite_longer_than_the_excerpt() -> None:
    # The output budget is the whole file's: a new function after the place outgrows the
    # excerpt's own (1.5x its tokens), and must not be cut short.
    from copygram.decode.document import EditDocument
    from copygram.decode.policies import SamplingPolicy
    from copygram.decode.scoped import stream_scoped

    instruction = "Add a function mode_of(values) that returns the most common value."
    view = excerpt_view(STATS, instruction, "python")
    assert view is not None
    added = "\n\ndef mode_of(values):\n" + "".join(
        f"    # step {i}: count the values and keep the most common one seen so far\n"
        for i in range(12)) + "    return max(values, key=values.count)\n"
    assert len(added) > len(view.text) // 2 + 64
    session = EditSession(PromptedBackend(STATS, replies=((REWRITE_SYSTEM, view.text + added),)),
                          mode="rewrite", focus_tokens=64)
    document = EditDocument(STATS, session.backend.tokenize)
    done = list(stream_scoped(session.setup(), document, instruction,
                              SamplingPolicy(session.sampling), view))[-1]
    assert isinstance(done, DoneEvent) and done.result.stop_reason == "eos"
    assert "def mode_of(values):" in done.result.text and done.result.damage == ()


def test_every_definitions_first_line_goes_beside_the_excerpt_not_into_it() -> None:
    # "__all__ ... every top-level function": the excerpt is the head (the place), the first
    # lines a list after the instruction; the reply keys on that list, so it is what the
    # rewrite's prompt held.
    from copygram.decode.document import EditDocument
    from copygram.decode.policies import SamplingPolicy
    from copygram.decode.prompt import OUTLINE_NOTE
    from copygram.decode.scoped import stream_scoped

    instruction = ("Add an __all__ list at the top of the module (after its imports) that names "
                   "every top-level function of the module, in the order they are defined.")
    view = excerpt_view(STATS, instruction, "python")
    assert view is not None and "def stdev(values):" in view.outline
    assert "def stdev(values):" not in view.text
    listed = "\n".join((OUTLINE_NOTE, *view.outline))
    names = [line[4:line.index("(")] for line in view.outline if line.startswith("def ")]
    exports = "__all__ = [" + ", ".join(f'"{n}"' for n in names) + "]\n"
    assert view.text.endswith("import math\n\n\n")  # the file's head: the place
    reply = view.text.replace("import math\n", f"import math\n\n{exports}")
    session = EditSession(PromptedBackend(STATS, replies=((listed, reply),)), mode="rewrite",
                          focus_tokens=64)
    document = EditDocument(STATS, session.backend.tokenize)
    done = list(stream_scoped(session.setup(), document, instruction,
                              SamplingPolicy(session.sampling), view))[-1]
    assert isinstance(done, DoneEvent) and done.result.damage == ()
    assert done.result.text == STATS.replace("import math\n", f"import math\n\n{exports}", 1)


def test_auto_rewrites_the_excerpt_of_a_long_files_definition_a_removal_edits() -> None:
    # "Remove ... from median" in a long file: the excerpt's rewrite is the edit (no program
    # first), and one that leaves median as it was is refused, not written.
    instruction = "Remove the second return from median."
    view = excerpt_view(STATS, instruction, "python")
    assert view is not None and BUG in view.text

    def session(reply: str) -> EditSession:
        backend = PromptedBackend(STATS, replies=((WHOLE_ONLY, STATS), (REWRITE_SYSTEM, reply)))
        return EditSession(backend, mode="auto", focus_tokens=64, auto_rewrite_tokens=64)

    edited = session(view.text.replace(BUG, FIX))
    assert edited.mode_for(STATS, instruction, language="python") == "rewrite"
    result = edited.edit(STATS, instruction, language="python")
    assert result.text == FIXED and result.redone is None
    assert 0 < result.stats.scope_lines < len(split_lines(STATS))
    with pytest.raises(DamagedEditError, match="left its definition as it was"):
        session(view.text).edit(STATS, instruction, language="python")
