from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from copygram.bench.formats import FORMATS, compare_formats, token_counter
from copygram.bench.patches import (
    DIVIDER,
    REPLACE,
    SEARCH,
    PatchError,
    apply_search_replace,
    apply_unified_diff,
    make_search_replace,
    make_unified_diff,
)
from copygram.language.lines import split_lines
from copygram.testing import ScriptedBackend
from tests.strategies import related_documents

_plain_line = st.sampled_from(["a\n", "b\n", "c\n", "def f():\n", "    return 1\n", "\n", "x = 2\n"])
plain_docs = st.lists(_plain_line, min_size=1, max_size=30).map("".join)


def _ends_a_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


@given(related_documents())
def test_search_replace_applies_exactly_or_refuses_for_a_documented_reason(
        pair: tuple[str, str]) -> None:
    before, after = pair
    try:
        text = make_search_replace(before, after)
    except PatchError as exc:
        # The format cannot write these edits (see patches' docstring); anything else is a bug.
        reason = str(exc)
        event(f"refused: {reason}")
        if "empty file" in reason:
            assert before == ""
        elif "marker" in reason:
            closed = [line if _ends_a_line(line) else line + "\n"
                      for line in split_lines(before) + split_lines(after)]
            assert {SEARCH, DIVIDER, REPLACE} & set(closed)
        else:
            assert "final newline" in reason, reason
            assert before and after and _ends_a_line(before) != _ends_a_line(after)
        return
    assert apply_search_replace(text, before) == after


@given(related_documents())
def test_unified_diff_always_applies_exactly(pair: tuple[str, str]) -> None:
    before, after = pair
    assert apply_unified_diff(make_unified_diff(before, after), before) == after


@given(plain_docs, plain_docs)
def test_newline_terminated_documents_always_round_trip(before: str, after: str) -> None:
    assert apply_search_replace(make_search_replace(before, after), before) == after
    assert apply_unified_diff(make_unified_diff(before, after), before) == after


@given(plain_docs, plain_docs)
def test_missing_final_newline_is_handled(before: str, after: str) -> None:
    before, after = before[:-1], after[:-1]
    assert apply_unified_diff(make_unified_diff(before, after), before) == after
    if before and after and not before.endswith("\n") and not after.endswith("\n"):
        # Both lack it: the SEARCH/REPLACE leniency covers that case.
        assert apply_search_replace(make_search_replace(before, after), before) == after


def test_insertion_gets_an_anchor_and_search_is_unique() -> None:
    before = "a\nb\na\nb\nc\n"
    after = "a\nb\na\nNEW\nb\nc\n"
    text = make_search_replace(before, after)
    assert text.count("<<<<<<< SEARCH") == 1
    search = text.split("<<<<<<< SEARCH\n")[1].split("=======\n")[0]
    assert search and before.count(search) == 1
    assert apply_search_replace(text, before) == after


def test_ambiguous_or_missing_search_fails() -> None:
    block = "<<<<<<< SEARCH\na\n=======\nz\n>>>>>>> REPLACE\n"
    with pytest.raises(PatchError, match="ambiguous"):
        apply_search_replace(block, "a\na\n")
    with pytest.raises(PatchError, match="not found"):
        apply_search_replace(block, "b\n")
    assert apply_search_replace(block, "a\nb\n") == "z\nb\n"


def test_unified_diff_checks_context() -> None:
    diff = make_unified_diff("a\nb\nc\n", "a\nB\nc\n")
    with pytest.raises(PatchError):
        apply_unified_diff(diff, "a\nX\nc\n")
    assert apply_unified_diff("", "same\n") == "same\n"


def test_compare_formats_counts_and_flags() -> None:
    before = "def f():\n    return 1\n\nprint(f())\n"
    after = "def f():\n    return 2\n\nprint(f())\n"
    results = compare_formats(before, after, lambda text: len(text.split()))
    assert set(results) == set(FORMATS)
    assert all(r.exact for r in results.values())
    assert results["whole_file"].tokens == len(after.split())


def test_a_final_newline_change_is_refused_not_written_wrong() -> None:
    for before, after in [("a\nb", "a\nc\n"), ("a\nb\n", "a\nc")]:
        with pytest.raises(PatchError, match="final newline"):
            make_search_replace(before, after)
        lossy = make_search_replace(before, after, strict=False)
        assert apply_search_replace(lossy, before) != after  # what strict mode guards against
        assert apply_unified_diff(make_unified_diff(before, after), before) == after


def test_token_counter_counts_backend_tokens() -> None:
    count = token_counter(ScriptedBackend())  # one token per byte
    assert count("é\n") == 3 and count("") == 0
