"""Names an edit left dangling: bound in the input, bound nowhere in the result, still used there
(the ``dangling`` damage of :mod:`copygram.language.damage`; its module doc says what counts in
each language). Cost: one parse of each text and a walk of its nodes."""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Iterable, Iterator
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
        return (bound, used) if _read_python(ast.walk(ast.parse(text)), bound, used) else None
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


def _read_python(nodes: Iterable[ast.AST], bound: set[str], used: dict[str, int]) -> bool:
    """Adds the names ``nodes`` bind to ``bound`` and those they use, with the line of the first
    use, to ``used``; ``False`` at a star import (what it binds is not read)."""
    for node in nodes:
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
                return False
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
    return True


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


def dangling_parameters(before: str, after: str, language: str) -> list[tuple[str, str, int]]:
    """``(parameter, function, line of its first use in after)`` for each parameter an edit took
    out of a function's signature that the function's body still uses, declaring it nowhere
    else in the function or at the top of the file (a ``calls`` parameter removed and the line
    that used it kept: a NameError, a ReferenceError or a file that does not compile, which a
    file-wide name check misses where another function still binds the name). Functions are
    matched by name, where the name is defined once in both texts; Python through :mod:`ast`,
    JavaScript, TypeScript, C, C++ and Java through tree-sitter; none in another language."""
    old, new = _functions(before, language), _functions(after, language)
    if old is None or new is None:
        return []
    found = []
    for name, (params, _, _) in old.items():
        if name not in new:
            continue
        kept, uses, bound = new[name]
        for param in sorted(params - kept):
            if param in uses and param not in bound and param not in new[_TOP][2]:
                found.append((param, name, uses[param]))
    return sorted(found, key=lambda item: item[2])


_TOP = "\0top"
"""The key of :func:`_functions`' entry whose ``bound`` is the names bound outside every
function (a global the body may use)."""

_Function = tuple[set[str], dict[str, int], set[str]]
"""A function's parameters, the names its body uses (with the line of the first use) and those
its body binds (locals, a nested function's parameters)."""


def _functions(text: str, language: str) -> dict[str, _Function] | None:
    """Each function defined once in ``text``, by name (module doc of :func:`dangling_parameters`),
    and under :data:`_TOP` the names bound outside every function; ``None`` where not read."""
    if language == "python":
        return _python_functions(text)
    if language not in _TS_FUNCTIONS:
        return None
    tree = parsers.tree(text, language)
    return None if tree is None else _ts_functions(tree, text.encode("utf-8"), language)


def _python_functions(text: str) -> dict[str, _Function] | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    top: set[str] = set()
    for statement in tree.body:
        top.update(n.id for n in ast.walk(statement) if isinstance(n, ast.Name)
                   and not isinstance(n.ctx, ast.Load)
                   and not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef))
        if isinstance(statement, ast.Import | ast.ImportFrom):
            top.update((a.asname or a.name).split(".")[0] for a in statement.names)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            top.add(statement.name)
    found: dict[str, _Function] = {}
    seen: Counter[str] = Counter()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        seen[node.name] += 1
        args = node.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                  *([args.vararg] if args.vararg else []),
                                  *([args.kwarg] if args.kwarg else [])]}
        uses: dict[str, int] = {}
        bound: set[str] = set()
        _read_python((n for part in node.body for n in ast.walk(part)), bound, uses)
        found[node.name] = (params, uses, bound)
    result = {name: entry for name, entry in found.items() if seen[name] == 1}
    result[_TOP] = (set(), {}, top)
    return result


_TS_FUNCTIONS = {
    "javascript": frozenset({"function_declaration", "generator_function_declaration",
                             "arrow_function", "function_expression", "function",
                             "method_definition"}),
    "c": frozenset({"function_definition"}), "cpp": frozenset({"function_definition"}),
    "java": frozenset({"method_declaration", "constructor_declaration"}),
}
_TS_FUNCTIONS["typescript"] = _TS_FUNCTIONS["javascript"]
# A default value is no parameter: ``calls = null`` binds ``calls`` only.
_DEFAULTS = frozenset({"right", "value", "default_value"})


def _ts_functions(tree: Any, source: bytes, language: str) -> dict[str, _Function]:
    kinds = _TS_FUNCTIONS[language]

    def text(node: Any) -> str:
        return source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def name_and_params(node: Any) -> tuple[str | None, Any]:
        if node.type == "function_definition":  # C, C++: int f(int a) {...}
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            if declarator is None:
                return None, None
            named = declarator.child_by_field_name("declarator")
            return (text(named) if named is not None else None,
                    declarator.child_by_field_name("parameters"))
        named = node.child_by_field_name("name")
        if named is None and node.parent is not None and node.parent.type == "variable_declarator":
            named = node.parent.child_by_field_name("name")  # const f = (a) => {...}
        return (text(named) if named is not None else None,
                node.child_by_field_name("parameters") or node.child_by_field_name("parameter"))

    def identifiers(node: Any, skip_defaults: bool) -> Iterator[Any]:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("identifier", "shorthand_property_identifier"):
                yield current
            for index, child in enumerate(current.children):
                if not (skip_defaults and current.field_name_for_child(index) in _DEFAULTS):
                    stack.append(child)

    def binds(node: Any) -> bool:
        """Whether an identifier is a name being declared (a parameter, a local, the left of
        a default), not a use (a declarator's value is one)."""
        parent = node.parent
        if parent is None:
            return False
        if "parameter" in parent.type or parent.type in ("catch_clause", "import_specifier",
                                                         "namespace_import"):
            return True
        if not (parent.type in _JS_BINDERS or "declarator" in parent.type
                or parent.type == "assignment_pattern"):
            return False
        field = next(parent.field_name_for_child(index)
                     for index, child in enumerate(parent.children) if child == node)
        return field in ("name", "declarator", "left")

    found: dict[str, _Function] = {}
    seen: Counter[str] = Counter()
    top: set[str] = set()
    stack: list[tuple[Any, bool]] = [(tree.root_node, False)]
    while stack:
        node, inside = stack.pop()
        if node.type in kinds:
            name, params = name_and_params(node)
            body = node.child_by_field_name("body")
            if name is not None:
                seen[name] += 1
                if params is not None and body is not None:
                    uses: dict[str, int] = {}
                    bound: set[str] = set()
                    for ident in identifiers(body, skip_defaults=False):
                        if binds(ident):
                            bound.add(text(ident))
                        else:
                            uses.setdefault(text(ident), ident.start_point[0] + 1)
                    found[name] = ({text(i) for i in identifiers(params, skip_defaults=True)},
                                   uses, bound)
            inside = True
        elif not inside and node.type == "identifier" and binds(node):
            top.add(text(node))
        stack.extend((child, inside) for child in node.children)
    result = {name: entry for name, entry in found.items() if seen[name] == 1}
    result[_TOP] = (set(), {}, top)
    return result
