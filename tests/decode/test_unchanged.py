"""Blocks that change nothing, written again from the model's most likely change
(``retry_unchanged``, :mod:`copygram.decode.unchanged`): the choice it takes back, and the loop
through the session with a scripted model of two minds and the real llguidance constraint."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import ConfigError, DoneEvent, TokenEvent
from copygram.config import parse_config
from copygram.decode.drafting import DraftConfig
from copygram.decode.events import RetractEvent
from copygram.decode.unchanged import UnchangedBlocks
from copygram.language.block_scan import BlockScanner, BlockSpan
from copygram.language.lines import split_lines
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.session import EditSession
from copygram.testing import EOS, ScriptedBackend, TwoMindsBackend

DOCUMENT = "import math\n\n\ndef area(r):\n    return math.pi * r\n\n\nprint(area(2))\n"
HEAD = "def area(r):\n"
UNIT = "def area(r):\n    return math.pi * r\n"
FIXED = "def area(r):\n    return math.pi * r * r\n"
NO_OP = BLOCK_OPEN + HEAD + DIVIDER + UNIT + BLOCK_CLOSE
FIX = BLOCK_OPEN + HEAD + DIVIDER + FIXED + BLOCK_CLOSE
TOKENS = [bytes([i]) for i in range(EOS)] + [b""]


def scan_blocks(program: bytes) -> tuple[list[BlockSpan], bool]:
    """The closed blocks of ``program`` and whether it ends inside a replacement."""
    scanner = BlockScanner()
    scanner.advance(program)
    return scanner.spans, scanner.in_replacement


def test_scan_blocks_finds_closed_blocks_and_an_open_replacement() -> None:
    program = (NO_OP + BLOCK_OPEN + HEAD + DIVIDER + "def").encode()
    spans, open_replacement = scan_blocks(program)
    start = len((BLOCK_OPEN + HEAD + DIVIDER).encode())
    close = start + len(UNIT)
    assert spans == [BlockSpan(start, close, close + len(BLOCK_CLOSE))]
    assert open_replacement
    assert scan_blocks(NO_OP.encode()) == (spans, False)
    assert scan_blocks((BLOCK_OPEN + "def").encode()) == ([], False)  # a search part is open
    # A replacement line that reads like a marker other than the closing one is text.
    odd = (BLOCK_OPEN + HEAD + DIVIDER + BLOCK_OPEN + DIVIDER).encode()
    assert scan_blocks(odd) == ([], True)


def _logits(best: int, others: dict[int, float]) -> npt.NDArray[np.float32]:
    logits = np.zeros(EOS + 1, dtype=np.float32)
    for token, value in others.items():
        logits[token] = value
    logits[best] = 10.0
    return logits


def _write(guard: UnchangedBlocks, text: str, runner_up: dict[int, tuple[int, float]]) -> bytes:
    """Feed ``text`` byte by byte as the model's choices; ``runner_up``: at byte offset k of the
    text, the second-best token and its logit (else every other token at 0)."""
    data = text.encode()
    allowed = np.ones(EOS + 1, dtype=np.bool_)
    for k, byte in enumerate(data):
        others = dict([runner_up[k]]) if k in runner_up else {}
        guard.note(data[:k], k, byte, _logits(byte, others), allowed)
    return data


def test_the_retry_takes_the_closest_choice_that_changes_the_block() -> None:
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True)
    at_return = NO_OP.index("return")
    at_r = NO_OP.index("r\n>>>")
    runner_up = {
        at_return: (ord("y"), 7.0),  # "yeturn": a change, margin 3
        at_r + 1: (ord(" "), 8.0),  # " * r" goes on: a change, margin 2, the closest
        NO_OP.index("pi"): (ord("p"), 9.5),  # "p": the same byte is no change
    }
    data = _write(guard, NO_OP, runner_up)
    retry = guard.retry(data)
    assert retry is not None
    assert (retry.index, retry.token, retry.margin) == (at_r + 1, ord(" "), 2.0)
    assert guard.retry(data) is None  # nothing closed since
    guard.forget(retry.index)
    # The block written again is kept, unchanged or not: once per block.
    _write(guard, NO_OP[: retry.index], {})
    assert guard.retry(data) is None


@pytest.mark.parametrize(("removing", "removed"), [(((4, 5),), True), (((8, 8),), False),
                                                 ((), False)])
def test_a_block_over_a_definition_to_remove_retries_as_the_removal(
        removing: tuple[tuple[int, int], ...], removed: bool) -> None:
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, removing=removing)
    start = NO_OP.index(DIVIDER) + len(DIVIDER)  # the replacement's first token
    at_r = NO_OP.index("r\n>>>")
    # Closing at once (the removal) ranked second there, 4 under; a change 2 under elsewhere.
    data = _write(guard, NO_OP, {start: (ord(">"), 6.0), at_r + 1: (ord(" "), 8.0)})
    retry = guard.retry(data)
    assert retry is not None
    if removed:  # the definition asked to be removed: its removal, whatever the margins
        assert (retry.index, retry.token, retry.margin) == (start, ord(">"), 4.0)
    else:  # another definition, or no removal asked: the smallest margin
        assert (retry.index, retry.token, retry.margin) == (at_r + 1, ord(" "), 2.0)
    # Written again changed, the block is retried as the removal too; elsewhere it is kept.
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, removing=removing)
    data = _write(guard, FIX, {start: (ord(">"), 6.0)})
    retry = guard.retry(data)
    assert (retry is not None) == removed
    if retry is not None:
        assert (retry.index, retry.token) == (start, ord(">"))
    # A block that removes its unit already is kept.
    removal = BLOCK_OPEN + HEAD + DIVIDER + BLOCK_CLOSE
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, removing=removing)
    assert guard.retry(_write(guard, removal, {})) is None


def test_a_token_that_spells_what_came_next_is_no_change() -> None:
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True)
    # Every runner-up byte is the one the block went on with, or lies in the closing marker.
    close = NO_OP.index(BLOCK_CLOSE)
    runner_up = {close + 2: (ord("x"), 9.9)}
    data = _write(guard, NO_OP, runner_up)
    retry = guard.retry(data)
    assert retry is not None and retry.margin == 10.0  # only the margin-10 others are left
    assert retry.index != close + 2


def test_closing_where_the_block_still_changes_nothing_is_no_change() -> None:
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True)
    # Closing after the head: a head block that stops where the body begins replaces only the
    # header, so the block would still be a no-op. Closing after the docstring-free body's first
    # line is not possible here; the only close candidate is the no-op one.
    body = NO_OP.index("    return")
    data = _write(guard, NO_OP, {body: (ord(">"), 9.9)})
    retry = guard.retry(data)
    assert retry is not None and retry.margin == 10.0  # the close (margin 0.1) was skipped


def test_a_carriage_return_or_a_cut_character_is_not_taken_back_to() -> None:
    document = DOCUMENT.replace("math.pi * r", "math.pi * r  # é")
    no_op = NO_OP.replace("math.pi * r", "math.pi * r  # é")
    guard = UnchangedBlocks(split_lines(document), TOKENS, [EOS], heads=True)
    inside = len(no_op[: no_op.index("é")].encode()) + 1  # the character's second byte
    line_end = len(no_op[: no_op.index("é\n")].encode()) + 2
    data = _write(guard, no_op, {})
    # Rewrite the choices at those bytes with close runner-ups, through note() as the loop does.
    guard = UnchangedBlocks(split_lines(document), TOKENS, [EOS], heads=True)
    allowed = np.ones(EOS + 1, dtype=np.bool_)
    for k, byte in enumerate(data):
        others = ({0xA8: 9.9} if k == inside else {ord("\r"): 9.9} if k == line_end else {})
        guard.note(data[:k], k, byte, _logits(byte, others), allowed)
    retry = guard.retry(data)
    assert retry is not None and retry.margin == 10.0


def test_each_unchanged_block_is_written_again_once() -> None:
    document = DOCUMENT + "\n\ndef twice(r):\n    return 2 * r\n"
    second = BLOCK_OPEN + "def twice(r):\n" + DIVIDER + "def twice(r):\n    return 2 * r\n" + \
        BLOCK_CLOSE
    guard = UnchangedBlocks(split_lines(document), TOKENS, [EOS], heads=True)
    first_retry = guard.retry(_write(guard, NO_OP, {NO_OP.index("pi"): (ord("x"), 9.0)}))
    assert first_retry is not None and first_retry.index == NO_OP.index("pi")
    guard.forget(first_retry.index)
    # The first block written again, unchanged still (kept: once per block), then the second.
    program = NO_OP + second
    data = _write(guard, program, {len(NO_OP) + second.index("2 *"): (ord("3"), 8.0)})
    second_retry = guard.retry(data)
    assert second_retry is not None and second_retry.index == len(NO_OP) + second.index("2 *")
    guard.forget(second_retry.index)
    assert guard.retry(_write(guard, program, {})) is None


def test_a_block_that_changes_its_lines_is_kept() -> None:
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True)
    data = _write(guard, FIX, {FIX.index("return"): (ord("y"), 9.9)})
    assert guard.retry(data) is None


def _session(backend: ScriptedBackend, **options: object) -> EditSession:
    return EditSession(backend, on_damage="keep",
                       **{"mode": "program", **options})


def test_an_unchanged_block_is_written_again_from_the_models_runner_up() -> None:
    backend = TwoMindsBackend(DOCUMENT, reply=NO_OP, second=FIX)
    events = list(_session(backend).stream(DOCUMENT, "Fix area."))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.result.program_text == FIX
    assert done.result.text == DOCUMENT.replace("pi * r\n", "pi * r * r\n")
    assert done.result.stats.unchanged_retries == 1
    # The stream took the program back to where it parted, and went on from there.
    retracts = [e for e in events if isinstance(e, RetractEvent)]
    parted = len(NO_OP[: NO_OP.index("r\n>>>") + 1].encode())
    assert [e.start for e in retracts] == [parted]
    after = events[events.index(retracts[0]) + 1:]
    tokens = [e for e in after if isinstance(e, TokenEvent)]
    assert tokens[0].start == parted and tokens[0].text == " "
    # The KV cache holds the program written, nothing of the block taken back.
    cached = bytes(t for t in backend.cached_ids if t < EOS)
    assert cached.endswith(FIX.encode()) and NO_OP.encode() not in cached


def test_a_block_closed_on_its_last_line_unchanged_is_written_again() -> None:
    """The default model closed an unchanged head block with ``} >>> REPLACE`` (a 385-line
    JavaScript file) and the retry found no choice: the arrows are the marker, the text before
    them the block's, and a line break there would only close the block the other way."""
    loose = NO_OP.replace("\n" + BLOCK_CLOSE, " >>> REPLACE\n")
    backend = TwoMindsBackend(DOCUMENT, reply=loose, second=FIX)
    result = _session(backend).edit(DOCUMENT, "Fix area.")
    assert result.program_text == FIX and result.stats.unchanged_retries == 1
    assert result.text == DOCUMENT.replace("pi * r\n", "pi * r * r\n")
    # Where that block closed, a line break, or the close spelled otherwise (no space, the
    # marker's seven arrows), is no change; other text is.
    program = loose.encode()
    scanner = BlockScanner(loose=True)
    scanner.advance(program)
    (span,) = scanner.spans
    blocks = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, {EOS}, heads=True)
    at = program.index(b" >>>")
    for data, changes in ((b">>>>>>>", False), (b"\n", False), (b" >>>>>>> REPL", False),
                          (b" * r", True), (b";", True)):
        assert blocks._changes(program, span, at, data) is changes, data


