"""Documentation an edit dropped, and put back where its definition still is.

Asked to add a parameter to a JavaScript function, the default model's whole-file rewrite left
out the 16-line comment above that function and kept the function (the dev split's edit-kinds
rows): the file parsed, every definition was still there, and it was written as a success with
the function's documentation gone. A rewrite of a file is never asked to delete the comments
of the code it keeps unless the instruction says so.

* :func:`lost_documentation`: the documentation blocks of a file (a run of comment lines or a
  block comment right above a definition, a Python docstring) of at least two lines that an
  edit's result dropped while it kept their definition and put nothing in their place (no
  comment above it, no docstring in it), where the instruction says nothing of documentation
  ("comment", "docstring", ...) and has no word of restructuring (those may take what they do
  not name: :data:`~copygram.language.lost.RESTRUCTURE`).
* :func:`put_back_documentation`: the result with those blocks written back as the file had
  them, above or at the top of their definition.

A block counts as dropped where none of its lines of 12 characters or more (their comment
markers and indentation aside) is left anywhere in the result: a reworded or shortened comment
is an edit of it, not a loss. On the 5,618 reference edits of code of the dev split and the
edit-kinds rows it fires on none.

Cost: a parse of each text (milliseconds).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from copygram.language import parsers
from copygram.language.definitions import definitions, is_docstring
from copygram.language.lines import inserted, leading_space, split_lines
from copygram.language.lost import RESTRUCTURE
from copygram.language.types import PROSE

# Instructions that may change documentation: those edits are the instruction's to judge.
_DOCUMENTATION = re.compile(r"\b(?:comment|docstring|doc|docs|document|jsdoc|javadoc|"
                            r"license|licence|header)", re.IGNORECASE)
_MARKERS = re.compile(r"^(?:/\*+|\*+/|\*+|\"\"\"|'''|#+|//+!?|///?)\s*|\s*(?:\*+/|\"\"\"|''')$")
_COMMENT_START = ("#", "//", "/*", "*")
SIGNIFICANT = 12  # characters a line needs to tell its block apart from others
_LINES = 2  # significant lines a block needs to count


@dataclass(frozen=True)
class LostDoc:
    """One documentation block an edit dropped: its definition's ``name`` and which of that
    name's definitions it documents (``occurrence``, in the file's order), its lines in the
    document (``start``-``end``, 1-based), and whether it is a Python ``docstring`` (else a
    comment above the definition)."""

    name: str
    occurrence: int
    start: int
    end: int
    docstring: bool


def lost_documentation(before: str, after: str, instruction: str,
                       language: str | None) -> tuple[LostDoc, ...]:
    """The documentation blocks of ``before`` that ``after`` dropped (module doc), in the
    document's order; ``()`` for prose, a language without a parser here, no instruction, or an
    instruction about documentation or restructuring."""
    if (language is None or language == PROSE or not instruction.strip()
            or _DOCUMENTATION.search(instruction) or RESTRUCTURE.search(instruction)):
        return ()
    lines = split_lines(before)
    kept = {_significant(line) for line in split_lines(after)}
    lost = []
    for doc in _documented(before, language):
        texts = [t for t in (_significant(line) for line in lines[doc.start - 1:doc.end]) if t]
        if len(texts) < _LINES or any(t in kept for t in texts):
            continue
        if _place(after, doc, language) is not None:
            lost.append(doc)
    return tuple(lost)


def put_back_documentation(before: str, after: str, lost: Sequence[LostDoc],
                           language: str) -> str | None:
    """``after`` with each of ``lost`` (from :func:`lost_documentation`) written back as
    ``before`` has it: a comment right above its definition, a docstring as the first line of
    its body (indented as that body is); ``None`` where one has no place in ``after``."""
    lines = split_lines(before)
    text = after
    for doc in lost:
        at = _place(text, doc, language)
        if at is None:
            return None
        line, indent = at
        piece = list(lines[doc.start - 1:doc.end])
        if doc.docstring:
            piece = _reindented(piece, indent)
        text = inserted(split_lines(text), line - 1, piece)
    return text


def _significant(line: str) -> str:
    """``line`` without its indentation and comment markers, where it is long enough to tell
    one comment from another (else ``""``)."""
    text = _MARKERS.sub("", line.strip()).strip()
    return text if len(text) >= SIGNIFICANT else ""


def _documented(text: str, language: str) -> Iterator[LostDoc]:
    """Every documentation block of ``text`` with the definition it documents."""
    defined = definitions(text, language)
    lines = split_lines(text)
    if language == "python":
        yield from _docstrings(text)
    for start, end in _comment_blocks(text, language):
        owner = _owner(defined, lines, start, end)
        if owner is not None:
            yield LostDoc(owner[0], owner[1], start, end, docstring=False)


def _owner(defined: Mapping[str, tuple[tuple[int, int], ...]], lines: Sequence[str],
           start: int, end: int) -> tuple[str, int] | None:
    """The definition whose code begins on the line right below the comment ``start``-``end``
    (its span, as :func:`definitions` gives it, begins inside the comment or right below it),
    as (name, occurrence)."""
    if end >= len(lines) or not lines[end].strip():
        return None
    for name, spans in defined.items():
        for k, (first, last) in enumerate(spans):
            if start <= first <= end + 1 and last > end:
                return name, k
    return None


def _docstrings(text: str) -> Iterator[LostDoc]:
    """Python functions' and classes' docstrings, with their definitions."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    seen: dict[str, int] = {}
    for node in _defs(module):
        k = seen.get(node.name, 0)
        seen[node.name] = k + 1
        first = node.body[0]
        if is_docstring(first):
            yield LostDoc(node.name, k, first.lineno, first.end_lineno or first.lineno,
                          docstring=True)


