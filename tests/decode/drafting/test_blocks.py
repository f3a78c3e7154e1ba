"""Drafts of head blocks from the opening marker on (:mod:`copygram.decode.drafting.blocks`): the
head line the instruction names, the divider and the unit, verified like any draft."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from copygram.decode.drafting import DraftConfig
from copygram.decode.drafting.blocks import BlockDrafter, NamedHeads, instruction_names
from copygram.language.lines import split_lines
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER, search_line
from copygram.session import EditSession
from copygram.testing import ScriptedBackend

DOCUMENT = ("import math\n\n\ndef area(r):\n    return math.pi * r\n\n\n"
            "def perimeter(r):\n    # perimeter(1) is 2 pi\n    return math.pi * r\n")
LINES = split_lines(DOCUMENT)
KEYS = [search_line(line) for line in LINES]
PERIMETER = "def perimeter(r):\n    # perimeter(1) is 2 pi\n    return math.pi * r\n"
REPLY = (BLOCK_OPEN + "def perimeter(r):\n" + DIVIDER
         + PERIMETER.replace("math.pi * r", "2 * math.pi * r") + BLOCK_CLOSE)
JS = ("/* Sum of xs.\n  >>> sumAll([1, 2])\n  3\n  */\nconst sumAll = (xs) => {\n"
      "  return xs.reduce((a, b) => a + b, 1);\n}\n")


def drafter(instruction: str, document: str = DOCUMENT) -> tuple[BlockDrafter, ScriptedBackend]:
    backend = ScriptedBackend(document, reply="")
    return BlockDrafter(split_lines(document), backend.tokenize, backend.token_bytes(),
                        DraftConfig(adaptive=False), heads=True,
                        instruction=instruction), backend


def test_instruction_names_are_its_words_of_three_characters_or_more_longest_first() -> None:
    assert instruction_names("Fix bugs in has_close_elements, in x.") == [
        "has_close_elements", "bugs", "Fix"]
    assert instruction_names("") == []


def test_the_named_head_is_the_unit_opening_line_holding_the_longest_name() -> None:
    named = NamedHeads(LINES, KEYS, "Fix the perimeter of a circle")
    assert named.head(1) == 8  # not the comment line that names it too
    assert named.head(9) is None  # past the head: no definition holds it
    assert named.head(1, prefix="def p") == 8
    assert named.head(1, prefix="def a") is None
    assert NamedHeads(LINES, KEYS, "Make it faster").head(1) is None
    # The longest word that a definition holds: "perimeter" is in no head here, "area" is.
    assert NamedHeads(LINES, KEYS, "Fix area, not the perimeters").head(1) == 4
    # A comment's example names the function before its definition does: the definition opens
    # a unit, the example does not.
    js = split_lines(JS)
    assert NamedHeads(js, [search_line(line) for line in js], "Fix bugs in sumAll.").head(1) == 5


def test_a_named_head_that_occurs_twice_is_read_at_its_first_occurrence() -> None:
    # Line 2 opens a unit and line 1, the same text, does not: the constraint reads the head
    # as line 1 (its first occurrence after the cursor), and so does the guess.
    lines = split_lines("x = run(1)\nx = run(1)\n    y\n")
    assert NamedHeads(lines, [search_line(line) for line in lines], "Fix run.").head(1) == 1
    assert NamedHeads(lines, [search_line(line) for line in lines], "Fix run.").head(2) == 2


def test_a_begun_block_is_drafted_through_the_named_head_and_its_unit() -> None:
    blocks, backend = drafter("Fix the perimeter.")
    program = BLOCK_OPEN[:3]
    draft = blocks.propose(backend.tokenize(program))
    assert draft is not None and draft.source == "line"
    expected = (BLOCK_OPEN + "def perimeter(r):\n" + DIVIDER + PERIMETER + BLOCK_CLOSE)[3:]
    assert backend.detokenize(draft.tokens) == expected[:len(draft.tokens)]
    # Once the model wrote another head, the draft follows the model's.
    program = BLOCK_OPEN + "def area(r):\n"
    draft = blocks.propose(backend.tokenize(program))
    assert draft is not None
    expected = DIVIDER + "def area(r):\n    return math.pi * r\n" + BLOCK_CLOSE
    assert backend.detokenize(draft.tokens) == expected[:len(draft.tokens)]


def test_without_a_name_the_head_is_the_models_to_choose() -> None:
    blocks, backend = drafter("Double it.")
    for program in (BLOCK_OPEN[:3], BLOCK_OPEN, BLOCK_OPEN + "def "):
        assert blocks.propose(backend.tokenize(program)) is None
    program = BLOCK_OPEN + "def area(r):\n"  # written: drafted from there
    assert blocks.propose(backend.tokenize(program)) is not None
    # Between blocks and past a closed one nothing is begun.
    done = REPLY
    assert blocks.propose(backend.tokenize(done)) is None


def test_a_block_begun_after_a_closed_one_or_a_plan_drafts_the_named_head_after_it() -> None:
    area = BLOCK_OPEN + "def area(r):\n" + DIVIDER + "def area(r):\n    return r\n" + BLOCK_CLOSE
    expected = (BLOCK_OPEN + "def perimeter(r):\n" + DIVIDER + PERIMETER + BLOCK_CLOSE)[3:]
    for before in (area, "Plan: fix the perimeter.\n"):
        blocks, backend = drafter("Fix area and perimeter.")
        program = before + BLOCK_OPEN[:3]
        draft = blocks.propose(backend.tokenize(program))
        assert draft is not None, before
        assert backend.detokenize(draft.tokens) == expected[:len(draft.tokens)]
    # A name whose definition lies before the cursor (area, past the first block) is no guess.
    blocks, backend = drafter("Fix area.")
    program = area + BLOCK_OPEN[:3]
    assert blocks.propose(backend.tokenize(program)) is None


def head_session(reply: str, draft_tokens: int | None = None) -> EditSession:
    # touch_named off: a reply that heads a function the instruction does not name is written
    # as it is (the drafts' invariance is the point here, not the constraint's).
    backend = ScriptedBackend(DOCUMENT, reply=reply)
    return EditSession(backend, on_damage="keep", syntax="search_replace", search_scope="head",
                       mode="program", draft_tokens=draft_tokens, touch_named=False)


def test_a_named_head_saves_the_forwards_before_the_unit_and_writes_the_same_program() -> None:
    named = head_session(REPLY).edit(DOCUMENT, "Fix perimeter.")
    unnamed = head_session(REPLY).edit(DOCUMENT, "Double it.")
    plain = head_session(REPLY, draft_tokens=0).edit(DOCUMENT, "Fix perimeter.")
    assert named.program_text == unnamed.program_text == plain.program_text == REPLY
    assert named.text == "2 * math.pi * r\n".join(DOCUMENT.rsplit("math.pi * r\n", 1))
    assert named.stats.forwards < unnamed.stats.forwards < plain.stats.forwards


@settings(max_examples=40, deadline=None)
@given(instruction=st.sampled_from(["Fix perimeter.", "Fix area.", "Fix math.", "x", ""]),
       head=st.sampled_from(["def area(r):\n", "def perimeter(r):\n", "    return math.pi * r\n",
                             "import math\n"]),
       change=st.text(alphabet="abc xyz()\n", max_size=12))
def test_drafted_or_not_the_program_is_the_models(instruction: str, head: str,
                                                  change: str) -> None:
    # Whatever the instruction names, right or wrong, the program is the one the model writes.
    reply = BLOCK_OPEN + head + DIVIDER + head + change.replace("\n", "") + "\n" + BLOCK_CLOSE
    drafted = head_session(reply).edit(DOCUMENT, instruction)
    plain = head_session(reply, draft_tokens=0).edit(DOCUMENT, instruction)
    assert drafted.program_text == plain.program_text == reply
    assert drafted.text == plain.text
