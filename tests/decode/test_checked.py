"""A damaged edit is redone, refused or kept marked (copygram.decode.checked), never returned
as a sound one: the two failures of issue 40 with scripted models."""

from __future__ import annotations

from pathlib import Path

import pytest

from copygram import EditSession
from copygram.decode.events import DoneEvent, RedoEvent
from copygram.decode.prompt import REWRITE_SYSTEM
from copygram.errors import ConfigError, DamagedEditError, GenerationError, LengthError
from copygram.language.indent_style import relaid_text
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import PromptedBackend

STATS = (Path(__file__).resolve().parents[2] / "examples" / "stats.py").read_text()
RENAMED = (STATS.replace("def mean(", "def average(")
           .replace("centre = mean(values)", "centre = average(values)")
           .replace("print(mean(sample)", "print(average(sample)"))
# What Qwen2.5-Coder-1.5B wrote for "Rename the function mean to average and update every call
# of it." (issue 40): head-only blocks naming four functions average, and no call changed.
FOUR_AVERAGES = "".join(
    BLOCK_OPEN + f"def {name}(values):\n" + DIVIDER + "def average(values):\n" + BLOCK_CLOSE
    for name in ("mean", "median", "variance", "stdev"))


def session(program: str, rewrite: str | None, **options: object) -> EditSession:
    replies = ((REWRITE_SYSTEM, rewrite),) if rewrite is not None else ()
    backend = PromptedBackend(STATS, replies=(*replies, ("", program)))
    # The scripted tokens are bytes: STATS is 984 of them, 246 of Qwen2.5's, under focus_tokens
    # (no view, no excerpt) where a real model reads it; the fake one gets the same room.
    return EditSession(backend, **{"mode": "program", "focus_tokens": 4096, **options})


def test_the_rename_that_duplicated_a_name_is_redone_in_rewrite_mode() -> None:
    # touch_named off: the constraint no longer holds a rename to its uses (the next test), so
    # the model's program is written as it was and the damage check finds it.
    events = list(session(FOUR_AVERAGES, RENAMED, touch_named=False)
                  .stream(STATS, "Rename mean to average."))
    redo = [e for e in events if isinstance(e, RedoEvent)]
    assert len(redo) == 1
    assert {d.kind for d in redo[0].result.damage} == {"duplicate", "dangling"}
    assert redo[0].result.text.count("def average(") == 4  # what program mode would have written
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.result.text == RENAMED
    assert done.result.redone is redo[0].result
    assert done.result.damage == ()


def test_a_rename_program_is_held_to_reach_every_use() -> None:
    # The same program under the default constraint: after its four blocks the uses of mean in
    # variance and at the module's end are still to reach, so it may not end there; the
    # scripted model has nothing more to write, and the unfinished program is redone.
    result = session(FOUR_AVERAGES, RENAMED).edit(STATS, "Rename mean to average.")
    assert result.text == RENAMED
    assert result.redone is not None
    assert [d.kind for d in result.redone.damage] == ["unfinished"]


def test_a_sound_program_is_not_redone() -> None:
    median = STATS[STATS.index("def median"):STATS.index("\n\n\ndef variance")] + "\n"
    last = median.rindex("    return ordered[middle]\n")
    fixed = median[:last] + "    return (ordered[middle - 1] + ordered[middle]) / 2\n"
    program = BLOCK_OPEN + "def median(values):\n" + DIVIDER + fixed + BLOCK_CLOSE
    result = session(program, "unused").edit(STATS, "Fix median.")
    assert result.text == STATS.replace(median, fixed)
    assert result.text != STATS
    assert result.redone is None
    assert result.damage == ()


def test_a_rewrite_that_damages_the_file_too_is_refused() -> None:
    broken = STATS.replace("def stdev(values):", "def stdev(values:")
    with pytest.raises(DamagedEditError, match="damage") as caught:
        session(FOUR_AVERAGES, broken).edit(STATS, "Rename mean to average.")
    error = caught.value
    assert [d.kind for d in error.damage] == ["parse"]  # type: ignore[attr-defined]
    result = error.result
    assert result.text == broken  # type: ignore[attr-defined]
    assert result.redone is not None  # type: ignore[attr-defined]
    assert "program mode's edit was damaged too" in str(error)


