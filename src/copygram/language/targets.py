"""Whether an edit reached what its instruction names: the check that sends a program which
edited the wrong place to rewrite mode.

A small model writing an edit program sometimes places its block on the wrong function: asked to
"Replace the docstring of below_zero", it rewrites ``is_sorted``; asked to add a constant, it
edits a function. The file is sound, so :mod:`copygram.language.damage` sees nothing, but the
edit missed. Read against the instruction, two things show it:

* the instruction mentions names the document **defines** (functions, methods, classes,
  module-level variables; Python through :mod:`ast`, JavaScript, TypeScript, Java, C, C++, Go
  and Rust through tree-sitter, where its grammar is installed) and the edit left every one of
  those definitions untouched: no line of any (with the comment block right above it) changed,
  nothing was inserted inside one; blank lines and trailing spaces do not count. One reached is
  enough: "Fix median: it must return the mean of the two middle values" names ``mean`` in
  passing; but names the instruction lists together ("Fix bugs in parse and render", "a, b and
  c") are each a target;
* a name the instruction **introduces** (written as code: in backticks, or in snake_case or
  lowerCamelCase, and found nowhere in the document) that the result still does not hold.
  Plain words, capitals and CapitalisedCamelCase are left out: "sum(" in an instruction's
  prose may be an example, and "README", "GitHub" or "API" name things outside the file;
* where the instruction **targets definitions** (it names some and introduces no name: "Fix
  bugs in strlen"), an edit that also changed inside a definition it does not name (one that
  neither holds a named one nor lies in one): asked to fix ``strlen``, a program that fixed it
  and then rewrote ``add`` and ``largest_divisor`` too, breaking both. Lines outside every
  definition (imports, constants) may change;
* an instruction that asks to **remove** a definition ("Remove the function f", "delete the
  unused method `g`": the name right after the verb and its describing words) and an edit
  after which the file still defines it: a model asked to remove a function that writes it
  again, changed, reached it but did not remove it;
* an instruction that asks for **documentation only** (it speaks of docstrings or comments,
  and, outside the text it quotes, of no code work: no fix, bug, rename, implement, refactor,
  optimise, handle, raise or return) and an edit that changed the code itself: Python's syntax
  tree without its docstrings, or another language's tree-sitter leaves without their comments,
  differ. Asked to replace a docstring, a program that writes its function
  again sometimes rewrites the body too.

Both are a program's miss, not damage to the file: :mod:`copygram.decode.checked` redoes such a
program in rewrite mode (plain greedy decoding of the file, which writes renames and spread-out
edits whole) and never refuses an edit for it. A mention is a weak signal (an instruction may
name a function it only talks about): a false alarm costs a rewrite, never a wrong file. Cost:
a parse of the document and a line diff (milliseconds).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from copygram.language import parsers
from copygram.language.line_changes import changed_ranges, touches
from copygram.language.lines import split_lines
from copygram.language.types import MAX_REACH, Reach

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_BACKTICKS = re.compile(r"`[^`]*`")
_JS_DEFINITIONS = frozenset({"function_declaration", "generator_function_declaration",
                             "class_declaration", "method_definition", "variable_declarator",
                             "interface_declaration", "abstract_class_declaration"})
_COMMENT = ("#", "//", "/*", "*", "'''", '"""')