def test_retry_unchanged_false_keeps_the_models_program() -> None:
    backend = TwoMindsBackend(DOCUMENT, reply=NO_OP, second=FIX)
    result = _session(backend, retry_unchanged=False).edit(DOCUMENT, "Fix area.")
    assert result.program_text == NO_OP
    assert result.text == DOCUMENT
    assert result.stats.unchanged_retries == 0


@given(st.floats(min_value=0.5, max_value=9.5), st.booleans())
def test_the_retry_is_the_same_however_the_block_is_drafted(doubt: float,
                                                             drafts: bool) -> None:
    # Drafted (verified in batched forwards) or decoded a token a forward, the choice the retry
    # takes back and the program it ends with are the same.
    backend = TwoMindsBackend(DOCUMENT, reply=NO_OP, second=FIX, doubt=doubt)
    result = EditSession(backend, on_damage="keep", draft_tokens=None if drafts else 0,
                         mode="program").edit(DOCUMENT, "Fix area.")
    assert result.program_text == FIX
    assert result.stats.unchanged_retries == 1


def test_a_sampled_block_is_kept_as_drawn() -> None:
    # At temperature 0.1 the two minds are near even: of the first seeds, some draw the block
    # unchanged (which seeds depends on how many draws the drafts leave to the sampler). Each
    # such block is kept as drawn; the others are the fix, drawn, not retried.
    drawn = []
    for seed in range(12):
        backend = TwoMindsBackend(DOCUMENT, reply=NO_OP, second=FIX, doubt=9.99)
        session = EditSession(backend, on_damage="keep",
                              temperature=0.1, seed=seed, mode="program")
        result = session.edit(DOCUMENT, "Fix area.")
        assert result.stats.unchanged_retries == 0
        drawn.append(result.program_text)
    assert NO_OP in drawn and set(drawn) <= {NO_OP, FIX}


