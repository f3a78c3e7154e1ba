"""Following a program's blocks as its bytes grow (copygram.language.block_scan), and a block
that closes on the line it ends, end to end."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from copygram.decode.events import DoneEvent
from copygram.language.block_scan import BlockScanner, BlockSpan
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.session import EditSession
from copygram.testing import ScriptedBackend

JS = ("const keep = (x) => {\n  return x\n}\n\n"
      "/* Remove the vowels.\n  >>> removeVowels('abc')\n  'bc'\n  */\n"
      "const removeVowels = (text) => {\n  return text.replace(/[aeiou]/g, 'x')\n}\n\n"
      "console.log(keep(removeVowels('abc')))\n")
HEAD = "const removeVowels = (text) => {\n"
FIXED = HEAD + "  return text.replace(/[aeiou]/g, '')\n"


def test_a_loose_scanner_reads_a_block_closed_on_its_last_line() -> None:
    program = (BLOCK_OPEN + HEAD + DIVIDER + FIXED + "} >>> REPLACE\n").encode()
    start = len((BLOCK_OPEN + HEAD + DIVIDER).encode())
    close = start + len((FIXED + "} ").encode())  # the marker starts at its arrows
    scanner = BlockScanner(loose=True)
    scanner.advance(program)
    assert scanner.spans == [BlockSpan(start, close, len(program))]
    assert not scanner.in_replacement
    strict = BlockScanner()
    strict.advance(program)
    assert strict.spans == [] and strict.in_replacement
    both = BlockScanner(loose=True)
    both.advance((BLOCK_OPEN + HEAD + DIVIDER + BLOCK_CLOSE).encode())
    assert both.spans == [BlockSpan(start, start, start + len(BLOCK_CLOSE))]


@given(st.lists(st.integers(0, 200), max_size=6))
def test_a_scanner_reads_the_same_blocks_whatever_the_pieces(cuts: list[int]) -> None:
    program = (BLOCK_OPEN + HEAD + DIVIDER + FIXED + "} >>>>>>>>> REPLACE\n" + BLOCK_OPEN
               + "const keep = (x) => {\n" + DIVIDER + "  x >>> 2\n" + BLOCK_CLOSE).encode()
    whole = BlockScanner(loose=True)
    whole.advance(program)
    grown = BlockScanner(loose=True)
    for cut in sorted(cut % (len(program) + 1) for cut in cuts):
        grown.advance(program[:cut])
    grown.advance(program)
    assert grown.spans == whole.spans and len(whole.spans) == 2


def test_a_session_reads_a_block_closed_on_its_last_line() -> None:
    """The model closes its head block with ``} >>> REPLACE``: the edit is the block's, the file
    holds no markup, and nothing is redone."""
    reply = BLOCK_OPEN + HEAD + DIVIDER + FIXED + "} >>> REPLACE\n"
    session = EditSession(ScriptedBackend(JS, reply=reply), syntax="search_replace",
                          search_scope="head", mode="program", touch_named=False)
    events = list(session.stream(JS, "Fix removeVowels: it must drop the vowels.",
                                 language="javascript"))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.result.text == JS.replace("'x')", "'')")
    assert done.result.mode == "program" and not done.result.damage
