"""Units: the function, class, statement or paragraph that a line opens, found by a parser
where the document parses and by layout where it does not.

Search/replace blocks of ``search_scope = "head"`` name a unit by its first line and replace all
of it (:mod:`copygram.language.search_replace`). So that a model never has to write the lines it
keeps in order to say where a change ends, the end is found here.

Where the whole document parses (Python through :mod:`ast` and defining a function or class;
otherwise, for a text with braces, the first tree-sitter grammar of
:data:`~copygram.language.parsers.LANGUAGES` that reads it without an error), a line that opens a
definition (a function, method or class, at any depth) or a top-level statement, at the
line's indentation, ends where the parser says it does: a
decorator with arguments over several lines, or a string whose lines start at the margin, no
longer cut a unit short. Comment lines indented deeper than the head after the unit's last
statement stay in it, as the layout reads them. Everywhere else, and for every line of a document that does not
parse (the very code a bug fix edits may not), the layout rules below decide, the same way for
every language:

* a unit is its first line (the head) and the lines after it that are indented deeper, with the
  blank lines among them (never those after its last line);
* a line at the head's indentation that opens with a closing bracket (``}``, ``)``, ``]``) ends
  the unit and belongs to it (a C-like body's ``}``, a signature's ``) -> int:``), unless it
  opens the next part of the same statement (ends with ``{``, ``(``, ``[`` or ``:``, as ``} else
  {`` does), where the unit goes on;
* so do Python's ``else``/``elif``/``except``/``finally`` lines at the head's indentation, and the
  lines after a decorator (``@name``) head, up to and with the function it decorates;
* a blank head is a unit of its own line, and so is a line that nothing after it continues (a
  top-level statement, a paragraph written as one line).

A unit written again without its closing line (the body's ``}`` left out, as a model may do)
keeps the document's closing line (:func:`closing_line`, :func:`leaves_open`): read otherwise,
the edit would drop the brace. A replacement that stops where the body would begin (its last
line at the head's indentation opens one: ``const f = (a) => {``, ``def f(a):``) rewrote the
unit's header, not the unit: it replaces the head and the lines at its indentation before the
body (:func:`header_end`, :func:`opens_body`), and the body stays. Read otherwise, a model that
changed a signature only would delete the function's body.

What this cannot see: a multi-line string whose lines start at the head's indentation or
less ends the unit there; a paragraph wrapped over several lines at one indentation is one
unit per line.

Property (tested): for two equal lines ``k < j``, ``unit_end(lines, j) >= unit_end(lines, k)``, so
reading a head at its first occurrence after a cursor leaves every later block the most room
(the parser's ends are raised where needed to keep it). Cost: the layout rules are linear in the
unit's lines; a document that parses is parsed once (~1 ms per 100 lines) and its ends kept for
the few documents last asked about, each later call a lookup after hashing the line tuple
(~10 ns a line).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from typing import Any

from copygram.language import parsers

_CLOSERS = ")]}"
_GOES_ON = ("{", "(", "[", ":")
_CLAUSES = ("else", "elif", "except", "finally")


def indentation(text: str) -> int:
    """The width of ``text``'s leading spaces and tabs (a tab counts one)."""
    return len(text) - len(text.lstrip(" \t"))


def _continues(text: str) -> bool:
    """Whether a line at the head's indentation belongs to the head's unit (module doc)."""
    stripped = text.strip()
    if stripped[0] in _CLOSERS:
        return True
    word = stripped.split(maxsplit=1)[0].rstrip(":")
    return word in _CLAUSES and stripped.endswith(":")


def unit_end(lines: Sequence[str], start: int) -> int:
    """The last line (1-based) of the unit whose head is line ``start`` of ``lines`` (lines with
    or without endings); ``start`` itself where nothing continues it (module doc)."""
    if not 1 <= start <= len(lines):
        raise IndexError(f"line {start} is not a line of a {len(lines)}-line document")
    parsed = _parsed_ends(tuple(lines))
    return parsed[start - 1] if parsed is not None else layout_end(lines, start)


def layout_end(lines: Sequence[str], start: int) -> int:
    """:func:`unit_end` by the layout rules alone (module doc), whether or not the document
    parses."""
    head = lines[start - 1].rstrip("\r\n")
    if not head.strip():
        return start
    depth = indentation(head)
    decorating = head.lstrip().startswith("@")
    end = start
    for number in range(start + 1, len(lines) + 1):
        text = lines[number - 1].rstrip("\r\n")
        if not text.strip():
            continue  # a blank line belongs to the unit only where a later line does
        indent = indentation(text)
        if indent > depth:
            end = number
            continue
        if indent < depth:
            break
        if decorating:  # the decorated definition (or the next decorator) is part of it
            end = number
            decorating = text.lstrip().startswith("@")
            continue
        if not _continues(text):
            break
        end = number
        if not text.rstrip().endswith(_GOES_ON):
            break
    return end