def find_misses(before: str, after: str, instruction: str,
                language: str | None) -> tuple[str, ...]:
    """What the edit ``before`` -> ``after`` missed of ``instruction`` (module doc), each as a
    sentence; empty where it reached every name the instruction mentions. ``language``: the
    document's (Python and the tree-sitter languages above read definitions; any other, or
    ``None``, the introduced names alone)."""
    words = set(_WORD.findall(instruction))
    misses: list[str] = []
    regions = _definitions(before, language)
    named = sorted(words & set(regions))
    # The line diff only where a named definition needs it.
    changed = changed_ranges(split_lines(before), split_lines(after)) if named else []
    def reached(name: str) -> bool:
        return any(touches(changed, start, end) for start, end in regions[name])

    if named and not any(reached(name) for name in named):
        listed = ", ".join(named)
        misses.append(f"the instruction names {listed} and the edit left "
                      f"{'its definition' if len(named) == 1 else 'each definition'} as it was")
    elif named:
        for group in _listed(instruction, regions):
            left = [name for name in group if not reached(name)]
            if left:
                were = "it was" if len(left) == 1 else "they were"
                misses.append(f"the instruction lists {' and '.join(group)} together and the "
                              f"edit left {', '.join(left)} as {were}")
    if misses == [] and named and targets_definitions(before, instruction, language):
        strayed = _strayed(regions, named, changed)
        if strayed:
            misses.append(f"the instruction names {', '.join(named)} and the edit also changed "
                          f"{', '.join(strayed)}, which it does not name")
    if regions:
        kept = [name for name in _removed(instruction) if name in regions
                and name in _definitions(after, language)]
        misses += [f"the instruction asks to remove {name} and the edit kept its definition"
                   for name in kept]
    if documentation_only(instruction) and _code_changed(before, after, language):
        misses.append("the instruction asks for documentation only and the edit changed the "
                      "code")
    present_before = set(_WORD.findall(before))
    present_after = set(_WORD.findall(after))
    for name in sorted(_introduced(instruction) - present_before):
        if name not in present_after:
            misses.append(f"{name} is introduced by the instruction and the edit never wrote it")
    return tuple(misses)


# "Remove the unused function f", "delete `g`": the name right after the verb and its
# describing words. "Remove the print call from f" names ``print``, no definition: nothing.
_REMOVE = re.compile(r"\b(?:remove|delete|drop)\s+(?:(?:the|a|an|unused|dead|old|function|"
                     r"method|class|constant|variable|field|helper|definition|global)\s+)*"
                     r"`?([A-Za-z_$][A-Za-z0-9_$]*)", re.IGNORECASE)


def _removed(instruction: str) -> list[str]:
    """The names ``instruction`` asks to remove (:data:`_REMOVE`)."""
    return [match.group(1) for match in _REMOVE.finditer(instruction)]


def targets_definitions(document: str, instruction: str, language: str | None) -> bool:
    """Whether ``instruction`` names a definition of ``document`` and introduces no name
    (module doc): an edit of code the document already has ("Fix bugs in median", "Remove the
    function f"), which head blocks name and rewrite, where program mode passes more tests than
    a rewrite; a new name (a rename, an added function or constant) or no name at all is left
    to a rewrite (docs/quality.md, "Which mode edits by default")."""
    words = set(_WORD.findall(instruction))
    if not words & set(_definitions(document, language)):
        return False
    return not introduces_names(document, instruction)


def introduces_names(document: str, instruction: str) -> bool:
    """Whether ``instruction`` introduces a name ``document`` lacks: one it writes as code (in
    backticks, snake_case or lowerCamelCase; module doc) that the document nowhere holds (an
    added function, a rename's new name, a new constant). Microseconds a page."""
    return bool(_introduced(instruction) - set(_WORD.findall(document)))


def named_reach(document: str, instruction: str, language: str | None) -> Reach:
    """What a program must reach where ``instruction`` targets definitions of ``document``
    (:func:`targets_definitions`: it names one and introduces no name), as ``touch_named`` holds
    head blocks to it: each definition it lists together with others, where it lists two to
    :data:`~copygram.language.types.MAX_REACH` ("Fix bugs in parse and render": an edit that
    leaves one as it was is a miss, :func:`find_misses`), else any one it names; each as its
    line ranges (1-based, inclusive, sorted; with the comment block right above). Empty where
    it targets none. Milliseconds (the definitions are cached per document)."""
    if not targets_definitions(document, instruction, language):
        return ()
    regions = _definitions(document, language)
    listed = sorted({name for group in _listed(instruction, regions) for name in group})
    if 2 <= len(listed) <= MAX_REACH:
        return tuple(tuple(sorted(set(regions[name]))) for name in listed)
    named = set(_WORD.findall(instruction)) & set(regions)
    return (tuple(sorted({span for name in named for span in regions[name]})),)


