"""An instruction is read against its document once per edit (copygram.language.reading), and
every part of the edit takes that reading: the mode, the prompt's view and advice, the
constraint's reach and scope, the redo's excerpt."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import EditSession
from copygram.language import reading as reading_module
from copygram.language.additions import added_names, addition_places
from copygram.language.focus import excerpt_view, focus_view
from copygram.language.reading import NOTHING, Reading, read_edit
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.language.targets import block_scope, named_reach, removal_targets, renames
from copygram.testing import ScriptedBackend

STATS = (Path(__file__).resolve().parent.parent / "examples" / "stats.py").read_text()
NAMES = ("mean", "median", "variance", "stdev", "mode_of", "spread")
TEMPLATES = ("Fix bugs in {0}.", "Remove the function {0}.", "Fix bugs in {0} and {1}.",
             "Rename the function {0} to {1} and update every call of it.",
             "Add a function `{1}(values)` at the end of the file.",
             "Replace the docstring of {0} with the one-line docstring \"\"\"{1}.\"\"\"",
             "Add a parameter {1} to {0} and pass it from stdev.")


@given(st.sampled_from(TEMPLATES), st.sampled_from(NAMES), st.sampled_from(NAMES))
def test_a_reading_is_what_each_reader_gives(template: str, first: str, second: str) -> None:
    instruction = template.format(first, second)
    reading = read_edit(STATS, instruction, "python")
    assert reading.reach == named_reach(STATS, instruction, "python")
    assert reading.scope == block_scope(STATS, instruction, "python")
    assert reading.places == addition_places(STATS, instruction, "python")
    assert reading.added == (added_names(STATS, instruction) if reading.places else frozenset())
    assert reading.removing == removal_targets(STATS, instruction, "python")
    assert reading.renamed == renames(STATS, instruction, "python")
    assert reading.placed == bool(reading.reach)


def test_the_views_take_the_reading_they_are_given() -> None:
    long = STATS + "".join(f"\n\ndef pad_{i}(values):\n    return values[{i}]\n"
                           for i in range(30))
    # An instruction that targets nothing, with a reading that reaches median: median is shown.
    given_reading = read_edit(long, "Fix bugs in median.", "python")
    view = focus_view(long, "Make it better.", "python", reading=given_reading)
    assert focus_view(long, "Make it better.", "python") is None
    assert view is not None and "def median(" in view.text and "def pad_20(" not in view.text
    excerpt = excerpt_view(long, "Make it better.", "python", reading=given_reading)
    assert excerpt is not None and "def median(" in excerpt.text
    assert excerpt_view(long, "Fix bugs in median.", "python", reading=NOTHING) is None


MEDIAN = STATS[STATS.index("def median("):STATS.index("def variance(")].rstrip("\n") + "\n"
FIXED_MEDIAN = (MEDIAN[:MEDIAN.rindex("    return ordered[middle]\n")]
                + "    return (ordered[middle - 1] + ordered[middle]) / 2\n")
FIX = f"{BLOCK_OPEN}def median(values):\n{DIVIDER}{FIXED_MEDIAN}{BLOCK_CLOSE}"


@pytest.mark.parametrize("mode", ["auto", "program"])
def test_an_edit_reads_its_instruction_once(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = reading_module.read_edit

    def counted(document: str, instruction: str, language: str | None) -> Reading:
        calls.append(instruction)
        return real(document, instruction, language)

    for module in ("copygram.session", "copygram.decode.loop", "copygram.language.focus"):
        monkeypatch.setattr(f"{module}.read_edit", counted)
    # A program for a view of the file (focus_tokens), in auto mode too (auto_program_tokens).
    session = EditSession(ScriptedBackend(STATS, reply=FIX), mode=mode, focus_tokens=64,
                          auto_program_tokens=1 << 20)
    result = session.edit(STATS, "Fix bugs in median.", language="python")
    assert result.mode == "program" and "(ordered[middle - 1] + ordered[middle]) / 2" in result.text
    assert calls == ["Fix bugs in median."]