@functools.lru_cache(maxsize=8)
def _parsed_ends(lines: tuple[str, ...]) -> tuple[int, ...] | None:
    """Every line's unit end where the document parses (module doc), else ``None``."""
    joiner = "" if any(line.endswith(("\n", "\r")) for line in lines) else "\n"
    opened = _statement_ends(joiner.join(lines), lines)
    if opened is None:
        return None
    ends: list[int] = []
    highest: dict[str, int] = {}  # per line text: the largest end so far (the property)
    for number, line in enumerate(lines, start=1):
        end = layout_end(lines, number)
        parsed = opened.get(number)
        if parsed is not None and parsed != end:
            end = _comments_after(lines, number, max(parsed, number))
        key = line.rstrip("\r\n")
        end = highest[key] = max(end, highest.get(key, 0))
        ends.append(end)
    return tuple(ends)


# What a parser's unit is: a definition at any depth, or any statement at the top level.
_PY_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TS_DEFINITIONS = frozenset({
    "function_declaration", "generator_function_declaration", "class_declaration",
    "method_definition", "interface_declaration", "abstract_class_declaration",
    "enum_declaration", "method_declaration", "constructor_declaration", "record_declaration",
    "type_declaration", "function_definition", "struct_specifier", "class_specifier",
    "namespace_definition", "function_item", "struct_item", "enum_item", "trait_item",
    "impl_item", "mod_item"})


# Function-like nodes: their lines after the first are a body (tree-sitter grammars).
_TS_FUNCTIONS = frozenset({
    "function_declaration", "generator_function_declaration", "method_definition",
    "arrow_function", "function_expression", "function", "method_declaration",
    "constructor_declaration", "function_definition", "function_item", "func_literal"})


def body_lines(lines: Sequence[str]) -> frozenset[int]:
    """The lines (1-based) inside a function's or method's body, past its first line, that open
    no definition of their own, where the document parses (Python's :mod:`ast`, else the first
    tree-sitter grammar that reads it); empty where it does not. Head blocks that may not head
    with such a line (route ``body_heads = false``) name a function by its first line and write
    it whole. Cached for the last few documents; one parse."""
    return _body_lines(tuple(lines))


@functools.lru_cache(maxsize=8)
def _body_lines(lines: tuple[str, ...]) -> frozenset[int]:
    joiner = "" if any(line.endswith(("\n", "\r")) for line in lines) else "\n"
    text = joiner.join(lines)
    spans: list[tuple[int, int]] = []
    starts: set[int] = set()
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        module = None
    if module is not None and any(isinstance(node, _PY_DEFINITIONS) for node in ast.walk(module)):
        for node in ast.walk(module):
            if isinstance(node, _PY_DEFINITIONS):
                starts.update([node.lineno, *(d.lineno for d in node.decorator_list)])
                if not isinstance(node, ast.ClassDef):
                    spans.append((node.lineno, node.end_lineno or node.lineno))
    else:
        root = _tree_root(text)
        stack = [root] if root is not None else []
        while stack:
            node = stack.pop()
            stack.extend(node.named_children)
            row, last = node.start_point[0] + 1, node.end_point[0] + 1
            if node.type in _TS_DEFINITIONS or node.type in _TS_FUNCTIONS:
                starts.add(row)
            if node.type in _TS_FUNCTIONS:
                spans.append((row, last))
    inside = {number for first, last in spans for number in range(first + 1, last + 1)}
    return frozenset(inside - starts)


def _comments_after(lines: Sequence[str], start: int, end: int) -> int:
    """``end``, or further on over the comment lines indented deeper than line ``start`` that
    follow it (blank lines among them), as the layout reads them."""
    depth, last = indentation(lines[start - 1]), end
    for number in range(end + 1, len(lines) + 1):
        text = lines[number - 1]
        if not text.strip():
            continue
        if indentation(text) <= depth or not text.strip().startswith(("#", "//", "/*", "*")):
            break
        last = number
    return last