def _defs(module: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    return [node for node in ast.walk(module)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def _comment_blocks(text: str, language: str) -> list[tuple[int, int]]:
    """The comment blocks of ``text``: each block comment, and each run of line comments on
    consecutive lines, as (first line, last line)."""
    spans: list[tuple[int, int]] = []
    if language == "python":
        try:
            found = [token.start[0] for token in tokenize.generate_tokens(io.StringIO(text).readline)
                     if token.type == tokenize.COMMENT and token.line.lstrip().startswith("#")]
        except (tokenize.TokenError, SyntaxError):
            return []
        comments = [(line, line) for line in found]
    else:
        tree = parsers.tree(text, language)
        if tree is None or tree.root_node.has_error:
            return []
        comments = []
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if "comment" in node.type:
                comments.append((node.start_point[0] + 1, node.end_point[0] + 1))
            else:
                stack.extend(node.children)
        comments.sort()
    lines = split_lines(text)
    for first, last in comments:
        if not lines[first - 1].lstrip().startswith(_COMMENT_START):
            continue  # a comment at the end of a line of code documents that line
        if spans and first == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], last)
        else:
            spans.append((first, last))
    return spans


def _place(text: str, doc: LostDoc, language: str) -> tuple[int, str] | None:
    """Where ``doc`` goes back in ``text`` (line, the indentation of that line): the first line
    of its definition there, or of that definition's body for a docstring; ``None`` where
    ``text`` does not hold that definition once as often as it did, or documents it already."""
    if doc.docstring:
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        nodes = [node for node in _defs(module) if node.name == doc.name]
        if doc.occurrence >= len(nodes):
            return None
        node = nodes[doc.occurrence]
        first = node.body[0]
        if is_docstring(first) or first.lineno == node.lineno:
            return None
        line = split_lines(text)[first.lineno - 1]
        return first.lineno, leading_space(line)
    spans = definitions(text, language).get(doc.name, ())
    if doc.occurrence >= len(spans):
        return None
    start = spans[doc.occurrence][0]
    line = split_lines(text)[start - 1]
    if line.lstrip().startswith(_COMMENT_START):
        return None  # a comment above it: the model's own
    return start, leading_space(line)


def _reindented(piece: list[str], indent: str) -> list[str]:
    """A docstring's lines moved from their own indentation to ``indent`` (its body's)."""
    old = leading_space(piece[0])
    if old == indent:
        return piece
    return [indent + line[len(old):] if line.startswith(old) else line for line in piece]


__all__ = ["LostDoc", "lost_documentation", "put_back_documentation"]