def test_a_rewound_block_drafter_drafts_as_a_fresh_one() -> None:
    from copygram.decode.drafting.blocks import BlockDrafter

    lines = split_lines(DOCUMENT)
    backend = ScriptedBackend(DOCUMENT, reply="")

    def drafter() -> BlockDrafter:
        return BlockDrafter(lines, backend.tokenize, TOKENS, DraftConfig(adaptive=False),
                            heads=True)

    taken = BLOCK_OPEN + HEAD + DIVIDER + "def area(r):\n    return math.pi"
    again = BLOCK_OPEN + HEAD + DIVIDER + "def area(r):\n    return 2.0 * p"  # as long, other bytes
    assert len(taken) == len(again)
    rewound = drafter()
    rewound.propose(backend.tokenize(taken))
    rewound.rewind(len((BLOCK_OPEN + HEAD + DIVIDER + "def area(r):\n    return ").encode()))
    fresh = drafter().propose(backend.tokenize(again))
    assert rewound.propose(backend.tokenize(again)) == fresh


def test_retry_unchanged_is_for_blocks() -> None:
    assert parse_config({}).session.retry_unchanged is True
    assert parse_config({"route": {"syntax": "lines"}}).session.retry_unchanged is False
    with pytest.raises(ConfigError, match='retry_unchanged acts on search/replace blocks'):
        parse_config({"route": {"syntax": "lines", "retry_unchanged": True}})
    with pytest.raises(ConfigError, match="retry_unchanged"):
        EditSession(ScriptedBackend(DOCUMENT), on_damage="keep",
                    syntax="lines", retry_unchanged=True, mode="program")
    with pytest.raises(ConfigError, match="true or false"):
        parse_config({"route": {"retry_unchanged": "yes"}})


