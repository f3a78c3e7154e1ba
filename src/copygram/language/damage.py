"""Damage an edit can do to a file, found by reading the file before and after it.

An edit is *damaged* where it leaves the file worse in a way a machine can see, whatever the
instruction asked:

* ``marker``: a line of the edit format (``=======``, ``<<<<<<< SEARCH``, ``>>>>>>> REPLACE``,
  one of their runs of seven with words after it, ``======= REPLACE``,
  a copy tag, a long file's elision line, :mod:`copygram.language.focus`) is in the result but
  in no line of the input: the model wrote its own markup into the file.
* ``parse``: the input parses in its language and the result does not (Python through
  :mod:`ast`; JavaScript, TypeScript, Java, Go, C, C++ and Rust through tree-sitter grammars,
  where the ``tree-sitter`` grammar packages are installed; without them, brackets that were
  balanced and are not; JSON, TOML and YAML through their own parsers,
  :mod:`copygram.language.data_files`).
* ``duplicate``: a function, method or class is defined more often in one scope than before
  and more than once (four functions renamed to one name); in Java, C and C++, where a name may
  be overloaded, the whole signature counts. In JSON and YAML: a key written more often in one
  object or mapping than before and more than once.
* ``dangling``: a name the file bound (a function, class, variable, parameter or import) is
  bound nowhere in the result but still used there (a function renamed and a call of it left;
  Python, JavaScript and TypeScript; a Python file with ``import *`` is not read so). In C,
  C++ and Java, functions and methods only: one the file defined or declared, declared nowhere
  in the result and still called there by its bare name. In every one of these languages, and
  C too: a parameter taken out of a function's signature that its body still uses and nothing
  else in the function or at the top of the file declares (a removed ``calls`` parameter whose
  line of use stayed, which a file-wide check misses where another function binds ``calls``).
* ``unfinished``: not found by reading: the edit program never finished (the model repeated
  itself past its budget; :class:`~copygram.errors.GenerationError`), so there is no result to
  read, or a rewrite stopped on its budget or a full context before its reply ended (its file
  cut short); :mod:`copygram.decode.checked` marks such an edit so.
* ``missed``: not a defect of the file either: a program that left untouched a definition its
  instruction names, or never wrote a name the instruction introduces
  (:mod:`copygram.language.targets`); :mod:`copygram.decode.checked` redoes it in rewrite mode.
* ``lost``: a prose text of several paragraphs rewritten whole as fewer than half of them, its
  instruction asking for nothing shorter (:func:`~copygram.language.passages.lost_paragraphs`):
  the rest of the text would be lost. Read by :func:`copygram.decode.scoped.kept_text`, which
  puts recognisable paragraphs' revisions back in their places where the session chose the
  rewrite.

Only a change from good to bad counts: a file that did not parse before may not parse after. The
checks are conservative on purpose (each is a certain defect, not a style), since a damaged
edit is redone or refused (:mod:`copygram.decode.checked`). Cost: one parse of each text
(~1 ms per 100 lines for :mod:`ast`, less for tree-sitter) and a walk of its definitions.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal

from copygram.language import parsers
from copygram.language.dangling import dangling_names, dangling_parameters
from copygram.language.data_files import (
    DATA_FORMATS,
    SUFFIXES,
    data_error,
    looks_like_json,
    repeated_keys,
)
from copygram.language.focus import ELISION
from copygram.language.lines import split_lines
from copygram.language.parsers import LANGUAGES
from copygram.language.search_replace import MARKER_LIKE, MARKER_LINES
from copygram.language.types import PROSE

DamageKind = Literal["marker", "parse", "duplicate", "dangling", "unfinished", "missed", "lost"]

_SUFFIXES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript",
    ".java": "java", ".go": "go", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp", ".rs": "rust",
}
# Overloading languages: the same name with other parameters is another definition.
_BY_SIGNATURE = frozenset({"java", "c", "cpp"})
# Definition nodes per tree-sitter grammar. A Go method's receiver is part of its key.
_DEFINITIONS: dict[str, frozenset[str]] = {
    "javascript": frozenset({"function_declaration", "generator_function_declaration",
                             "class_declaration", "method_definition"}),
    "java": frozenset({"method_declaration", "constructor_declaration", "class_declaration",
                       "interface_declaration", "enum_declaration", "record_declaration"}),
    "go": frozenset({"function_declaration", "method_declaration"}),
    "c": frozenset({"function_definition"}),
    "rust": frozenset({"function_item", "struct_item", "enum_item", "trait_item"}),
}
_DEFINITIONS["typescript"] = _DEFINITIONS["javascript"] | {"interface_declaration"}
_DEFINITIONS["cpp"] = _DEFINITIONS["c"]
# Decorators under which a name is defined again on purpose (a property's setter, an overload).
_REDEFINING_DECORATORS = frozenset({"setter", "getter", "deleter", "overload", "register"})
_VISIBILITY = re.compile(r"public|private|protected")
_METHOD_KINDS = frozenset({"get", "set", "static"})
_COPY_TAG = re.compile(r"<copy lines=\"\d+-\d+\"/>")


@dataclass(frozen=True)
class Damage:
    """One defect an edit brought into the file: its ``kind`` (module doc), what it is, and the
    1-based line of the result where it shows (``None``: no one line)."""

    kind: DamageKind
    detail: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{self.kind}: {where}{self.detail}"


def language_for_path(path: str | PurePath) -> str | None:
    """The language of a file named ``path`` by its suffix (``None``: not one of
    :data:`LANGUAGES` or :data:`~copygram.language.data_files.DATA_FORMATS`)."""
    suffix = PurePath(path).suffix.lower()
    return _SUFFIXES.get(suffix) or SUFFIXES.get(suffix)


def guess_language(text: str) -> str | None:
    """The language ``text`` is written in, where it parses cleanly as one of
    :data:`LANGUAGES` and defines something in it (a function, class or method: prose that
    happens to parse defines nothing), or ``"json"`` for a JSON object or array
    (:func:`~copygram.language.data_files.looks_like_json`; TOML and YAML are named by a
    file's suffix alone); ``None`` otherwise. Tried in the order of :data:`LANGUAGES`; a
    grammar that is not installed is skipped."""
    if not text.strip():
        return None
    if looks_like_json(text):
        return "json"
    for language in LANGUAGES if "{" in text else ("python",):  # every grammar but Python's
        if _parse_error(text, language) is None and any(_definitions(text, language)):
            return language
    return None


def code_language(language: str) -> str:
    """``language`` as every reader but the damage check takes it: a data format (JSON, TOML,
    YAML: :data:`~copygram.language.data_files.DATA_FORMATS`) defines nothing and documents
    nothing, so it is read as prose (:data:`PROSE`) there; any other ``language`` as it is."""
    return PROSE if language in DATA_FORMATS else language


def find_damage(before: str, after: str, *,
                language: str | None = None) -> tuple[Damage, ...]:
    """The damage (module doc) that turning ``before`` into ``after`` did, whatever wrote
    ``after``: search/replace blocks' marker lines and the paper's copy tags count as markers
    in any edit. ``language``: one of :data:`LANGUAGES` or
    :data:`~copygram.language.data_files.DATA_FORMATS`, :data:`PROSE` (the marker check
    alone), or ``None`` to guess it from ``before`` (:func:`guess_language`; prose gets the
    marker check alone)."""
    damage = list(_leaked_markers(before, after))
    language = language if language is not None else guess_language(before)
    if language is None or language == PROSE:
        return tuple(damage)
    if language in DATA_FORMATS:
        return (*damage, *_data_damage(before, after, language))
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; one of "
                         f"{', '.join((*LANGUAGES, *DATA_FORMATS))}")
    if _parse_error(before, language) is not None:
        return tuple(damage)  # it did not parse before: its parse tells nothing of the edit
    error = _parse_error(after, language)
    if error is not None:
        line, what = error
        damage.append(Damage("parse", f"the edited file no longer parses as {language} "
                                      f"({what})", line))
        return tuple(damage)  # definitions read from a broken parse would mislead
    had = Counter(key for key, _ in _definitions(before, language))
    now: Counter[tuple[object, str]] = Counter()
    first: dict[tuple[object, str], int] = {}
    for key, line in _definitions(after, language):
        now[key] += 1
        first.setdefault(key, line)
    for key, count in now.items():
        if count > 1 and count > had[key]:
            damage.append(Damage("duplicate", f"{key[1]} is defined {count} times in one scope "
                                              f"(the input defined it {had[key]} times)",
                                 first[key]))
    damage.extend(_dangling(before, after, language))
    return tuple(damage)


def _data_damage(before: str, after: str, fmt: str) -> Iterator[Damage]:
    """A data file's damage: a parse it broke, else keys it wrote twice in one place."""
    if data_error(before, fmt) is not None:
        return  # it did not parse before (JSON with comments): nothing to hold it to
    error = data_error(after, fmt)
    if error is not None:
        line, what = error
        yield Damage("parse", f"the edited file no longer parses as {fmt.upper()} ({what})", line)
        return
    had = repeated_keys(before, fmt)
    for (path, key), (count, line) in repeated_keys(after, fmt).items():
        before_count = had[(path, key)][0] if (path, key) in had else 0
        if count > before_count:
            where = f" in {path}" if path else " at the top level"
            said = (f"wrote it {before_count} times" if before_count
                    else "did not repeat it")
            yield Damage("duplicate", f"the key {key!r} is written {count} times{where} (the "
                                      f"input {said})", line)


def _dangling(before: str, after: str, language: str) -> Iterator[Damage]:
    named = dangling_names(before, after, language)
    for name, line in named:
        yield Damage("dangling", f"{name} is used but no longer defined (the input defined it)",
                     line)
    said = {name for name, _ in named}  # a name bound nowhere any more: said once, above
    for name, function, line in dangling_parameters(before, after, language):
        if name in said:
            continue
        yield Damage("dangling", f"{name} is used in {function} but is no longer one of its "
                                 f"parameters (the input's {function} took it)", line)


_MARKERS = frozenset(m.rstrip("\n") for m in MARKER_LINES)


def _leaked_markers(before: str, after: str) -> Iterator[Damage]:
    own = {line.rstrip("\r\n") for line in split_lines(before)}
    tags = not _COPY_TAG.search(before)
    for number, line in enumerate(split_lines(after), 1):
        text = line.rstrip("\r\n")
        if (text in _MARKERS or MARKER_LIKE.fullmatch(text)) and text not in own:
            yield Damage("marker", f"the edit format's marker line {text!r} is in the file",
                         number)
        elif tags and _COPY_TAG.search(text):
            yield Damage("marker", "a copy tag is in the file", number)
        elif ELISION.match(text) and text not in own:
            yield Damage("marker", f"the prompt's elision line {text.strip()!r} (it stood for "
                                   "lines the model was not shown) is in the file", number)


# -- parsing ------------------------------------------------------------------------------------


def parses(text: str, language: str) -> bool:
    """Whether ``text`` parses as ``language`` (one of :data:`LANGUAGES` or
    :data:`~copygram.language.data_files.DATA_FORMATS`; module doc: ``ast`` or a tree-sitter
    grammar, else balanced brackets; a data format's own parser). One parse: ~1 ms per 100
    lines."""
    if language in DATA_FORMATS:
        return data_error(text, language) is None
    return _parse_error(text, language) is None


def _parse_error(text: str, language: str) -> tuple[int | None, str] | None:
    """Where ``text`` fails to parse as ``language`` (line, what), or ``None`` if it parses."""
    if language == "python":
        try:
            ast.parse(text)
        except SyntaxError as exc:
            return exc.lineno, exc.msg
        except ValueError as exc:  # a NUL byte
            return None, str(exc)
        return None
    tree = parsers.tree(text, language)
    if tree is None:  # no grammar installed: the brackets alone
        return _unbalanced(text)
    node = _first_error(tree.root_node)
    if node is None:
        return None
    what = f"missing {node.type!r}" if node.is_missing else "a syntax error"
    return node.start_point[0] + 1, what


def _first_error(node: Any) -> Any:
    if not node.has_error:
        return None
    if node.type == "ERROR" or node.is_missing:
        return node
    for child in node.children:
        found = _first_error(child)
        if found is not None:
            return found
    return node


_OPENERS, _CLOSERS = "([{", ")]}"
_C_LIKE_SKIP = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
                          r"|`(?:\\.|[^`\\])*`", re.DOTALL)