def test_on_damage_error_and_keep() -> None:
    with pytest.raises(DamagedEditError) as caught:
        session(FOUR_AVERAGES, RENAMED, on_damage="error").edit(STATS, "Rename.")
    assert caught.value.partial_program == FOUR_AVERAGES
    kept = session(FOUR_AVERAGES, RENAMED, on_damage="keep").edit(STATS, "Rename.")
    assert kept.text.count("def average(") == 4
    assert {d.kind for d in kept.damage} == {"duplicate", "dangling"}
    with pytest.raises(ConfigError, match="on_damage"):
        session(FOUR_AVERAGES, RENAMED, on_damage="retry")


def test_rewrite_mode_refuses_a_damaging_rewrite() -> None:
    broken = STATS + "=======\n"
    rewriter = session("", broken, mode="rewrite")
    with pytest.raises(DamagedEditError, match="marker"):
        rewriter.edit(STATS, "Anything.")


def test_the_language_can_be_named() -> None:
    # As Python the four definitions of one name are damage; as text (no code: the marker check
    # alone, no guess where a language is named) they are not.
    with pytest.raises(DamagedEditError):
        session(FOUR_AVERAGES, None, on_damage="error").edit(STATS, "x", language="python")
    text = session(FOUR_AVERAGES, None, on_damage="error").edit(STATS, "x", language="text")
    assert text.text.count("def average(") == 4 and text.damage == ()
    # An unknown language is refused before the model runs.
    backend = PromptedBackend(STATS, replies=(("", FOUR_AVERAGES),))
    with pytest.raises(ConfigError, match="cobol"):
        EditSession(backend, mode="program").stream(STATS, "x", language="cobol")
    assert backend.calls == []


def test_a_model_set_on_writing_a_divider_into_the_file_never_gets_it_there() -> None:
    # The 322-line failure of issue 40: the replacement held a second divider and a SEARCH
    # body. The constraint admits neither line, so a model that insists loses its way and the
    # edit fails; no result holds the marker.
    head = "def mean(values):\n"
    program = (BLOCK_OPEN + head + DIVIDER + head + "    return 0\n" + DIVIDER + BLOCK_OPEN
               + head + BLOCK_CLOSE)
    events: list[object] = []
    with pytest.raises(GenerationError):
        events.extend(session(program, RENAMED, on_damage="keep").stream(STATS, "x"))
    assert not any(isinstance(e, DoneEvent) for e in events)


def test_a_program_that_never_finishes_is_redone_in_rewrite_mode() -> None:
    # The same insistent model under the default on_damage: its program cannot finish, so the
    # edit is done again in rewrite mode, marked "unfinished" (decode.checked).
    head = "def mean(values):\n"
    program = (BLOCK_OPEN + head + DIVIDER + head + "    return 0\n" + DIVIDER + BLOCK_OPEN
               + head + BLOCK_CLOSE)
    events = list(session(program, RENAMED).stream(STATS, "x"))
    redo = [e for e in events if isinstance(e, RedoEvent)]
    assert len(redo) == 1
    assert [d.kind for d in redo[0].result.damage] == ["unfinished"]
    assert redo[0].result.text == STATS  # the program wrote nothing into the file
    assert redo[0].result.program_text  # what it wrote before it failed is attached
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert (done.result.text, done.result.mode) == (RENAMED, "rewrite")
    assert done.result.redone is redo[0].result


def test_a_limit_the_caller_set_is_not_redone() -> None:
    # max_new_tokens bounds the program; a rewrite needs more room still, so the error stands.
    with pytest.raises(LengthError, match="max_new_tokens"):
        session(FOUR_AVERAGES, RENAMED, max_new_tokens=8).edit(STATS, "x")


