"""Where an edit that adds a unit goes (copygram.language.additions): the last statement of the
file's head and its last top-level definition, read by a parser, and no place where the new name
goes into a definition the document has."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.language.additions import added_names, addition_places
from copygram.language.asks import added_definitions, introduced
from copygram.language.lines import split_lines

PY = '''"""A module.

It has a docstring of several lines.
"""
import os
from typing import List

LIMIT = 3


def mean(values):
    return sum(values) / len(values)


class Stats:
    def spread(self, values):
        return max(values) - min(values)


if __name__ == "__main__":
    print(mean([1, 2]))
'''

CPP = '''/* A header comment. */
#include<stdio.h>
#include<vector>
using namespace std;
// The total.
int total(vector<int> xs){
    int s = 0;
    for (int x : xs) s += x;
    return s;
}
int twice(int x){
    return 2 * x;
}
'''


@pytest.mark.parametrize(("instruction", "names"), [
    ("Add a function prod_signs(arr): You are given an array arr.", ["prod_signs"]),
    ("Add a function vector<int> sum_product(vector<int> numbers): For a given vector",
     ["sum_product"]),
    ("Add a function int fib(int n): Return n-th Fibonacci number.", ["fib"]),
    ("add a new method `area` to Shape", ["area"]),
    ("Add a class called Shape.", ["Shape"]),
    ("Add a function to parse the file.", []),
    ("Write a function that returns x.", []),
    ("Fix bugs in fib.", []),
])
def test_the_name_of_a_definition_asked_to_be_added(instruction: str, names: list[str]) -> None:
    assert added_definitions(instruction) == names
    assert set(names) <= introduced(instruction)  # a plain name ("fib") is introduced too


def test_an_added_function_goes_after_the_head_or_the_last_definition() -> None:
    instruction = "Add a function prod_signs(arr): the product of the signs."
    # The last import (not the module docstring's text, not the module constant after it: the
    # head ends before the first definition of several lines), and the class, the last
    # top-level definition (the main block is no definition).
    places = addition_places(PY, instruction, "python")
    lines = split_lines(PY)
    assert [lines[start - 1].strip() for start, _ in places] == ["LIMIT = 3", "class Stats:"]
    assert places[1] == (15, 17)
    # C++: the using line (an #include reads as a preprocessor comment), the last function.
    places = addition_places(CPP, "Add a function int fib(int n): Fibonacci.", "cpp")
    assert places == ((4, 4), (11, 13))


@pytest.mark.parametrize("instruction", [
    "Add a parameter max_calls to mean.",  # the new name goes into mean: mean is the place
    "Rename mean to compute_mean.",  # a rename's new name is no new unit
    "Fix bugs in mean.",  # nothing new
    "Add a function to parse the file.",  # no name to add
    "Fix bugs in closest_integer.",  # a name the file spells otherwise; nothing asked to add
])
def test_no_places_where_nothing_new_goes_outside_a_definition(instruction: str) -> None:
    assert addition_places(PY, instruction, "python") == ()


def test_a_document_without_definitions_has_no_places() -> None:
    instruction = "Add a function prod_signs(arr)."
    assert addition_places("Some prose.\n", instruction, None) == ()
    assert addition_places("def broken(:\n", instruction, "python") == ()
    assert added_names("def prod_signs(arr):\n    pass\n", instruction) == frozenset()


@given(st.integers(0, 4), st.integers(1, 5), st.booleans())
def test_places_are_the_last_import_and_the_last_function(imports: int, functions: int,
                                                          constant: bool) -> None:
    head = [f"import m{k}\n" for k in range(imports)] + (["X = 1\n"] if constant else [])
    body = [f"\n\ndef f{k}(x):\n    return x + {k}\n" for k in range(functions)]
    document = "".join(head) + "".join(body)
    places = addition_places(document, "Add a function `new_one`.", "python")
    lines = split_lines(document)
    last_def = len(lines) - 1
    expected = ([(len(head), len(head))] if head else []) + [(last_def, last_def + 1)]
    assert places == tuple(expected)
    # Every place is a real, searchable line range of the document.
    assert all(1 <= start <= end <= len(lines) and lines[start - 1].strip()
               for start, end in places)


def test_an_instruction_that_says_top_or_end_has_that_place_alone() -> None:
    top = "Add the constant `MAX_ITEMS = 3` at the top of the file, right after the imports."
    end = "Add a function `mode_of(values)` at the end of the module."
    assert addition_places(PY, top, "python") == ((8, 8),)
    assert addition_places(PY, end, "python") == ((15, 17),)
    # A file that opens with a definition has no head: nothing at the top to hold to.
    assert addition_places("def f():\n    return 1\n", top, "python") == ()


def test_the_outermost_definitions_are_the_top_level_ones() -> None:
    from copygram.language.definitions import definitions, outermost

    # LIMIT, mean and the class; the method inside the class is not one of them.
    assert outermost(definitions(PY, "python")) == [(8, 8), (11, 12), (15, 17)]
    assert outermost(definitions(CPP, "cpp")) == [(5, 10), (11, 13)]  # with the comment above