def _unbalanced(text: str) -> tuple[int | None, str] | None:
    """Where the brackets of C-like ``text`` (strings and comments left out) stop matching."""
    stack: list[tuple[str, int]] = []
    code = _C_LIKE_SKIP.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    for at, char in enumerate(code):
        if char in _OPENERS:
            stack.append((char, at))
        elif char in _CLOSERS and (
                not stack or _OPENERS.index(stack.pop()[0]) != _CLOSERS.index(char)):
            return code.count("\n", 0, at) + 1, f"an unmatched {char!r}"
    if stack:
        return code.count("\n", 0, stack[-1][1]) + 1, f"an unclosed {stack[-1][0]!r}"
    return None


# -- definitions --------------------------------------------------------------------------------


def _definitions(text: str, language: str) -> Iterator[tuple[tuple[object, str], int]]:
    """Each definition of ``text`` as ``((scope, key), line)``: the scope it is made in and the
    name (or, where overloading is allowed, the signature) it defines."""
    if language == "python":
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return
        yield from _python_definitions(tree.body, "")
        return
    tree = parsers.tree(text, language)
    if tree is None:
        return
    kinds = _DEFINITIONS[language]
    source = text.encode("utf-8")
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.children))
        if (node.type in kinds or _is_function_binding(node)) and (
                key := _key(node, source, language)):
            # `const f = ...` is made in the scope that holds its declaration.
            scope = node.parent.parent if node.type == "variable_declarator" else node.parent
            yield (scope.id if scope is not None else 0, key), node.start_point[0] + 1


