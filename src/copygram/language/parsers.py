"""The parsers copygram reads code with: Python's :mod:`ast` and tree-sitter grammars.

One place that knows where each language's tree-sitter grammar lives, shared by the damage
check (:mod:`copygram.language.damage`) and the units of head blocks
(:mod:`copygram.language.units`). A grammar that is not installed is ``None``, never an error:
the callers fall back to what they can read without it. Cost: building a parser ~1 ms, once per
language and process; a parse ~1 ms per few hundred lines.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

# Where each language's tree-sitter grammar lives: (module, function returning the language).
GRAMMARS: dict[str, tuple[str, str]] = {
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "java": ("tree_sitter_java", "language"),
    "go": ("tree_sitter_go", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "rust": ("tree_sitter_rust", "language"),
}
LANGUAGES = ("python", *GRAMMARS)
"""The languages copygram parses (Python through :mod:`ast`, the others through tree-sitter)."""


@functools.cache
def parser(language: str) -> Any:
    """A tree-sitter parser of ``language`` (a key of :data:`GRAMMARS`), or ``None`` where its
    grammar is not installed."""
    module_name, function = GRAMMARS[language]
    try:
        import tree_sitter

        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return tree_sitter.Parser(tree_sitter.Language(getattr(module, function)()))


def tree(text: str, language: str) -> Any:
    """``text``'s tree-sitter tree in ``language``, or ``None`` where the grammar is missing."""
    found = parser(language)
    if found is None:
        return None
    # A parser reused for thousands of parses, some of text it reads with errors, was seen to
    # hang (tree-sitter 0.26, the Rust grammar on "} else {\na\na\n" after a few thousand
    # others): each parse starts from a reset parser.
    found.reset()
    return found.parse(text.encode("utf-8"))


__all__ = ["GRAMMARS", "LANGUAGES", "parser", "tree"]
