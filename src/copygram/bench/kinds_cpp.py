"""C++ for ``copygram bench kinds`` (:mod:`copygram.bench.kinds`): HumanEvalFix problems
(``/* doc */``, ``#include`` lines, ``using namespace std;``, then ``T name(params){``), the
rule-made edits of one function, and the test snippets of a row's program.

The program is compiled after the candidate as one translation unit (g++, C++17; the harness of
:mod:`copygram.bench.testrun`). Each problem's own test (``#undef NDEBUG``, ``#include<assert.h>``,
helpers, ``int main(){ assert(...); }``) goes into a namespace of its own, its ``main`` renamed,
and runs from a static object's constructor, so that two tests' helpers never clash and every test
runs before the program's empty ``main``; a failed ``assert`` aborts. To test another function
under a problem's name (a caller, a spy), the namespace first declares a function of that name and
signature that forwards to it: name lookup finds it before the global one.

Unlike the script languages, a function must be declared before it is called: the callers the
kinds add go below the function they call (:attr:`Language.declare_before_use`).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from copygram.bench.data import EditRow
from copygram.bench.kinds_edits import (
    FLAG,
    Language,
    Problem,
    c_comment_above,
    shorten_c_comment,
)

_DECLARATION = re.compile(r"^(?P<ret>[A-Za-z_][\w:<>,\s*&]*?[\w>*&])\s+(?P<name>[A-Za-z_]\w*)"
                          r"\s*\((?P<params>[^()]*)\)\s*\{\s*$")
_PREPROCESSOR = re.compile(r"^\s*(#|using namespace )")
_SERIAL = "@SERIAL@"
_STDIO = re.compile(r"^#include\s*<(stdio\.h|cstdio|bits/stdc\+\+\.h)>")
_MAIN = re.compile(r"^int\s+main\s*\(\s*\)\s*\{", re.MULTILINE)


@dataclass(frozen=True)
class Signature:
    """A function's declaration line: return type, name, parameter types and names."""

    ret: str
    name: str
    types: tuple[str, ...]
    params: tuple[str, ...]

    def declare(self, name: str, extra_first: str = "", extra_last: str = "") -> str:
        parts = [f"{t} {p}" for t, p in zip(self.types, self.params, strict=True)]
        parts = [*([extra_first] if extra_first else []), *parts,
                 *([extra_last] if extra_last else [])]
        return f"{self.ret} {name}({', '.join(parts)})"

    def call(self, name: str, extra_first: str = "", extra_last: str = "") -> str:
        args = [*([extra_first] if extra_first else []), *self.params,
                *([extra_last] if extra_last else [])]
        return f"{name}({', '.join(args)})"


def _split_params(text: str) -> list[str] | None:
    """Top-level comma split of a parameter list (commas inside ``<>`` belong to a type)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "<") - (char == ">")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return None if depth else [p.strip() for p in parts if p.strip()]


def _signature(line: str) -> Signature | None:
    match = _DECLARATION.match(line)
    if match is None or match["ret"].strip() in ("else", "return", "new"):
        return None
    params = _split_params(match["params"])
    if params is None:
        return None
    types, names = [], []
    for param in params:
        found = re.match(r"^(.*?[\w>*&])\s*\b([A-Za-z_]\w*)$", param)
        if found is None or "=" in param or "[" in param:
            return None
        types.append(found[1].strip())
        names.append(found[2])
    return Signature(" ".join(match["ret"].split()), match["name"], tuple(types), tuple(names))


def _declarations(text: str) -> list[tuple[int, Signature]]:
    """Line index and signature of each unindented function definition's first line."""
    return [(i, sig) for i, line in enumerate(text.splitlines())
            if (sig := _signature(line)) is not None]


def _split(text: str) -> tuple[list[str], str] | None:
    """``(include and using lines, the block)``: the file's leading ``/* doc */`` moved right
    above its code (HumanEvalFix puts it above the includes)."""
    lines = text.strip("\n").splitlines()
    comment: list[str] = []
    if lines and lines[0].startswith("/*"):
        end = next((i for i, line in enumerate(lines) if line.rstrip().endswith("*/")), None)
        if end is None:
            return None
        comment, lines = lines[:end + 1], lines[end + 1:]
    imports = [line.strip() for line in lines if _PREPROCESSOR.match(line)]
    code = [line for line in lines if not _PREPROCESSOR.match(line)]
    while code and not code[0].strip():
        code.pop(0)
    if any(line.startswith(("#define", "#if")) for line in imports):
        return None
    return imports, "\n".join([*comment, *code]).rstrip()