# -- a block that closes where its replacement breaks the file's parse goes on -------------------

WIDENED = "def area(r, calls=None):\n    if calls is not None:\n"
# Closed after an `if` with no body: area's lines give way to these two, which do not parse.
CUT = BLOCK_OPEN + HEAD + DIVIDER + WIDENED + BLOCK_CLOSE
WHOLE = (BLOCK_OPEN + HEAD + DIVIDER + WIDENED + "        calls.append((r,))\n"
         "    return math.pi * r\n" + BLOCK_CLOSE)


def test_a_block_that_breaks_the_parse_goes_on_from_the_models_runner_up() -> None:
    at_close = CUT.index(BLOCK_CLOSE)
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, language="python")
    data = _write(guard, CUT, {at_close: (ord(" "), 7.0)})
    retry = guard.retry(data)
    assert retry is not None and (retry.index, retry.token, retry.margin) == (at_close, ord(" "),
                                                                               3.0)
    assert guard.retry(data) is None  # once per block
    # Not without the language; a runner-up that would close the block too (a blank line, then
    # the arrows) is passed over for the next (here 10 under: none); not for a block that
    # parses, nor a removal.
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True)
    assert guard.retry(_write(guard, CUT, {at_close: (ord(" "), 7.0)})) is None
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, language="python")
    assert guard.retry(_write(guard, CUT, {at_close: (ord("\n"), 7.0)})) is None
    for program in (WHOLE, BLOCK_OPEN + HEAD + DIVIDER + BLOCK_CLOSE):
        guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True,
                                language="python")
        assert guard.retry(_write(guard, program, {program.index(BLOCK_CLOSE):
                                                   (ord(" "), 7.0)})) is None
    # A document that does not parse tells nothing of the block.
    broken = DOCUMENT.replace("print(area(2))", "print(area(2)")
    guard = UnchangedBlocks(split_lines(broken), TOKENS, [EOS], heads=True, language="python")
    assert guard.retry(_write(guard, CUT, {at_close: (ord(" "), 7.0)})) is None


