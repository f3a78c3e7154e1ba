"""Python for ``copygram bench kinds`` (:mod:`copygram.bench.kinds`): HumanEvalFix problems parsed
into blocks, the rule-made edits of one function, and the test snippets of a row's program.

Every snippet runs after the candidate file in one script (``candidate + test program``, the
harness of :mod:`copygram.bench.testrun`): a problem's own test defines ``check(fn)``, and the
program calls it with the name under test (``check(has_close_elements)``, ``check(caller_1)``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence

from copygram.bench.data import EditRow
from copygram.bench.kinds_edits import FLAG, Language, Problem, first_sentence

_CHECK_CALL = re.compile(r"^check\(.*\)\s*$", re.MULTILINE)


def _top_names(tree: ast.Module) -> set[str]:
    """The names a module defines at its top level (functions, classes, assigned names)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _split_imports(text: str) -> tuple[list[str], str] | None:
    """``(import lines, the rest)`` of a module whose top-level imports are one line each."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    lines = text.splitlines()
    drop: set[int] = set()
    imports: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if node.end_lineno != node.lineno:
                return None
            drop.add(node.lineno - 1)
            imports.append(lines[node.lineno - 1].strip())
    rest = "\n".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")
    return imports, rest


def _function(block: str, name: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(block)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _docstring_node(node: ast.FunctionDef) -> ast.Expr | None:
    first = node.body[0]
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return first
    return None


class PythonLanguage(Language):
    name = "python"
    source = "humanevalfix_docs_python"
    caller_names = ("caller_1", "caller_2")

    def parse(self, row: EditRow) -> Problem | None:
        entry, test = row.meta.get("entry_point"), row.meta.get("test")
        if not isinstance(entry, str) or not isinstance(test, str) or "def check(" not in test:
            return None
        fixed, buggy = _split_imports(row.after), _split_imports(row.before)
        if fixed is None or buggy is None:
            return None
        if _function(fixed[1], entry) is None or _function(buggy[1], entry) is None:
            return None
        names = _top_names(ast.parse(row.after)) | _top_names(ast.parse(row.before))
        return Problem(id=row.id, name=entry, instruction=row.instruction, fixed=fixed[1],
                       buggy=buggy[1], imports=tuple(dict.fromkeys(fixed[0] + buggy[0])),
                       names=frozenset(names), test=_CHECK_CALL.sub("", test).strip("\n"))

    def render(self, imports: Sequence[str], consts: Sequence[str],
               blocks: Sequence[str]) -> str:
        head = "\n\n".join(part for part in ("\n".join(imports), "\n".join(consts)) if part)
        body = "\n\n\n".join(blocks)
        return (f"{head}\n\n\n{body}" if head and body else head or body) + "\n"

    def run_test(self, problem: Problem, name: str) -> str:
        return f"{problem.test}\n\ncheck({name})\n"

    def absent(self, name: str) -> str:
        return f'assert "{name}" not in globals(), "{name} is still defined"\n'

    def new_name(self, old: str, prefix: str) -> str:
        return f"{prefix}_{old}"

    def callers(self, name: str) -> tuple[str, str]:
        return (f"def caller_1(*args):\n    return {name}(*args)",
                f"def caller_2(*args):\n    result = {name}(*args)\n    return result")

    def add_calls_param(self, block: str, name: str) -> tuple[str, str] | None:
        node = _function(block, name)
        if node is None or re.search(r"\bcalls\b", block):
            return None
        args = node.args
        if (args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults
                or not args.args or node.body[0].lineno == node.lineno):
            return None
        lines = block.splitlines()
        last = args.args[-1]
        row = lines[last.end_lineno - 1].encode()  # type: ignore[operator]
        col = last.end_col_offset or 0
        lines[last.end_lineno - 1] = (row[:col] + b", calls=None" + row[col:]).decode()  # type: ignore[operator]
        names = [a.arg for a in args.args]
        record = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
        first, doc = node.body[0], _docstring_node(node)
        indent = " " * first.col_offset
        at = doc.end_lineno if doc is not None and doc.end_lineno else first.lineno - 1
        lines[at:at] = [f"{indent}if calls is not None:", f"{indent}    calls.append({record})"]
        new = "\n".join(lines)
        changed = _function(new, name)
        if changed is None or [a.arg for a in changed.args.args] != [*names, "calls"]:
            return None
        return new, record

    def param_callers(self, name: str) -> tuple[str, str]:
        return (f"def caller_1(*args):\n    return {name}(*args)",
                f"def caller_1(*args, calls=None):\n    return {name}(*args, calls=calls)")

    def param_instruction(self, name: str, record: str) -> str:
        return (f"Add a last parameter calls=None to {name}: when calls is not None, {name} "
                f"first appends the tuple {record} of its arguments to it. Give caller_1 a "
                f"keyword parameter calls=None too and pass it on in its call of {name}.")

    def spy_test(self, problem: Problem, caller: str | None) -> str:
        call = (f"{caller}(*args, calls=log)" if caller
                else f"{problem.name}(*args, calls=log)")
        return (f"def _spy(*args, **kwargs):\n"
                f"    if kwargs:\n        return {problem.name}(*args, **kwargs)\n"
                f"    log = []\n    result = {call}\n"
                f"    assert log and log[0] == args, ('calls not recorded', log, args)\n"
                f"    return result\n\n\n{problem.test}\n\ncheck(_spy)\n")

    def debug_branch(self, block: str, name: str,
                     imports: frozenset[str]) -> tuple[str, str] | None:
        node = _function(block, name)
        if node is None or node.body[0].lineno == node.lineno:
            return None
        first, doc = node.body[0], _docstring_node(node)
        indent = " " * first.col_offset
        at = doc.end_lineno if doc is not None and doc.end_lineno else first.lineno - 1
        args = "".join(f", {a.arg}" for a in node.args.args)
        lines = block.splitlines()
        lines[at:at] = [f"{indent}if {FLAG}:", f'{indent}    print("{name}:"{args})']
        new = "\n".join(lines)
        return (new, f"{FLAG} = False") if _function(new, name) is not None else None

    def describe(self, block: str, name: str) -> str | None:
        node = _function(block, name)
        doc = ast.get_docstring(node) if node is not None else None
        if node is None or not doc:
            return None
        returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
        signature = f"{name}({ast.unparse(node.args)}){returns}"
        return f"{signature}: {doc}"

    def shorten_doc(self, block: str, name: str) -> tuple[str, str] | None:
        node = _function(block, name)
        doc = _docstring_node(node) if node is not None else None
        if node is None or doc is None or doc.end_lineno is None:
            return None
        text = first_sentence(ast.get_docstring(node) or "")
        lines = block.splitlines()
        start, end = lines[doc.lineno - 1], lines[doc.end_lineno - 1]
        if (not text or '"' in text or "\\" in text or start[:doc.col_offset].strip()
                or end[doc.end_col_offset or 0:].strip()):
            return None
        lines[doc.lineno - 1:doc.end_lineno] = [f'{" " * doc.col_offset}"""{text}"""']
        new = "\n".join(lines)
        return (new, text) if _function(new, name) is not None else None

    def doc_instruction(self, name: str, text: str) -> str:
        return f'Replace the docstring of {name} with the one-line docstring """{text}""".'

    def literal(self, value: str | int) -> str:
        return json.dumps(value)

    def constant(self, name: str, literal: str) -> str:
        return f"{name} = {literal}"

    def assert_equal(self, name: str, literal: str) -> str:
        return f'assert {name} == {literal}, "{name}"\n'

    def functions(self, text: str) -> list[str]:
        return [node.name for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)]

    def exports(self, names: Sequence[str]) -> tuple[str, bool, str, str]:
        listing = "".join(f'    "{name}",\n' for name in names)
        return (f"__all__ = [\n{listing}]", True,
                ("Add an __all__ list at the top of the module (after its imports, if any) "
                "that names every top-level "
                "function of the module, as strings, in the order they are defined."),
                f"assert __all__ == {json.dumps(list(names))}, __all__\n")


PYTHON = PythonLanguage()
