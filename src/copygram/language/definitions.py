"""The definitions a file holds, and its code without its documentation, read by a parser:
Python through :mod:`ast`; JavaScript, TypeScript, Java, C, C++, Go and Rust through tree-sitter
(:mod:`copygram.language.parsers`, where its grammar is installed). Functions, methods, classes
and other types, and variables at the top level of a file (or of a class); any other language,
or a file that does not parse, has none. :mod:`copygram.language.targets` reads them to tell
whether an edit reached what its instruction names. Cost: one parse (milliseconds)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from copygram.language import parsers
from copygram.language.lines import split_lines

_JS_DEFINITIONS = frozenset({"function_declaration", "generator_function_declaration",
                             "class_declaration", "method_definition", "variable_declarator",
                             "interface_declaration", "abstract_class_declaration"})
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_COMMENT = ("#", "//", "/*", "*", "'''", '"""')


def code_only(text: str, language: str | None) -> str | tuple[tuple[str, bytes], ...] | None:
    """``text``'s code without its documentation: Python's syntax tree less its docstrings;
    another language's tree-sitter leaves less comments (Javadoc, ``//``, ``/* */``); ``None``
    where it does not parse or the language has no grammar here."""
    if language == "python":
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        for node in ast.walk(module):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and is_docstring(body[0]):
                del body[0]
        return ast.dump(module)
    if language not in ("javascript", "typescript") and language not in _OTHER_DEFINITIONS:
        return None
    tree = parsers.tree(text, language)
    if tree is None or tree.root_node.has_error:
        return None
    leaves: list[tuple[str, bytes]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if "comment" in node.type:  # comment, line_comment, block_comment, doc_comment
            continue
        if node.child_count == 0:
            leaves.append((node.type, node.text or b""))
        stack.extend(reversed(node.children))
    return tuple(leaves)


def is_docstring(statement: ast.AST) -> bool:
    """Whether ``statement`` (the first of a module's, class's or function's body) is its
    docstring: an expression that is a string constant."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


@functools.lru_cache(maxsize=4)
def definitions(text: str, language: str | None) -> Mapping[str, tuple[tuple[int, int], ...]]:
    """Name -> the line ranges (1-based) of its definitions in ``text``, each with the comment
    lines right above it (module doc). Kept for the last few documents: mode "auto" reads them
    to choose a mode and the check reads them again when the program is done (one parse per
    document, not two)."""
    lines = split_lines(text)
    found: dict[str, list[tuple[int, int]]] = {}
    for name, start, end in _defined(text, language):
        while start > 1 and lines[start - 2].strip().startswith(_COMMENT):
            start -= 1
        found.setdefault(name, []).append((start, end))
    return MappingProxyType({name: tuple(ranges) for name, ranges in found.items()})


def _defined(text: str, language: str | None) -> Iterator[tuple[str, int, int]]:
    if language == "python":
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            return
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                yield node.name, first, node.end_lineno or node.lineno
        for statement in module.body:  # module-level variables
            targets = (statement.targets if isinstance(statement, ast.Assign)
                       else [statement.target] if isinstance(statement, ast.AnnAssign) else [])
            for target in targets:
                if isinstance(target, ast.Name):
                    yield target.id, statement.lineno, statement.end_lineno or statement.lineno
        return
    if language in _OTHER_DEFINITIONS:
        yield from _defined_elsewhere(text, language)
        return
    if language not in ("javascript", "typescript"):
        return
    tree = parsers.tree(text, language)
    if tree is None:
        return
    source = text.encode("utf-8")
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type not in _JS_DEFINITIONS:
            continue
        # A variable counts at the top level only (a loop's `let i` is nobody's target).
        if node.type == "variable_declarator" and (
                node.parent is None or node.parent.parent is None
                or node.parent.parent.type != "program"):
            continue
        name = node.child_by_field_name("name")
        if name is None or name.type not in ("identifier", "property_identifier",
                                              "type_identifier"):
            continue
        # `const f = ...`: the whole declaration, its keyword's line included.
        whole = node.parent if node.type == "variable_declarator" and node.parent else node
        yield (source[name.start_byte:name.end_byte].decode("utf-8"),
               whole.start_point[0] + 1, whole.end_point[0] + 1)


_OTHER_DEFINITIONS: dict[str, frozenset[str]] = {
    "java": frozenset({"method_declaration", "constructor_declaration", "class_declaration",
                       "interface_declaration", "enum_declaration", "record_declaration",
                       "field_declaration"}),
    "c": frozenset({"function_definition", "struct_specifier", "enum_specifier",
                    "declaration"}),
    "go": frozenset({"function_declaration", "method_declaration", "type_spec", "const_spec",
                     "var_spec"}),
    "rust": frozenset({"function_item", "struct_item", "enum_item", "trait_item", "const_item",
                       "static_item", "mod_item"}),
}
_OTHER_DEFINITIONS["cpp"] = _OTHER_DEFINITIONS["c"] | {"class_specifier", "namespace_definition"}
_NAMES = frozenset({"identifier", "field_identifier", "type_identifier", "namespace_identifier"})


def _declared_name(node: Any) -> Any:
    """The name node of a definition: its ``name`` field (Java, Go, Rust, a C++ class), or the
    innermost identifier of a C/C++ declarator (``int *f(...)``, ``Foo::bar(...)``, ``x = 1``),
    or of a Java field's first variable."""
    name = node.child_by_field_name("name")
    if name is not None:
        return name if name.type in _NAMES else None
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in _NAMES:
        declarator = (declarator.child_by_field_name("declarator")
                      or declarator.child_by_field_name("name"))
    return declarator


def _defined_elsewhere(text: str, language: str) -> Iterator[tuple[str, int, int]]:
    """Definitions through a tree-sitter grammar other than JavaScript's: functions, methods,
    types, and variables declared at the top level of a file or of a class (C's and C++'s
    ``declaration`` counts only at the top level: a local variable is nobody's target)."""
    tree = parsers.tree(text, language)
    if tree is None:
        return
    source = text.encode("utf-8")
    kinds = _OTHER_DEFINITIONS[language]
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type not in kinds or (node.type == "declaration" and (
                node.parent is None or node.parent.type != "translation_unit")):
            continue
        name = _declared_name(node)
        if name is not None:
            yield (source[name.start_byte:name.end_byte].decode("utf-8"),
                   node.start_point[0] + 1, node.end_point[0] + 1)


def outermost(regions: Mapping[str, tuple[tuple[int, int], ...]]) -> list[tuple[int, int]]:
    """The line ranges of ``regions`` (:func:`definitions`) that no other holds, sorted: the
    top-level definitions (a method lies inside its class). Quadratic in the definitions (a
    few hundred in a long file: milliseconds)."""
    spans = sorted({span for found in regions.values() for span in found})
    return [span for span in spans
            if not any(o != span and o[0] <= span[0] and span[1] <= o[1] for o in spans)]


def callers(lines: Sequence[str], names: Collection[str],
            regions: Mapping[str, tuple[tuple[int, int], ...]],
            outside: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Where ``lines`` use one of ``names`` (as a word) outside the ranges ``outside``: for each
    such line the innermost definition of ``regions`` around it (:func:`definitions`), or the line
    itself outside every one (module-level code), in document order, each once; a mention in a
    comment or a triple-quoted string (a doctest above a JavaScript function) is no use. Linear
    in the lines."""
    spans = [span for ranges in regions.values() for span in ranges]
    found: list[tuple[int, int]] = []
    for number in using(lines, names):
        if any(start <= number <= end for start, end in outside):
            continue
        around = [span for span in spans if span[0] <= number <= span[1]]
        span = min(around, key=lambda s: s[1] - s[0]) if around else (number, number)
        if span not in found:
            found.append(span)
    return found


def using(lines: Sequence[str], names: Collection[str]) -> list[int]:
    """The lines (1-based) whose code (:func:`code_lines`: comments and triple-quoted strings
    aside) holds one of ``names`` as a word. Linear in the lines."""
    wanted = set(names)
    return [number for number, line in enumerate(code_lines(lines), 1)
            if wanted & set(_WORD.findall(line))]


_BLOCK = re.compile(r"/\*|\*/|\"\"\"|'''|//|#")
_CLOSES = {"/*": "*/", '"""': '"""', "'''": "'''"}


def code_lines(lines: Sequence[str]) -> list[str]:
    """``lines`` with their comments and triple-quoted strings blanked (``/* */`` and triple
    quotes across lines, ``//`` and ``#`` to the line's end): a lexer's approximation that knows
    no other string, enough to tell a use of a name from its mention in documentation."""
    out: list[str] = []
    closer: str | None = None
    for line in lines:
        kept: list[str] = []
        at = 0
        for match in _BLOCK.finditer(line):
            token = match.group()
            if closer is not None:
                if token == closer:
                    closer, at = None, match.end()
            elif token in _CLOSES:
                kept.append(line[at:match.start()])
                closer = _CLOSES[token]
            elif token in ("//", "#"):
                kept.append(line[at:match.start()])
                at = len(line)
                break
        if closer is None:
            kept.append(line[at:])
        out.append("".join(kept))
    return out


__all__ = ["callers", "code_lines", "code_only", "definitions", "is_docstring", "outermost", "using"]