def test_a_cut_block_is_written_on_by_the_session() -> None:
    backend = TwoMindsBackend(DOCUMENT, reply=CUT, second=WHOLE)
    result = _session(backend).edit(DOCUMENT, "Add a last parameter calls=None to area.",
                                    language="python")
    assert result.program_text == WHOLE and result.stats.unchanged_retries == 1
    assert result.text == DOCUMENT.replace(UNIT, WHOLE[WHOLE.index(DIVIDER) + len(DIVIDER):
                                                         WHOLE.index(BLOCK_CLOSE)])
    assert result.damage == ()
    # Without the retry the file would have lost area's body: a parse the damage check sees.
    kept = _session(TwoMindsBackend(DOCUMENT, reply=CUT, second=WHOLE), retry_unchanged=False)
    cut = kept.edit(DOCUMENT, "Add a last parameter calls=None to area.", language="python")
    assert [d.kind for d in cut.damage] == ["parse"]


def test_a_block_the_model_is_sure_ends_there_is_left_to_the_damage_check() -> None:
    from copygram.decode.unchanged import GO_ON_MARGIN

    at_close = CUT.index(BLOCK_CLOSE)
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, language="python")
    data = _write(guard, CUT, {at_close: (ord(" "), 10.0 - GO_ON_MARGIN - 0.5)})
    assert guard.retry(data) is None


ADDED = UNIT + "\n\ndef volume(r):\n    return 4 / 3 * math.pi * r ** 3\n"
ADD = BLOCK_OPEN + HEAD + DIVIDER + ADDED + BLOCK_CLOSE


@pytest.mark.parametrize(("adding", "added", "goes_on"), [
    (((4, 5),), ("volume",), True), (((1, 1),), ("volume",), False), (((4, 5),), (), False)])