def _statement_ends(text: str, lines: Sequence[str]) -> dict[int, int] | None:
    """Line -> last line of the outermost statement or definition that starts at the line's
    indentation, where ``text`` parses (module doc); ``None`` where it does not."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        module = None
    if module is not None and any(isinstance(node, _PY_DEFINITIONS) for node in ast.walk(module)):
        ends: dict[int, int] = {}
        top = set(map(id, module.body))
        for node in ast.walk(module):  # breadth first: outer statements first
            if not isinstance(node, ast.stmt) or node.end_lineno is None or not (
                    id(node) in top or isinstance(node, _PY_DEFINITIONS)):
                continue
            first = node.lineno
            if node.col_offset == indentation(lines[first - 1]):
                ends.setdefault(first, node.end_lineno)
            for decorator in getattr(node, "decorator_list", ()):
                ends.setdefault(decorator.lineno, node.end_lineno)
        return ends
    root = _tree_root(text)
    return None if root is None else _node_ends(root, lines)


def _tree_root(text: str) -> Any:
    """The root of the first tree-sitter grammar's error-free tree of ``text`` (a text with
    braces), or ``None``."""
    if "{" not in text:
        return None
    for language in parsers.GRAMMARS:
        tree = parsers.tree(text, language)
        if tree is not None and not tree.root_node.has_error:
            return tree.root_node
    return None


def _node_ends(root: Any, lines: Sequence[str]) -> dict[int, int]:
    """:func:`_statement_ends` of a tree-sitter tree: its top-level nodes (but comments) and
    its definitions (functions, methods, classes...: :data:`_TS_DEFINITIONS`)."""
    ends: dict[int, int] = {}
    stack = [(node, True) for node in reversed(root.named_children)]
    while stack:  # depth first, outer nodes before the nodes inside them
        node, top = stack.pop()
        row, column = node.start_point
        kind = node.type
        if ((top and "comment" not in kind) or kind in _TS_DEFINITIONS) \
                and column == indentation(lines[row]):
            # A node whose text takes its line's ending in (a C #include) ends a line earlier.
            last, at = node.end_point
            ends.setdefault(row + 1, max(row + 1, last + (at > 0)))
        stack.extend((child, False) for child in reversed(node.named_children))
    return ends


def closing_line(lines: Sequence[str], start: int, end: int) -> bool:
    """Whether line ``end`` is the closing line of the unit ``start..end`` (a ``}`` or ``};`` at
    the head's indentation that ends it, as a C-like body's does)."""
    if end <= start:
        return False
    head, last = lines[start - 1].rstrip("\r\n"), lines[end - 1].rstrip("\r\n")
    stripped = last.strip()
    return (indentation(last) == indentation(head) and stripped[:1] in _CLOSERS
            and not stripped.endswith(_GOES_ON))


def header_end(lines: Sequence[str], start: int) -> int:
    """The last line of the header of the unit whose head is line ``start``: the head and the
    lines after it at its indentation (a decorated definition's) before the first line indented
    deeper (the body); the unit's last line where it has no body."""
    depth = indentation(lines[start - 1].rstrip("\r\n"))
    end = start
    for number in range(start + 1, unit_end(lines, start) + 1):
        text = lines[number - 1].rstrip("\r\n")
        if text.strip() and indentation(text) > depth:
            break
        end = number
    return end


def _last_written(text: str) -> str | None:
    """The last non-blank line of ``text``, without its ending and trailing blanks."""
    written = [line.rstrip() for line in text.splitlines() if line.strip()]
    return written[-1] if written else None


def opens_body(text: str, head: str) -> bool:
    """Whether ``text`` (a unit written again) stops where the body would begin: its last
    non-blank line is at ``head``'s indentation or less and opens a block (ends with ``{``,
    ``(``, ``[`` or ``:``)."""
    last = _last_written(text)
    return (last is not None and indentation(last) <= indentation(head.rstrip("\r\n"))
            and last.endswith(_GOES_ON))


def leaves_open(text: str, head: str) -> bool:
    """Whether ``text`` (a unit written again) ends inside its body: its last non-blank line is
    indented deeper than ``head``, so the unit's closing line is still to come."""
    last = _last_written(text)
    return last is not None and indentation(last) > indentation(head.rstrip("\r\n"))


_LABELS = ("case", "default", "public", "private", "protected")


def closes_with_brackets(lines: Sequence[str]) -> bool:
    """Whether the document's bodies close with a bracket line (C, JavaScript, Java, Go...)
    rather than by indentation alone (Python, YAML, prose): a line that opens a body with ``{``
    is closed by a ``}`` line at its indentation, and no fewer lines open a body with ``{`` than
    with ``:`` (a ``:`` line followed by a deeper one, not a ``case``/``default`` or access
    label; so a Python file with a dict literal stays Python, and a C file with a ``switch``
    stays braced). Cost: one pass over the lines."""
    written = [(line.strip(), indentation(line)) for line in lines if line.strip()]
    opened: set[int] = set()
    closed = False
    braces = colons = 0
    for k, (text, indent) in enumerate(written):
        closed = closed or (text[0] == "}" and indent in opened)
        if text.endswith("{"):
            opened.add(indent)
            braces += 1
        elif (text.endswith(":") and k + 1 < len(written) and written[k + 1][1] > indent
              and text.split(maxsplit=1)[0].rstrip(":") not in _LABELS):
            colons += 1
    return closed and braces >= colons


__all__ = ["closes_with_brackets", "closing_line", "header_end", "indentation", "layout_end",
           "leaves_open", "opens_body", "unit_end"]
