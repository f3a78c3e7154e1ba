"""A rename's calls written in a file's documentation: doctests, examples in comments.

"Rename the function strlen to compute_strlen and update every call of it": a program held to
the definition and its uses (:func:`~copygram.language.targets.rename_scope`) renames the code,
and its blocks may not touch a comment above a function (a mention there is no use). On the dev
split's 12 medium rename rows the default model's held programs renamed every use in code and
left the old name in 11 files' documentation: a Python docstring's doctests (``>>>
strlen('')``, which ``doctest`` runs: a ``NameError`` now), a JavaScript or C++ comment's
examples (``isSorted([5]) ➞ true``). An editor's rename refactoring renames those as well, and
so does the rows' reference edit. :func:`rename_documented_calls` renames, in the documentation
alone, each mention of an old name written as a call (the name, then ``(``): never code (the
model's), never a string literal of code, never a word of prose ("returns the unique
elements" keeps ``unique``).

Documentation here: Python comments and docstrings (the first statement of a module, class or
function, a string); in a language with a tree-sitter grammar, its comment nodes. Where the
text does not parse, nothing is renamed.

Cost: one parse of the text (ast and tokenize, or tree-sitter) and a scan of its documentation:
milliseconds for a few thousand lines.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence

from copygram.language import parsers
from copygram.language.definitions import is_docstring
from copygram.language.lines import split_lines


def rename_documented_calls(text: str, pairs: Sequence[tuple[str, str]],
                            language: str | None) -> tuple[str, int]:
    """``text`` with each mention of an old name of ``pairs`` (old, new) written as a call
    (``old(``, white space allowed before the parenthesis) in its documentation (module doc)
    renamed to the new name, and how many were renamed."""
    if not pairs:
        return text, 0
    data = text.encode("utf-8")
    spans = _documentation(text, data, language)
    if not spans:
        return text, 0
    names = {old.encode(): new.encode() for old, new in pairs}
    call = re.compile(rb"(?<![\w$])(" + b"|".join(re.escape(old) for old in names)
                      + rb")(?=[ \t]*\()")
    pieces: list[bytes] = []
    done = renamed = 0
    for start, end in spans:
        part, count = call.subn(lambda match: names[match.group(1)], data[start:end])
        if count:
            pieces += [data[done:start], part]
            done, renamed = end, renamed + count
    if not renamed:
        return text, 0
    return b"".join([*pieces, data[done:]]).decode("utf-8"), renamed


def _documentation(text: str, data: bytes, language: str | None) -> list[tuple[int, int]]:
    """The byte ranges of ``text``'s documentation (module doc), sorted and disjoint."""
    if language == "python":
        return _python_documentation(text)
    if language is None or language not in parsers.GRAMMARS:
        return []
    tree = parsers.tree(text, language)
    if tree is None or tree.root_node.has_error:
        return []
    spans: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if "comment" in node.type:  # comment, line_comment, block_comment, doc_comment
            spans.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    return sorted(spans)


def _python_documentation(text: str) -> list[tuple[int, int]]:
    try:
        module = ast.parse(text)
        # Lines end as split_lines and ast read them: at "\n", "\r\n" or a lone "\r".
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline="").readline))
    except (SyntaxError, ValueError, tokenize.TokenError):
        return []
    lines = split_lines(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))

    def at(row: int, column: int) -> int:  # tokenize's columns count characters
        return offsets[row - 1] + len(lines[row - 1][:column].encode("utf-8"))

    spans = [(at(*token.start), at(*token.end)) for token in tokens
             if token.type == tokenize.COMMENT]
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and isinstance(body, list) and body and is_docstring(body[0])):
            doc = body[0].value
            end_line = doc.end_lineno or doc.lineno
            end_column = doc.end_col_offset or 0
            # ast's columns count UTF-8 bytes
            spans.append((offsets[doc.lineno - 1] + doc.col_offset,
                          offsets[end_line - 1] + end_column))
    return sorted(spans)


__all__ = ["rename_documented_calls"]