def test_a_program_that_edits_another_function_than_the_one_named_is_redone() -> None:
    # Asked to fix median, the program rewrites mean: the file is sound, the edit missed.
    mean = STATS[STATS.index("def mean"):STATS.index("\n\n\ndef median")] + "\n"
    wrong = BLOCK_OPEN + "def mean(values):\n" + DIVIDER + mean.replace("values)", "values) ") \
        + BLOCK_CLOSE
    fixed = STATS.replace("    return ordered[middle]\n",
                          "    return (ordered[middle - 1] + ordered[middle]) / 2\n")
    # touch_named off: the constraint lets the program end without reaching median.
    events = list(session(wrong, fixed, touch_named=False).stream(STATS, "Fix median."))
    redo = [e for e in events if isinstance(e, RedoEvent)]
    assert len(redo) == 1 and [d.kind for d in redo[0].result.damage] == ["missed"]
    assert "names median" in redo[0].result.damage[0].detail
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.result.text == fixed
    # Where nothing can be redone, a miss is no refusal: the program's edit stands.
    kept = session(wrong, fixed, on_damage="keep", touch_named=False).edit(STATS, "Fix median.")
    assert kept.damage == () and kept.text != fixed
    # By default the constraint holds the program to go on to median; this scripted model has
    # nothing more to write, so its program never ends, and is redone too.
    events = list(session(wrong, fixed).stream(STATS, "Fix median."))
    redo = [e for e in events if isinstance(e, RedoEvent)]
    assert len(redo) == 1 and [d.kind for d in redo[0].result.damage] == ["unfinished"]
    assert redo[0].result.program_text.startswith(wrong)
    assert isinstance(events[-1], DoneEvent) and events[-1].result.text == fixed


def test_a_redo_that_still_misses_is_refused_not_reported_as_an_edit() -> None:
    # The rewrite that redoes the damaged rename writes the file as it was: no edit, so the
    # session says so instead of returning it as a success.
    with pytest.raises(DamagedEditError, match="left code that uses mean") as caught:
        session(FOUR_AVERAGES, STATS, touch_named=False).edit(STATS, "Rename mean to average.")
    assert {getattr(d, "kind", None) for d in caught.value.damage} == {"missed"}
    assert "redone in rewrite mode" in str(caught.value)


MEDIAN = STATS[STATS.index("def median"):STATS.index("\n\n\ndef variance")] + "\n"
MEDIAN_FIXED = (MEDIAN[:MEDIAN.rindex("    return ordered[middle]\n")]
                + "    return (ordered[middle - 1] + ordered[middle]) / 2\n")
FIXED = STATS.replace(MEDIAN, MEDIAN_FIXED)


def test_a_rewrite_whose_reply_was_one_function_is_put_back_in_the_file() -> None:
    # The default model's answer to a fix in a file of several functions is often that function
    # alone: written as the file, the others would be gone (a sound file, and no name dangles).
    documented = MEDIAN.replace(MEDIAN[MEDIAN.index('    """'):MEDIAN.index("    ordered")],
                                '    """The middle value."""\n')
    auto = session("unused", documented, mode="auto")
    instruction = 'Replace the docstring of median with """The middle value.""".'
    assert auto.mode_for(STATS, instruction) == "rewrite"
    result = auto.edit(STATS, instruction)
    assert result.text == STATS.replace(MEDIAN, documented)
    assert result.damage == ()
    assert result.stats.restored_definitions == 3  # mean, variance, stdev


def test_rewrite_mode_refuses_a_reply_that_lost_definitions() -> None:
    with pytest.raises(DamagedEditError, match="dropped mean, variance, stdev") as caught:
        session("", MEDIAN_FIXED, mode="rewrite").edit(STATS, "Fix median.")
    assert [d.kind for d in caught.value.damage] == ["lost"]  # type: ignore[attr-defined]
    # What the instruction asks to remove is no loss.
    without_mean = STATS.replace(STATS[STATS.index("def mean"):STATS.index("def median")], "")
    with pytest.raises(DamagedEditError, match="dangling"):  # variance still calls mean
        session("", without_mean, mode="rewrite").edit(STATS, "Remove the function mean.")
    # A predicted rewrite's reply is the caller's to read (the Predicted Outputs API).
    predicted = session("", MEDIAN_FIXED, mode="rewrite").edit(STATS, "Fix median.", STATS)
    assert predicted.text == MEDIAN_FIXED