def _ident(text: str) -> str:
    return re.sub(r"\W", "_", text)


class CppLanguage(Language):
    name = "cpp"
    source = "humanevalfix_docs_cpp"
    caller_names = ("caller1", "caller2")
    declare_before_use = True

    def __init__(self) -> None:
        # The callers' and spies' text needs a function's signature, where the Language API
        # passes its name (or a renamed Problem) only: parse records each problem's, by its
        # entry name and by its row id (entry names are unique in the source).
        self._signatures: dict[str, Signature] = {}

    def parse(self, row: EditRow) -> Problem | None:
        entry, test = row.meta.get("entry_point"), row.meta.get("test")
        if not isinstance(entry, str) or not isinstance(test, str) or not _MAIN.search(test):
            return None
        if re.search(r"\brand\s*\(", test):
            return None  # rand()'s state is shared by every snippet: its tests would depend on order
        fixed, buggy = _split(row.after), _split(row.before)
        if fixed is None or buggy is None:
            return None
        found = {sig.name: sig for _, sig in _declarations(fixed[1])}
        if (entry not in found or entry not in {s.name for _, s in _declarations(buggy[1])}
                or self._signatures.get(entry, found[entry]) != found[entry]):
            return None  # a second problem of the same name (HumanEvalFix has two `add`s)
        self._signatures[entry] = self._signatures[row.id] = found[entry]
        imports = tuple(dict.fromkeys([*fixed[0], *buggy[0]]))
        if any("/" in line for line in imports):
            return None  # boost/, openssl/: a row must build wherever g++ and its library are
        return Problem(id=row.id, name=entry, instruction=row.instruction, fixed=fixed[1],
                       buggy=buggy[1], imports=imports, names=frozenset(found),
                       test=test.strip("\n"))

    def render(self, imports: Sequence[str], consts: Sequence[str],
               blocks: Sequence[str]) -> str:
        includes = [line for line in imports if line.startswith("#")]
        using = [line for line in imports if not line.startswith("#")]
        head = "\n".join([*includes, *using, *consts])
        return "\n\n".join([head, *blocks] if head else blocks) + "\n"

    def _runner(self, label: str, body: str, forward: str = "") -> str:
        """A test snippet: ``body`` (a problem's test, or checks in a ``main``) in a namespace
        of its own, its preprocessor lines hoisted, its ``main`` run by a static object."""
        hoisted = [line for line in body.splitlines() if line.lstrip().startswith("#")]
        code = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
        code = _MAIN.sub("static int run_test(){", code, count=1)
        closing = code.rstrip().rfind("}")
        code = code[:closing] + "    return 0;\n}" + code[closing + 1:]
        # Numbered by test_program (its place in the program): a row is the same in any process.
        space = f"test_{_ident(label)}_{_SERIAL}"
        preamble = [] if hoisted else ["#undef NDEBUG", "#include<assert.h>"]
        return "\n".join([*preamble, *hoisted,
                          f"namespace {space} {{", *([forward] if forward else []), code,
                          "static const int done = run_test();", f"}}  // namespace {space}",
                          ""])

    def _forward(self, problem: Problem, name: str, target: str, count: str = "") -> str:
        sig = self._signatures[problem.id]
        if not count:
            return f"static {sig.declare(name)} {{ return ::{sig.call(target)}; }}"
        call = (sig.call(target, extra_first="&count") if count == "first"
                else sig.call(target, extra_last="&count"))
        return (f"static {sig.declare(name)} {{\n    int count = 0;\n    auto result = ::{call};\n"
                f"    assert(count >= 1 && \"calls not counted\");\n    return result;\n}}")

    def run_test(self, problem: Problem, name: str) -> str:
        forward = self._forward(problem, problem.name, name) if name != problem.name else ""
        return self._runner(problem.name, problem.test, forward)

    def absent(self, name: str) -> str:
        # A global variable of the name does not compile beside a function of that name.
        return f"[[maybe_unused]] static int {name} = 0;  // {name} must be gone\n"

    def new_name(self, old: str, prefix: str) -> str:
        return f"{prefix}_{old}"

    def callers(self, name: str) -> tuple[str, str]:
        sig = self._signatures[name]
        return (f"{sig.declare('caller1')} {{ return {sig.call(name)}; }}",
                (f"{sig.declare('caller2')} {{\n    auto result = {sig.call(name)};\n"
                 f"    return result;\n}}"))

    def add_calls_param(self, block: str, name: str) -> tuple[str, str] | None:
        lines = block.splitlines()
        found = [(i, sig) for i, sig in _declarations(block) if sig.name == name]
        if len(found) != 1 or re.search(r"\bcalls\b", block):
            return None
        index, sig = found[0]
        lines[index] = sig.declare(name, extra_last="int* calls = nullptr") + "{"
        lines.insert(index + 1, "    if (calls != nullptr) *calls += 1;")
        return "\n".join(lines), "int* calls = nullptr"

    def param_callers(self, name: str) -> tuple[str, str]:
        sig = self._signatures[name]
        return (f"{sig.declare('caller1')} {{ return {sig.call(name)}; }}",
                (f"{sig.declare('caller1', extra_first='int* calls')} "
                 f"{{ return {sig.call(name, extra_last='calls')}; }}"))

    def param_instruction(self, name: str, record: str) -> str:
        return (f"Add a last parameter {record} to {name}: when calls is not nullptr, {name} "
                f"first adds one to *calls. Give caller1 a new first parameter int* calls and "
                f"pass it on as the last argument of its call of {name}.")

    def spy_test(self, problem: Problem, caller: str | None) -> str:
        forward = self._forward(problem, problem.name, caller or problem.name,
                                count="first" if caller else "last")
        return self._runner(f"spy_{problem.name}", problem.test, forward)

    def debug_branch(self, block: str, name: str,
                     imports: frozenset[str]) -> tuple[str, str] | None:
        found = [i for i, sig in _declarations(block) if sig.name == name]
        if len(found) != 1 or not any(_STDIO.match(line) for line in imports):
            return None  # printf needs <stdio.h> (or <cstdio>), which a file may lack
        lines = block.splitlines()
        lines[found[0] + 1:found[0] + 1] = [f"    if ({FLAG}) {{",
                                            f'        printf("{name} called\\n");', "    }"]
        return "\n".join(lines), f"const bool {FLAG} = false;"

    def describe(self, block: str, name: str) -> str | None:
        lines = block.splitlines()
        found = [(i, sig) for i, sig in _declarations(block) if sig.name == name]
        if len(found) != 1:
            return None
        comment = c_comment_above(lines, found[0][0])
        if comment is None:
            return None
        text = "\n".join(lines[comment[0]:comment[1] + 1]).strip()
        doc = textwrap.dedent(text.removeprefix("/*").removesuffix("*/")).strip()
        return f"{found[0][1].declare(name)}: {doc}" if doc else None

    def shorten_doc(self, block: str, name: str) -> tuple[str, str] | None:
        found = [i for i, sig in _declarations(block) if sig.name == name]
        return shorten_c_comment(block.splitlines(), found[0]) if len(found) == 1 else None

    def doc_instruction(self, name: str, text: str) -> str:
        return f"Replace the comment above {name} with the one-line comment /* {text} */."

    def literal(self, value: str | int) -> str:
        if isinstance(value, int):
            return str(value)
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    def constant(self, name: str, literal: str) -> str:
        kind = "string" if literal.startswith('"') else "int"
        return f"const {kind} {name} = {literal};"

    def assert_equal(self, name: str, literal: str) -> str:
        return self._runner(f"value_{name}",
                            f"int main(){{\n    assert ({name} == {literal});\n}}")

    def functions(self, text: str) -> list[str]:
        return [sig.name for _, sig in _declarations(text)]

    def exports(self, names: Sequence[str]) -> tuple[str, bool, str, str]:
        listing = "".join(f'    "{name}",\n' for name in names)
        expected = ", ".join(f'"{name}"' for name in names)
        return (f"const vector<string> FUNCTIONS = {{\n{listing}}};", False,
                ("At the end of the file, add a constant `const vector<string> FUNCTIONS` that "
                 "lists the name of every function of the file, one string per function, in "
                 "the order they are defined."),
                # Doubled parentheses: the braces' commas would split assert's argument.
                self._runner("exports", f"int main(){{\n    assert ((FUNCTIONS == "
                                        f"vector<string>{{{expected}}}));\n}}"))

    def constant_words(self, imports: bool) -> tuple[str, str]:
        return ("global constant", "at the top of the file"
                + (", right after the #include and using lines" if imports else ""))

    def test_program(self, snippets: Sequence[str]) -> str:
        numbered = [snippet.replace(_SERIAL, str(i)) for i, snippet in enumerate(snippets)]
        return "\n".join([*numbered, "int main(){\n    return 0;\n}\n"])


CPP = CppLanguage()
