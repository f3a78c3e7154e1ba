"""Names an edit left dangling: bound in the input, bound nowhere in the result, still used there
(the ``dangling`` damage of :mod:`copygram.language.damage`; its module doc says what counts in
each language). Cost: one parse of each text and a walk of its nodes."""

from __future__ import annotations

import ast
import builtins
from typing import Any

from copygram.language import parsers


def dangling_names(before: str, after: str, language: str) -> list[tuple[str, int]]:
    """``(name, line of its first use in after)`` for each dangling name, in line order; none
    where the language is not read so."""
    old, new = _names(before, language), _names(after, language)
    if old is None or new is None:
        return []
    return [(name, line) for name, line in sorted(new[1].items(), key=lambda item: item[1])
            if name in old[0] and name not in new[0] and name not in _BUILTINS]


_BUILTINS = frozenset(dir(builtins)) | {"console", "require", "module", "exports", "undefined"}
_JS_BINDERS = frozenset({"function_declaration", "generator_function_declaration",
                         "class_declaration", "variable_declarator", "import_specifier",
                         "namespace_import", "catch_clause"})


def _names(text: str, language: str) -> tuple[set[str], dict[str, int]] | None:
    """The names ``text`` binds anywhere, and those it uses with the line of their first use;
    ``None`` where this is not read (a language without it, a Python star import)."""
    bound: set[str] = set()
    used: dict[str, int] = {}
    if language == "python":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    used.setdefault(node.id, node.lineno)
                else:
                    bound.add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                if any(alias.name == "*" for alias in node.names):
                    return None
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                bound.update(node.names)
        return bound, used
    if language in _CALLED_ONLY:
        return _functions_and_calls(text, language)
    if language not in ("javascript", "typescript"):
        return None
    tree = parsers.tree(text, language)
    if tree is None:
        return None
    source = text.encode("utf-8")
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "identifier":
            name = source[node.start_byte:node.end_byte].decode("utf-8", "replace")
            parent = node.parent
            if parent is not None and (parent.type in _JS_BINDERS
                                       or "parameter" in parent.type):
                bound.add(name)  # a declaration's name, a parameter, an import
            else:
                used[name] = min(used.get(name, 1 << 30), node.start_point[0] + 1)
    return bound, used


_CALLED_ONLY = frozenset({"c", "cpp", "java"})
"""Languages where ``dangling`` reads functions only: names a file defines or declares as
functions (methods), and the plain calls of them (``f(x)``, Java's ``this.f(x)``; never
``obj.f(x)``, which may be another class's method). A C++ or Java call of a function that is no
longer declared does not compile, so a hit is certain unless a header or a base class declares
the name too; the rename test of issue 40 is the case it exists for."""


_C_LIBRARY = frozenset(["abs", "accumulate", "all_of", "any_of", "binary_search", "ceil", "copy", "count", "count_if", "exp", "fabs", "fill", "find", "find_if", "floor", "gcd", "getline", "iota", "isalpha", "isdigit", "islower", "isupper", "lcm", "log", "log10", "lower_bound", "max", "max_element", "memcpy", "memset", "min", "min_element", "next_permutation", "pow", "printf", "puts", "reverse", "round", "scanf", "sort", "sqrt", "stable_sort", "stoi", "stol", "stoll", "strcmp", "strlen", "swap", "to_string", "tolower", "toupper", "unique", "upper_bound"])
"""C and C++ library functions a file may define itself and then drop for the library's own
(a hand-written ``swap`` replaced by ``std::swap`` under ``using namespace std``): a call of one
is no dangling name."""


def _functions_and_calls(text: str, language: str) -> tuple[set[str], dict[str, int]] | None:
    tree = parsers.tree(text, language)
    if tree is None:
        return None
    source = text.encode("utf-8")

    def name_of(node: Any) -> str:
        return source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    bound: set[str] = set()
    used: dict[str, int] = {}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type in ("method_declaration", "constructor_declaration", "function_declarator"):
            name = node.child_by_field_name("name" if language == "java" else "declarator")
            if name is not None and name.type in ("identifier", "field_identifier"):
                bound.add(name_of(name))
        elif node.type in ("method_invocation", "call_expression"):
            callee = node.child_by_field_name("name" if language == "java" else "function")
            target = node.child_by_field_name("object") if language == "java" else None
            if (callee is not None and callee.type == "identifier"
                    and (target is None or target.type == "this")):
                name = name_of(callee)
                if language == "java" or name not in _C_LIBRARY:
                    used[name] = min(used.get(name, 1 << 30), node.start_point[0] + 1)
    return bound, used