def test_a_redo_whose_reply_was_one_function_is_put_back_too() -> None:
    mean = STATS[STATS.index("def mean"):STATS.index("\n\n\ndef median")] + "\n"
    wrong = BLOCK_OPEN + "def mean(values):\n" + DIVIDER + mean.replace("values)", "values) ") \
        + BLOCK_CLOSE
    result = session(wrong, MEDIAN_FIXED, touch_named=False).edit(STATS, "Fix median.")
    assert result.text == FIXED
    assert result.redone is not None and result.stats.restored_definitions == 3


def test_auto_refuses_a_rewrite_that_certainly_missed() -> None:
    # Asked for a docstring it quotes, the rewrite wrote another one: no reference edit of the
    # dev split misses so, and there is nothing to redo a rewrite with: refused, not written.
    reworded = STATS.replace('"""The middle value of a non-empty list of numbers.',
                             '"""The median of a non-empty list of numbers.')
    instruction = 'Replace the docstring of median with """The middle value."""'
    with pytest.raises(DamagedEditError, match="never wrote it") as caught:
        session("unused", reworded, mode="auto").edit(STATS, instruction)
    assert [d.kind for d in caught.value.damage] == ["missed"]  # type: ignore[attr-defined]
    # A weak miss is no refusal for a rewrite: a name the instruction introduces and the edit
    # never wrote (reference edits show it: "Fix closest_integer" in a file that spells it
    # closestInteger), a definition named and left as it was (an instruction may name what it
    # only talks about).
    mean_fixed = STATS.replace("return sum(values) / len(values)",
                               "return sum(values) / max(len(values), 1)")
    auto = session("unused", mean_fixed, mode="auto")
    talk = "Add a function `mode` like median; guard mean against an empty list."
    assert auto.mode_for(STATS, talk) == "rewrite"
    assert auto.edit(STATS, talk).text == mean_fixed
    # Rewrite mode's own reply is plain greedy's: not read for misses.
    assert session("", reworded, mode="rewrite").edit(STATS, instruction).text == reworded


MEDIAN_DOC = MEDIAN[MEDIAN.index('    """'):MEDIAN.index("    ordered")]


def test_a_program_that_dropped_the_docstring_of_what_it_fixed_gets_it_back() -> None:
    # The head block wrote median again without its docstring: the fix is kept, the docstring
    # put back where it was, and nothing is redone.
    program = BLOCK_OPEN + "def median(values):\n" + DIVIDER \
        + MEDIAN_FIXED.replace(MEDIAN_DOC, "") + BLOCK_CLOSE
    result = session(program, "unused").edit(STATS, "Fix median.")
    assert result.text == FIXED
    assert result.redone is None and result.damage == ()
    assert result.stats.restored_documentation == 1


def test_auto_s_rewrite_gets_dropped_documentation_back_and_rewrite_mode_refuses_it() -> None:
    instruction = "Add a function halve(x) that returns x / 2 at the end of the file."
    added = STATS.replace('\n\nif __name__', '\n\ndef halve(x):\n    return x / 2\n\n\nif __name__')
    reply = added.replace(MEDIAN_DOC, "")
    auto = session("unused", reply, mode="auto")
    assert auto.mode_for(STATS, instruction) == "rewrite"
    result = auto.edit(STATS, instruction)
    assert result.text == added
    assert result.stats.restored_documentation == 1
    with pytest.raises(DamagedEditError, match="dropped the documentation of median") as caught:
        session("", reply, mode="rewrite").edit(STATS, instruction)
    assert [d.kind for d in caught.value.damage] == ["lost"]  # type: ignore[attr-defined]
    # Asked for it, it is no loss.
    asked = session("", reply, mode="rewrite").edit(STATS, "Drop median's docstring; " + instruction)
    assert asked.text == reply


TABBED = relaid_text(STATS, "    ", "\t")


