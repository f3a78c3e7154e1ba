"""Hypothesis strategies for documents and programs, shared by the test modules."""

from __future__ import annotations

from hypothesis import strategies as st

from copygram.language.lines import split_lines
from copygram.language.ops import Copy, Gen, Program
from copygram.language.search_replace import Block, find_run, head_run, may_head, search_line
from copygram.language.units import unit_end

# Fragments that stress the language: tag look-alikes, entities, every line ending, NUL, Unicode.
TRICKY = [
    "</gen>", "<gen>", "<copy lines=\"1-2\"/>", "<copy", "&lt;", "&amp;", "&", "<", ">", '"',
    "\r\n", "\n", "\r", "\t", "\x00", "é", "日本", "🙂", "\u2028", "\x0c", " ",
]

fragments = st.one_of(st.sampled_from(TRICKY), st.text(max_size=8))
texts = st.lists(fragments, max_size=30).map("".join)

# Documents built from a small pool of lines, so that before/after share lines as real edits do.
_line_pool = st.lists(
    st.tuples(texts.filter(lambda s: "\n" not in s and "\r" not in s),
              st.sampled_from(["\n", "\r\n", "\r"])).map("".join),
    min_size=1, max_size=8,
)


@st.composite
def related_documents(draw: st.DrawFn) -> tuple[str, str]:
    """Two documents drawn from one pool of lines (sharing, reordering, duplicating them)."""
    pool = draw(_line_pool)
    a = draw(st.lists(st.sampled_from(pool), max_size=25))
    b = draw(st.lists(st.one_of(st.sampled_from(pool), texts), max_size=25))
    a_text, b_text = "".join(a), "".join(b)
    if draw(st.booleans()) and a_text:
        a_text += draw(texts.filter(lambda s: "\n" not in s and "\r" not in s))
    return a_text, b_text


@st.composite
def programs(draw: st.DrawFn, n_lines: int | None = None) -> Program:
    """A valid program for a document of ``n_lines`` lines (drawn if not given)."""
    n = n_lines if n_lines is not None else draw(st.integers(0, 50))
    ops: list[Copy | Gen] = []
    for _ in range(draw(st.integers(0, 8))):
        if n and draw(st.booleans()):
            start = draw(st.integers(1, n))
            ops.append(Copy(start, draw(st.integers(start, n))))
        else:
            ops.append(Gen(draw(texts)))
    return Program(ops)


def n_lines(document: str) -> int:
    return len(split_lines(document))


_sr_lines = st.lists(st.sampled_from(["a", "b", "", "  x = 1", "}", "é", "<<<", "=== x"]),
                     min_size=1, max_size=12)


@st.composite
def ordered_edits(draw: st.DrawFn) -> tuple[str, Program]:
    """A document (``\\n`` endings) and a program whose copies keep its order."""
    lines = [line + "\n" for line in draw(_sr_lines)]
    if draw(st.booleans()):
        lines[-1] = lines[-1].rstrip("\n") or "z"
    n, cursor = len(lines), 1
    ops: list[Copy | Gen] = []
    while cursor <= n:
        action = draw(st.sampled_from(["copy", "skip", "gen"]))
        if action == "gen":
            ops.append(Gen("".join(line + "\n" for line in draw(_sr_lines))))
            continue
        end = draw(st.integers(cursor, n))
        if action == "copy":
            ops.append(Copy(cursor, end))
        cursor = end + 1
    if draw(st.booleans()):
        ops.append(Gen(draw(st.sampled_from(["tail\n", ""]))))
    return "".join(lines), Program(ops)


_layout_lines = st.lists(st.sampled_from([
    "def f(x):", "    y = 1", "        z", "    return y", "", "}", "  }", "} else {", "else:",
    "@d", "a", "    ) -> int:", "=======", "x = [", "]"]), min_size=1, max_size=14)


@st.composite
def head_edits(draw: st.DrawFn) -> tuple[str, list[Block]]:
    """A document laid out in units (indentation, brackets, decorators; ``\\n`` endings, the last
    line maybe open) and head blocks over it (``search_scope = "head"``): each run the unit its
    head opens, each head its first occurrence after the previous block's unit."""
    lines = [line + "\n" for line in draw(_layout_lines)]
    if draw(st.booleans()):
        lines[-1] = lines[-1].rstrip("\n") or "z"
    keys = [search_line(line) for line in lines]
    blocks: list[Block] = []
    cursor = 1
    while cursor <= len(lines) and draw(st.booleans()):
        heads = [k for k in range(cursor, len(lines) + 1)
                 if may_head(lines[k - 1]) and find_run(lines, keys[k - 1 : k], cursor, keys) == k]
        if not heads:
            break
        head = draw(st.sampled_from(heads))
        replacement = "".join(line + "\n" for line in draw(_sr_lines)) if draw(
            st.booleans()) else ""
        blocks.append(Block(head_run(lines, head, replacement), replacement))
        cursor = unit_end(lines, head) + 1
    return "".join(lines), blocks