def lists_definitions(document: str, instruction: str, language: str | None) -> bool:
    """Whether ``instruction`` lists two or more definitions of ``document`` together ("Fix bugs
    in parse and render": each a target, :func:`find_misses`). Milliseconds."""
    return bool(_listed(instruction, _definitions(document, language)))


def _introduced(instruction: str) -> set[str]:
    """The words of ``instruction`` written as code (module doc)."""
    found = set()
    for match in _BACKTICKS.finditer(instruction):
        found.update(_WORD.findall(match.group()))
    for word in _WORD.findall(instruction):
        if ("_" in word.strip("_") or word.startswith("__")
                or (word[0].islower() and re.search(r"[a-z][A-Z]", word))):
            found.add(word)
    return found


_LIST_GAP = re.compile(r"^[`'\"]?(?:\s*,\s*|\s*,?\s+(?:and|&)\s+)[`'\"]?$")


def _listed(instruction: str, defined: Mapping[str, object]) -> list[list[str]]:
    """Runs of two or more of the document's definitions the instruction lists together ("Fix
    bugs in parse and render", "a, b and c"): each is a target, where one name in a sentence may
    be a passing mention."""
    groups: list[list[str]] = []
    run: list[str] = []
    end = -1
    for match in _WORD.finditer(instruction):
        name = match.group()
        if name not in defined:
            continue  # the gap to the next defined name says whether the run goes on
        if run and _LIST_GAP.match(instruction[end:match.start()]):
            run.append(name)
        else:
            run = [name]
            groups.append(run)
        end = match.end()
    return [group for group in groups if len(set(group)) > 1]


def _strayed(regions: Mapping[str, tuple[tuple[int, int], ...]], named: Sequence[str],
             changed: Sequence[tuple[int, int]]) -> list[str]:
    """The definitions the edit changed inside (a line of one changed, or lines inserted between
    two of its lines) that the instruction does not name, leaving out those that hold a named
    one or lie in one (a named method's class, a named class's methods)."""
    spans = [span for name in named for span in regions[name]]

    def related(start: int, end: int) -> bool:
        return any((start <= a and b <= end) or (a <= start and end <= b) for a, b in spans)

    return sorted(name for name, ranges in regions.items() if name not in named
                  and any(touches(changed, a, b, after=False) and not related(a, b)
                          for a, b in ranges))


_DOCS = re.compile(r"\b(?:docstrings?|comments?|documentation)\b", re.IGNORECASE)
_CODE_WORK = re.compile(r"\b(?:fix(?:es|ed)?|bugs?|rename|implement|refactor|optimi[sz]e|handle|"
                        r"raise|return)\b", re.IGNORECASE)
# What an instruction quotes (the new docstring's text, a comment, code): not its own words.
_QUOTED = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|/\*[\s\S]*?\*/|`[^`]*`|"[^"\n]*"')


def documentation_only(instruction: str) -> bool:
    """Whether ``instruction`` asks for docstrings or comments and no code work (module doc).
    Microseconds."""
    words = _QUOTED.sub(" ", instruction)
    return bool(_DOCS.search(words)) and not _CODE_WORK.search(words)


def _code_changed(before: str, after: str, language: str | None) -> bool:
    """Whether ``after``'s code differs from ``before``'s, docstrings and comments aside; not
    where either does not parse (the damage check's concern) or the language has no reader."""
    old, new = _code(before, language), _code(after, language)
    return old is not None and new is not None and old != new


def _code(text: str, language: str | None) -> str | tuple[tuple[str, bytes], ...] | None:
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
            if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
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


@functools.lru_cache(maxsize=4)
def _definitions(text: str, language: str | None) -> Mapping[str, tuple[tuple[int, int], ...]]:
    """Name -> the line ranges (1-based) of its definitions, each with the comment lines right
    above it. Kept for the last few documents: mode "auto" reads them to choose a mode and the
    check reads them again when the program is done (one parse per document, not two)."""
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


__all__ = ["documentation_only", "find_misses", "introduces_names", "lists_definitions",
           "named_reach", "targets_definitions"]