def test_a_function_written_back_in_four_spaces_keeps_the_file_s_tabs() -> None:
    # What Qwen2.5-Coder-1.5B's head block did in a tab-indented file before the worked example
    # was laid out in tabs too: the fixed function written back in four spaces.
    program = BLOCK_OPEN + "def median(values):\n" + DIVIDER + MEDIAN_FIXED + BLOCK_CLOSE
    backend = PromptedBackend(TABBED, replies=(("", program),))
    # (With the file shown in tabs: by default the model reads it in four spaces, below.)
    result = EditSession(backend, mode="program", focus_tokens=4096,
                         tabs_as_spaces=False).edit(TABBED, "Fix median.")
    assert result.text == relaid_text(FIXED, "    ", "\t")
    assert result.stats.restyled_lines == sum(1 for line in MEDIAN_FIXED.splitlines()
                                              if line.startswith(" "))
    assert result.redone is None and result.damage == ()
    # Shown the file in four spaces (decode.tab_view), its block is in the view's own unit,
    # and the result goes back in tabs as a whole.
    viewed = EditSession(PromptedBackend(relaid_text(TABBED, "\t", "    "),
                                         replies=(("", program),)),
                         mode="program", focus_tokens=4096).edit(TABBED, "Fix median.")
    assert viewed.text == result.text and viewed.stats.restyled_lines == 0
    # Asked for that layout, it is what was asked for.
    asked = EditSession(PromptedBackend(TABBED, replies=(("", program),)), mode="program",
                        focus_tokens=4096).edit(TABBED, "Fix median and indent it by spaces.")
    assert asked.stats.restyled_lines == 0 and "\n    ordered" in asked.text
    # Explicit rewrite mode writes the model's rewrite as it was (plain greedy's output).
    reply = TABBED.replace(relaid_text(MEDIAN, "    ", "\t"), MEDIAN_FIXED)
    rewritten = EditSession(PromptedBackend(TABBED, replies=((REWRITE_SYSTEM, reply),)),
                            mode="rewrite").edit(TABBED, "Fix median.")
    assert rewritten.text == reply and rewritten.stats.restyled_lines == 0


def test_a_json_file_a_program_left_unparsable_is_redone_and_never_written_so() -> None:
    # What Qwen2.5-Coder-1.5B's head block did with "Remove the license field." in a
    # package.json: the line gone, the comma before it kept (issue 40: never a corrupted file).
    document = ('{\n  "name": "demo",\n  "devDependencies": {\n    "jest": "^29.7.0"\n  },\n'
                '  "license": "MIT"\n}\n')
    program = BLOCK_OPEN + '  "license": "MIT"\n' + DIVIDER + BLOCK_CLOSE
    fixed = document.replace('  },\n  "license": "MIT"\n', "  }\n")
    for language in ("json", None):  # named by the file's suffix, or read from the text
        backend = PromptedBackend(document, replies=((REWRITE_SYSTEM, fixed), ("", program)))
        result = EditSession(backend, mode="program").edit(document, "Remove the license field.",
                                                           language=language)
        assert result.text == fixed and result.mode == "rewrite"
        assert result.redone is not None
        assert [d.kind for d in result.redone.damage] == ["parse"]
    # Without a redo it is refused, the damaged text attached.
    backend = PromptedBackend(document, replies=(("", program),))
    with pytest.raises(DamagedEditError, match="no longer parses as JSON") as refused:
        EditSession(backend, mode="program", on_damage="error").edit(document, "Remove it.",
                                                                     language="json")
    assert getattr(refused.value.result, "text", None) == document.replace(
        '  "license": "MIT"\n', "")


MESSAGES = ('{\n  "billing": {\n    "billing_title": "Billing",\n    "billing_label": "Plan"\n'
            '  },\n  "search": {\n    "search_title": "Search"\n  }\n}\n')
WORKFLOW = ("# The checks.\njobs:\n  lint:\n    steps:\n      - run: ruff check .\n\n"
            "  docs:\n    steps:\n      - run: mkdocs build\n")
CONFIG = '# The server.\n[server]\nport = 8080\n\n[docs]\ntheme = "material"\n'


