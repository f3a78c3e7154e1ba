"""The parsers copygram reads code with: Python's :mod:`ast` and tree-sitter grammars.

One place that knows where each language's tree-sitter grammar lives, shared by the damage
check (:mod:`copygram.language.damage`) and the units of head blocks
(:mod:`copygram.language.units`). A grammar that is not installed is ``None``, never an error:
the callers fall back to what they can read without it, and so they do where a parse runs past
its budget (:func:`tree`). Cost: building a parser ~1 ms, once per language and process; a parse
~1 ms per few hundred lines.
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
    grammar is not installed or it has none here (a data format, prose)."""
    if language not in GRAMMARS:
        return None
    module_name, function = GRAMMARS[language]
    try:
        import tree_sitter

        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return tree_sitter.Parser(tree_sitter.Language(getattr(module, function)()))


PARSE_BUDGET_BASE = 1024
PARSE_BUDGET_PER_BYTE = 1 / 8
"""A parse's budget, in tree-sitter's progress checks (one per 100 parser operations, so the
budget is a count, the same on every host): ``BASE + PER_BYTE * bytes``. Every document of the
dev split, read with every grammar (the wrong ones too), used under a tenth of it; the TypeScript
grammar's error recovery on some short brace texts never ends (tree-sitter 0.26 and
tree-sitter-typescript 0.23: ``"} else {\nx = [\n    y = 1\n    ) -> int:\n..."`` grows without
bound), and these stop at the budget instead of hanging the edit."""


def tree(text: str, language: str) -> Any:
    """``text``'s tree-sitter tree in ``language``; ``None`` where the grammar is missing or the
    parse ran past its budget (:data:`PARSE_BUDGET_BASE`), which callers read as "no tree" (the
    layout rules, the bracket check). Cost: two parses (below), ~2 ms per few hundred lines; a
    runaway parse ~0.25 ms per progress check, ~0.3 s for a short text."""
    found = parser(language)
    if found is None:
        return None
    data = memoryview(text.encode("utf-8"))
    budget = PARSE_BUDGET_BASE + int(len(data) * PARSE_BUDGET_PER_BYTE)
    checks = 0

    def progress(offset: int, has_error: bool) -> bool:
        nonlocal checks
        checks += 1
        return checks > budget  # True cancels the parse

    # A cancelled parse resumes on the next call unless the parser is reset (tree-sitter's
    # contract): every parse starts from a reset parser.
    found.reset()
    try:
        bounded = found.parse(lambda offset, point: data[offset:], progress_callback=progress)
    except ValueError:  # "Parsing failed": cancelled at the budget
        found.reset()  # frees the stacks the runaway parse grew
        return None
    # A tree read through a callback crashes the process on ``node.text`` (py-tree-sitter 0.26
    # keeps a pointer to the callback's last buffer): the text is parsed again from its bytes,
    # from a reset parser, which repeats the bounded parse operation for operation (a parse is
    # deterministic), so it ends too. Twice a parse's cost (~10 ms a 1,500-line file); reusing
    # the bounded tree as the old one would save a little but re-runs error recovery where it
    # cannot reuse, with no bound.
    del bounded
    found.reset()
    return found.parse(bytes(data))


__all__ = ["GRAMMARS", "LANGUAGES", "PARSE_BUDGET_BASE", "PARSE_BUDGET_PER_BYTE", "parser", "tree"]
