"""The tree-sitter parsers: a parse that would never end stops at its budget, as "no tree"."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.language import parsers
from copygram.language.units import layout_end, unit_end

# The TypeScript grammar's error recovery on this text grows without end (tree-sitter 0.26 with
# tree-sitter-typescript 0.23; found by the heads strategy of tests/strategies.py, which hung CI).
RUNAWAY = "} else {\nx = [\n    y = 1\n    ) -> int:\n\nx = [\n    y = 1\n}\n    y = 1\nx = [\n"


def _finishes(call: Callable[[], object], seconds: float) -> list[object]:
    """Runs ``call`` in a thread; the result list is empty where it did not finish in time."""
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    return done


def test_a_runaway_parse_stops_at_its_budget_and_reads_as_no_tree() -> None:
    if parsers.parser("typescript") is None:
        pytest.skip("the tree-sitter grammar for typescript is not installed")
    # Generous for a slow host: the budget stops it in ~0.3 s here, unbounded it never ends.
    done = _finishes(lambda: parsers.tree(RUNAWAY, "typescript"), 60)
    assert done == [None]
    # The parser is usable afterwards, and the callers fall back: units to the layout rules.
    after = parsers.tree("let x = {a: 1};\n", "typescript")
    assert after is not None and not after.root_node.has_error
    lines = RUNAWAY.splitlines(keepends=True)
    assert [unit_end(lines, n) for n in range(1, len(lines) + 1)] == [
        layout_end(lines, n) for n in range(1, len(lines) + 1)]


@pytest.mark.parametrize("language", sorted(parsers.GRAMMARS))
def test_a_real_file_parses_well_inside_its_budget(language: str) -> None:
    if parsers.parser(language) is None:
        pytest.skip(f"the tree-sitter grammar for {language} is not installed")
    # 1,500 lines of braces: the budget grows with the text, so real sizes always get a tree.
    text = "".join(f"{{ x{n} = [{n}, {{y: {n}}}]; }}\n" for n in range(1500))
    assert parsers.tree(text, language) is not None


@given(st.text(alphabet="{}()[];=xa \n", max_size=60))
def test_every_parse_ends_and_a_tree_is_the_whole_text(text: str) -> None:
    for language in parsers.GRAMMARS:
        found = parsers.tree(text, language)
        if found is not None:
            assert found.root_node.end_byte == len(text.encode("utf-8"))


def test_a_trees_nodes_hold_their_text() -> None:
    # A tree read through tree-sitter's read callback (the budgeted parse) crashed the process
    # on node.text: the tree returned is parsed from the bytes.
    if parsers.parser("javascript") is None:
        pytest.skip("the tree-sitter grammar for javascript is not installed")
    text = "".join(f"function f{n}(a) {{ return a + {n}; }}\n" for n in range(300))
    for _ in range(3):
        found = parsers.tree(text, "javascript")
        assert found is not None
        leaves, stack = [], [found.root_node]
        while stack:
            node = stack.pop()
            if node.child_count == 0:
                leaves.append(node.text)
            stack.extend(reversed(node.children))
        assert b"".join(leaves) == text.replace(" ", "").replace("\n", "").encode()