@pytest.mark.parametrize(("document", "language", "instruction", "head", "bad", "good"), [
    # The program Qwen2.5-Coder-1.5B wrote for "Remove the billing_label message.": the
    # search section written again after the billing one (a duplicate key).
    (MESSAGES, "json", "Remove the billing_label message.", '  "billing": {\n',
     ('  "billing": {\n    "billing_title": "Billing"\n  },\n  "search": {\n'
      '    "search_title": "Search"\n  },\n'),
     MESSAGES.replace(',\n    "billing_label": "Plan"', "")),
    (WORKFLOW, "yaml", "Lint the src folder only, before the docs job.", "  lint:\n",
     "  lint:\n    steps:\n      - run: ruff\n   docs: [\n",
     WORKFLOW.replace("ruff check .", "ruff check src")),
    (CONFIG, "toml", "Fix the server port; the docs say 9090.", "[server]\n",
     "[server]\nport = 8080\n[docs]\n", CONFIG.replace("8080", "9090")),
])
@pytest.mark.parametrize("mode", ["program", "auto", "rewrite"])
def test_data_files_are_checked_in_every_mode_and_read_as_prose_elsewhere(
        document: str, language: str, instruction: str, head: str, bad: str, good: str,
        mode: str) -> None:
    # Named by the suffix or read from the text, with an instruction that names a key or a
    # section, an edit of a data file ends with a sound file; the readers of code (definitions,
    # documentation, indentation) never see the format.
    program = BLOCK_OPEN + head + DIVIDER + bad + BLOCK_CLOSE
    for named in (language, None):
        backend = PromptedBackend(document, replies=((REWRITE_SYSTEM, good), ("", program)))
        result = EditSession(backend, mode=mode).edit(document, instruction, language=named)
        assert result.damage == ()
        if mode != "program":
            assert result.text == good
        elif named or language == "json":
            assert result.text == good and result.redone is not None
            assert {d.kind for d in result.redone.damage} <= {"parse", "duplicate"}
        else:  # TOML and YAML unnamed are prose (never guessed): the markers alone
            assert result.redone is None and result.text != good


def test_a_data_file_key_asked_removed_and_kept_is_a_miss() -> None:
    # What Qwen2.5-Coder-1.5B's rewrite did with "Remove the docs job." in a workflow: the file
    # back as it was, reported as an edit. Now auto refuses it (a certain miss, nothing to redo
    # it), and a program that keeps it is redone.
    removed = WORKFLOW[:WORKFLOW.index("\n  docs:")] + "\n"
    backend = PromptedBackend(WORKFLOW, replies=((REWRITE_SYSTEM, WORKFLOW),))
    with pytest.raises(DamagedEditError, match="removes docs and the edit kept it"):
        EditSession(backend).edit(WORKFLOW, "Remove the docs job.", language="yaml")
    kept = (BLOCK_OPEN + "  lint:\n" + DIVIDER
            + "  lint:\n    steps:\n      - run: ruff check src\n" + BLOCK_CLOSE)
    backend = PromptedBackend(WORKFLOW, replies=((REWRITE_SYSTEM, removed), ("", kept)))
    result = EditSession(backend, mode="program").edit(WORKFLOW, "Remove the docs job.",
                                                       language="yaml")
    assert result.text == removed and result.redone is not None
    assert [d.kind for d in result.redone.damage] == ["missed"]
    # Unnamed, a YAML file is prose: nothing read.
    backend = PromptedBackend(WORKFLOW, replies=((REWRITE_SYSTEM, WORKFLOW),))
    assert EditSession(backend).edit(WORKFLOW, "Remove the docs job.").text == WORKFLOW


def test_a_data_file_edit_that_took_out_keys_it_was_not_asked_to_is_refused() -> None:
    # What Qwen2.5-Coder-1.5B's rewrite did with "Remove the billing_label message.": the
    # label of every section taken out, a file that parsed, written as a success before.
    labelled = MESSAGES.replace('"search_title": "Search"',
                                '"search_title": "Search",\n    "search_label": "Find"')
    every = MESSAGES.replace(',\n    "billing_label": "Plan"', "")
    backend = PromptedBackend(labelled, replies=((REWRITE_SYSTEM, every),))
    with pytest.raises(DamagedEditError, match=r"lost: the edit took out search\.search_label"):
        EditSession(backend).edit(labelled, "Remove the billing_label message.")
    asked = labelled.replace(',\n    "billing_label": "Plan"', "")
    backend = PromptedBackend(labelled, replies=((REWRITE_SYSTEM, asked),))
    assert EditSession(backend).edit(labelled, "Remove the billing_label message.").text == asked