def _python_definitions(body: Sequence[ast.stmt],
                        scope: str) -> Iterator[tuple[tuple[object, str], int]]:
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if not any(_redefines(d) for d in statement.decorator_list):
                yield (scope, statement.name), statement.lineno
            if isinstance(statement, ast.ClassDef):
                yield from _python_definitions(statement.body, f"{scope}.{statement.name}")


def _redefines(decorator: ast.expr) -> bool:
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = (node.attr if isinstance(node, ast.Attribute)
            else node.id if isinstance(node, ast.Name) else "")
    return name in _REDEFINING_DECORATORS


_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function",
                              "generator_function", "class"})


def _is_function_binding(node: Any) -> bool:
    """``const f = (x) => ...``: how JavaScript code often defines its functions."""
    if node.type != "variable_declarator":
        return False
    value = node.child_by_field_name("value")
    return value is not None and value.type in _FUNCTION_VALUES


def _key(node: Any, source: bytes, language: str) -> str:
    """What a definition node defines: its name (with ``get``/``set``/``static`` where they make
    a JavaScript method another one), or, where the parameters make another definition (Java,
    C, C++; a Go method's receiver), the signature up to the body, blanks squeezed."""
    body = node.child_by_field_name("body")
    if language in _BY_SIGNATURE or node.type == "method_declaration":
        end = body.start_byte if body is not None else node.end_byte
        words = source[node.start_byte:end].decode("utf-8", "replace").split()
        while len(words) > 1 and _VISIBILITY.fullmatch(words[0]):  # `public int f()`: `int f()`
            words.pop(0)
        return " ".join(words)
    name = node.child_by_field_name("name")
    if name is None:
        return ""
    before = source[node.start_byte:name.start_byte].decode("utf-8", "replace").split()
    return " ".join([w for w in before if w in _METHOD_KINDS]
                    + [source[name.start_byte:name.end_byte].decode("utf-8", "replace")])


__all__ = ["DATA_FORMATS", "LANGUAGES", "PROSE", "Damage", "DamageKind", "code_language",
           "find_damage", "guess_language", "language_for_path", "parses"]