def test_a_block_on_an_additions_place_that_adds_nothing_goes_on_past_its_close(
        adding: tuple[tuple[int, int], ...], added: tuple[str, ...], goes_on: bool) -> None:
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, adding=adding,
                            added=added)
    close = NO_OP.index(BLOCK_CLOSE)
    at_r = NO_OP.index("r\n>>>")
    # A blank line where it closed, 6 under (beyond GO_ON_MARGIN's reach would not matter: an
    # addition goes on at any margin); a change 2 under inside the unit.
    data = _write(guard, NO_OP, {close: (ord("\n"), 4.0), at_r + 1: (ord(" "), 8.0)})
    retry = guard.retry(data)
    assert retry is not None
    if goes_on:  # the block heads the place and writes no added name: on past the close
        assert (retry.index, retry.token, retry.margin) == (close, ord("\n"), 6.0)
    else:  # another place, or no name added: the smallest change, as for any no-op
        assert (retry.index, retry.token, retry.margin) == (at_r + 1, ord(" "), 2.0)
    # A block that writes the new name is kept.
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True, adding=adding,
                            added=added)
    assert guard.retry(_write(guard, ADD, {})) is None


def test_an_added_function_is_written_after_its_place_from_the_models_runner_up() -> None:
    backend = TwoMindsBackend(DOCUMENT, reply=NO_OP, second=ADD)
    instruction = "Add a function volume(r) that returns the volume of a ball of radius r."
    result = _session(backend).edit(DOCUMENT, instruction, language="python")
    assert result.program_text == ADD
    assert result.text == DOCUMENT.replace(UNIT, ADDED)
    assert result.stats.unchanged_retries == 1


def test_an_added_functions_first_line_closed_alone_goes_on_once_more() -> None:
    # The model goes on past the place (the addition's retry), writes the new function's first
    # line and closes: read so, the block would replace area's header alone and volume take
    # area's body, so that close is taken back as well.
    opened = BLOCK_OPEN + HEAD + DIVIDER + UNIT + "\n\ndef volume(r):\n" + BLOCK_CLOSE
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True,
                            adding=((4, 5),), added=("volume",), language="python")
    close = NO_OP.index(BLOCK_CLOSE)
    first = guard.retry(_write(guard, NO_OP, {close: (ord("\n"), 9.0)}))
    assert first is not None and first.index == close
    guard.forget(first.index)
    at = opened.index(BLOCK_CLOSE)
    second = guard.retry(_write(guard, opened, {at: (ord(" "), 9.0)}))
    assert second is not None and (second.index, second.token) == (at, ord(" "))
    guard.forget(second.index)
    assert guard.retry(_write(guard, opened, {at: (ord(" "), 9.0)})) is None  # then kept


@pytest.mark.parametrize("ending", ["\n\ndef volume(r):\n",
                                    '\n\ndef volume(r):\n    """The volume of a ball."""\n',
                                    "\n\ndef volume(r):\n    # a ball\n    pass\n"])
def test_an_added_function_without_a_body_goes_on_at_any_margin(ending: str) -> None:
    # Its first line alone (it would take area's body), or a header with a docstring, comment
    # or pass only (a function that returns nothing): a miss as it stands, so the model goes on
    # past the close however sure it was of it.
    stub = BLOCK_OPEN + HEAD + DIVIDER + UNIT + ending + BLOCK_CLOSE
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True,
                            adding=((4, 5),), added=("volume",), language="python")
    at = stub.index(BLOCK_CLOSE)
    retry = guard.retry(_write(guard, stub, {at: (ord(" "), 1.0)}))
    assert retry is not None and (retry.index, retry.token, retry.margin) == (at, ord(" "), 9.0)
    # A body that does something is kept, and so is a block away from the addition's places.
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True,
                            adding=((4, 5),), added=("volume",), language="python")
    assert guard.retry(_write(guard, ADD, {ADD.index(BLOCK_CLOSE): (ord(" "), 1.0)})) is None
    guard = UnchangedBlocks(split_lines(DOCUMENT), TOKENS, [EOS], heads=True,
                            adding=((1, 1),), added=("volume",), language="python")
    assert guard.retry(_write(guard, stub, {at: (ord(" "), 1.0)})) is None
