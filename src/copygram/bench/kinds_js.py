"""JavaScript for ``copygram bench kinds`` (:mod:`copygram.bench.kinds`): HumanEvalFix problems
(``/* doc */`` then ``const name = (a, b) => {``), the rule-made edits of one function, and the
test snippets of a row's program.

The program runs after the candidate in one script, node with the harness's ``console.assert``
preamble (:mod:`copygram.bench.testrun`). Each problem's own test (``const testX = () => {...}``
then ``testX()``) runs inside a block of its own, so that two tests' ``const`` names never clash;
to test another function with it (a caller, a spy), the block shadows the problem's name:
``{ const hasCloseElements = caller1; ...test... }``.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence

from copygram.bench.data import EditRow
from copygram.bench.kinds_edits import (
    FLAG,
    Language,
    Problem,
    c_comment_above,
    shorten_c_comment,
)

_DECLARED = re.compile(r"^(?:const|let|var|function\*?|class)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
_FUNCTION = re.compile(r"^(?:const ([A-Za-z_$][\w$]*) = (?:async )?\(|function ([A-Za-z_$][\w$]*)\()",
                       re.MULTILINE)
_PARAMS = re.compile(r"^\s*[A-Za-z_$][\w$]*(\s*,\s*[A-Za-z_$][\w$]*)*\s*$")


def _declaration(block: str, name: str) -> tuple[int, re.Match[str]] | None:
    """The line index and match of ``name``'s declaration: ``const name = (params) => {`` or
    ``function name(params) {``, alone on its line."""
    pattern = re.compile(rf"^(const {re.escape(name)} = \()([^()]*)(\) => \{{)\s*$"
                         rf"|^(function {re.escape(name)}\()([^()]*)(\) \{{)\s*$")
    for index, line in enumerate(block.splitlines()):
        match = pattern.match(line)
        if match:
            return index, match
    return None


def _params(match: re.Match[str]) -> list[str] | None:
    text = match.group(2) if match.group(1) else match.group(5)
    if not _PARAMS.match(text):
        return None
    return [part.strip() for part in text.split(",")]


class JsLanguage(Language):
    name = "js"
    source = "humanevalfix_docs_js"
    caller_names = ("caller1", "caller2")

    def parse(self, row: EditRow) -> Problem | None:
        entry, test = row.meta.get("entry_point"), row.meta.get("test")
        if not isinstance(entry, str) or not isinstance(test, str):
            return None
        fixed, buggy = row.after.strip("\n"), row.before.strip("\n")
        if _declaration(fixed, entry) is None or _declaration(buggy, entry) is None:
            return None
        names = set(_DECLARED.findall(fixed)) | set(_DECLARED.findall(buggy))
        return Problem(id=row.id, name=entry, instruction=row.instruction, fixed=fixed,
                       buggy=buggy, imports=(), names=frozenset(names), test=test.strip("\n"))

    def render(self, imports: Sequence[str], consts: Sequence[str],
               blocks: Sequence[str]) -> str:
        head = "\n".join([*imports, *consts])
        return "\n\n".join([head, *blocks] if head else blocks) + "\n"

    def run_test(self, problem: Problem, name: str) -> str:
        alias = f"const {problem.name} = {name};\n" if name != problem.name else ""
        return f"{{\n{alias}{problem.test}\n}}\n"

    def absent(self, name: str) -> str:
        return f"console.assert(typeof {name} === 'undefined', '{name} is still defined');\n"

    def new_name(self, old: str, prefix: str) -> str:
        return prefix + old[:1].upper() + old[1:]

    def callers(self, name: str) -> tuple[str, str]:
        return (f"const caller1 = (...args) => {name}(...args);",
                (f"function caller2(...args) {{\n  const result = {name}(...args);\n"
                f"  return result;\n}}"))

    def add_calls_param(self, block: str, name: str) -> tuple[str, str] | None:
        found = _declaration(block, name)
        if found is None or re.search(r"(?<![\w$])calls(?![\w$])", block):
            return None
        index, match = found
        params = _params(match)
        if not params:
            return None
        lines = block.splitlines()
        opening, closing = (match.group(1), match.group(3)) if match.group(1) else (
            match.group(4), match.group(6))
        lines[index] = f"{opening}{', '.join(params)}, calls = null{closing}"
        following = next((line for line in lines[index + 1:] if line.strip()), "  ")
        indent = following[:len(following) - len(following.lstrip())] or "  "
        record = f"[{', '.join(params)}]"
        lines.insert(index + 1, f"{indent}if (calls !== null) calls.push({record});")
        return "\n".join(lines), record

    def param_callers(self, name: str) -> tuple[str, str]:
        return (f"const caller1 = (...args) => {name}(...args);",
                f"const caller1 = (calls, ...args) => {name}(...args, calls);")

    def param_instruction(self, name: str, record: str) -> str:
        return (f"Add a last parameter calls = null to {name}: when calls is not null, {name} "
                f"first pushes the array {record} of its arguments onto it. Give caller1 a new "
                f"first parameter calls and pass it on as the last argument of its call of "
                f"{name}.")

    def spy_test(self, problem: Problem, caller: str | None) -> str:
        target = caller or problem.name
        call = "__spied(log, ...args)" if caller else "__spied(...args, log)"
        return (f"{{\nconst __spied = {target};\n{{\n"
                f"const {problem.name} = (...args) => {{\n  const log = [];\n"
                f"  const result = {call};\n"
                f"  console.assert(log.length >= 1 && log[0].length === args.length && "
                f"log[0].every((v, i) => Object.is(v, args[i])), 'calls not recorded');\n"
                f"  return result;\n}};\n{problem.test}\n}}\n}}\n")

    def debug_branch(self, block: str, name: str,
                     imports: frozenset[str]) -> tuple[str, str] | None:
        found = _declaration(block, name)
        params = _params(found[1]) if found else None
        if found is None or params is None:
            return None
        index = found[0]
        lines = block.splitlines()
        following = next((line for line in lines[index + 1:] if line.strip()), "  ")
        indent = following[:len(following) - len(following.lstrip())] or "  "
        args = "".join(f", {param}" for param in params)
        lines[index + 1:index + 1] = [f"{indent}if ({FLAG}) {{",
                                      f"{indent}  console.log('{name}:'{args});", f"{indent}}}"]
        return "\n".join(lines), f"const {FLAG} = false;"

    def describe(self, block: str, name: str) -> str | None:
        found = _declaration(block, name)
        if found is None:
            return None
        lines = block.splitlines()
        comment = c_comment_above(lines, found[0])
        params = _params(found[1])
        if comment is None or params is None:
            return None
        text = "\n".join(lines[comment[0]:comment[1] + 1]).strip()
        text = text.removeprefix("/*").removesuffix("*/").strip("\n")
        first, _, rest = text.partition("\n")
        doc = (first.strip() + "\n" + textwrap.dedent(rest)).strip()
        return f"{name}({', '.join(params)}): {doc}" if doc else None

    def shorten_doc(self, block: str, name: str) -> tuple[str, str] | None:
        found = _declaration(block, name)
        return shorten_c_comment(block.splitlines(), found[0]) if found else None

    def doc_instruction(self, name: str, text: str) -> str:
        return f"Replace the comment above {name} with the one-line comment /* {text} */."

    def literal(self, value: str | int) -> str:
        return "'" + value.replace("'", "\\'") + "'" if isinstance(value, str) else str(value)

    def constant(self, name: str, literal: str) -> str:
        return f"const {name} = {literal};"

    def assert_equal(self, name: str, literal: str) -> str:
        return f"console.assert({name} === {literal}, '{name}');\n"

    def functions(self, text: str) -> list[str]:
        return [a or b for a, b in _FUNCTION.findall(text)]

    def exports(self, names: Sequence[str]) -> tuple[str, bool, str, str]:
        listing = "".join(f"  {name},\n" for name in names)
        return (f"module.exports = {{\n{listing}}};", False,
                ("At the end of the file, add a module.exports object that exports every "
                "top-level function of the file under its own name, in the order they are "
                "defined."),
                (f"console.assert(JSON.stringify(Object.keys(module.exports)) === "
                f"'{json.dumps(list(names), separators=(',', ':'))}', 'module.exports');\n"))


JS = JsLanguage()
