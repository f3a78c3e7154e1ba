"""Java for ``copygram bench kinds`` (:mod:`copygram.bench.kinds`): HumanEvalFix problems
(``import ...;`` then ``class Solution {`` with a Javadoc'd method), the rule-made edits of one
method, and the test snippets of a row's program.

A problem's block is the body of its ``class Solution`` (its methods at their 4-space indent,
Javadoc above, helpers included); a file is the imports, then one ``class Solution`` holding the
module constants as ``public static final`` fields at its top and every problem's block.

The program runs after the candidate in the same ``Main.java`` (:mod:`copygram.bench.testrun`):
:meth:`JavaLanguage.test_program` makes each snippet the body of a nested ``static class CheckN``
and calls each one's ``main`` in turn. A problem's own test is the body of its ``public class
Main``, its calls ``s.name(`` turned into the name under test (``s.caller1(``).

A caller needs the target's signature, which ``callers(name)`` is not given: its blocks are
placeholders (``//@caller1 name``) that :meth:`JavaLanguage.render` writes out from the target's
declaration among the file's blocks (a file never declares a name twice).

``add_parameter``: Java has no default arguments, so the method gets a last parameter
``List<List<Object>> calls`` and keeps its old signature as an overload that passes ``null``;
the plain tests call the overload, the spy tests call the new signature directly and through
``caller1(calls, ...)``. ``top_level`` exports: a ``public static final String[] METHODS``
field listing every method of ``Solution`` in order.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from copygram.bench.data import EditRow
from copygram.bench.kinds_edits import FLAG, Language, Problem, first_sentence
from copygram.bench.kinds_java_scan import Member, members

_FILE = re.compile(r"^((?:[ \t]*(?:import [\w.*]+;)?[ \t]*\n)*)class Solution \{\n(.*)\n\}\s*$",
                   re.DOTALL)
_MAIN = re.compile(r"^public class Main \{\n(.*)\n\}\s*$", re.DOTALL)
_SIGNATURE = re.compile(
    r"^(?P<mods>(?:(?:public|private|protected|static|final|synchronized)\s+)*)"
    r"(?:(?P<tparams><[^()]*>)\s+)?(?P<ret>[\w$.<>\[\], ?]+?)\s+(?P<name>[\w$]+)\s*"
    r"\((?P<params>[^()]*)\)\s*(?:throws\s+(?P<throws>[\w$., ]+?))?\s*$")
_PARAM = re.compile(r"^(?P<type>[\w$.<>\[\], ?]+?)\s+(?P<name>[\w$]+)$")
_MARK = re.compile(r"^//@(caller[12])(\+calls)? ([\w$]+)$")
_CALLS = "List<List<Object>> calls"
_RESERVED = ("calls", "spyLog", "spyResult", "spied")


@dataclass(frozen=True)
class Signature:
    mods: str
    tparams: str
    ret: str
    name: str
    params: tuple[tuple[str, str], ...]
    throws: str

    def declare(self, name: str, params: Sequence[str], mods: str = "public ") -> str:
        tparams = f"{self.tparams} " if self.tparams else ""
        throws = f" throws {self.throws}" if self.throws else ""
        return f"{mods}{tparams}{self.ret} {name}({', '.join(params)}){throws}"

    @property
    def names(self) -> list[str]:
        return [name for _, name in self.params]

    @property
    def typed(self) -> list[str]:
        return [f"{kind} {name}" for kind, name in self.params]

    @property
    def args(self) -> str:
        return ", ".join(self.names)


def split_file(text: str) -> tuple[list[str], str] | None:
    """``(import lines, the body of class Solution)`` of a file, or None for another shape."""
    match = _FILE.match(text)
    if match is None or members(match.group(2)) is None:
        return None
    imports = [line.strip() for line in match.group(1).splitlines() if line.strip()]
    lines = match.group(2).splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return imports, "\n".join(lines)


def signature(header: str) -> Signature | None:
    """A plain method declaration's parts (no annotations, varargs or final parameters)."""
    match = _SIGNATURE.match(header.removesuffix("{").strip())
    if match is None:
        return None
    params: list[tuple[str, str]] = []
    text, depth, part = match.group("params"), 0, ""
    if "..." in text or "@" in text or re.search(r"\bfinal\b", text):
        return None
    for char in text + ",":
        depth += (char == "<") - (char == ">")
        if char == "," and depth == 0:
            param = _PARAM.match(part.strip())
            if param is None:
                if part.strip() or text.strip():
                    return None
            else:
                params.append((" ".join(param.group("type").split()), param.group("name")))
            part = ""
        else:
            part += char
    return Signature(match.group("mods"), match.group("tparams") or "", match.group("ret"),
                     match.group("name"), tuple(params), match.group("throws") or "")


def _method(block: str, name: str) -> Member | None:
    """The only method ``name`` of a block, or None (absent, overloaded)."""
    found = [m for m in members(block) or [] if m.method and m.name == name]
    return found[0] if len(found) == 1 else None


def _plain(block: str, name: str) -> tuple[Member, Signature] | None:
    """The only method ``name`` of a block and its signature, where it has a plain one."""
    member = _method(block, name)
    sig = signature(member.header) if member else None
    return (member, sig) if member and sig else None


def _doc(lines: Sequence[str], member: Member) -> str | None:
    """The text of the Javadoc right above ``member``'s declaration, or None."""
    if member.first == member.start or not lines[member.start - 1].strip().endswith("*/"):
        return None
    raw = "\n".join(lines[member.first:member.start]).strip()
    if not raw.startswith("/**") or raw.count("*/") != 1:
        return None
    head, _, rest = raw[3:-2].partition("\n")
    body = textwrap.dedent(rest).splitlines()
    if all(line.startswith("*") for line in body if line.strip()):
        body = [re.sub(r"^\* ?", "", line) for line in body]
    return "\n".join([head.strip(), *body]).strip() or None


def _indent(text: str, width: int) -> str:
    return "\n".join(" " * width + line if line.strip() else "" for line in text.splitlines())


def _caller(sig: Signature, which: str, calls: bool, target: str) -> str:
    args = sig.args + (", calls" if calls else "")
    head = sig.declare(which, [_CALLS, *sig.typed] if calls else sig.typed)
    if sig.ret == "void":
        return f"    {head} {{\n        {target}({args});\n    }}"
    if which == "caller1":
        return f"    {head} {{\n        return {target}({args});\n    }}"
    local = "value" if "result" in sig.names else "result"
    return (f"    {head} {{\n        {sig.ret} {local} = {target}({args});\n"
            f"        return {local};\n    }}")


class JavaLanguage(Language):
    name = "java"
    source = "humanevalfix_docs_java"
    caller_names = ("caller1", "caller2")

    def parse(self, row: EditRow) -> Problem | None:
        entry, test = row.meta.get("entry_point"), row.meta.get("test")
        if not isinstance(entry, str) or not isinstance(test, str):
            return None
        fixed, buggy, main = split_file(row.after), split_file(row.before), _MAIN.match(test)
        if fixed is None or buggy is None or main is None:
            return None
        body = main.group(1)
        if (not re.search(rf"(?<![\w$.])s\.{re.escape(entry)}\(", body)
                or not any(m.method and m.name == "main" for m in members(body) or [])
                or _method(fixed[1], entry) is None or _method(buggy[1], entry) is None):
            return None
        names = {m.name for side in (fixed, buggy) for m in members(side[1]) or []}
        return Problem(id=row.id, name=entry, instruction=row.instruction, fixed=fixed[1],
                       buggy=buggy[1], imports=tuple(dict.fromkeys(fixed[0] + buggy[0])),
                       names=frozenset(names), test=body)

    def render(self, imports: Sequence[str], consts: Sequence[str],
               blocks: Sequence[str]) -> str:
        parts = ["\n".join(_indent(const, 4) for const in consts)] if consts else []
        parts += [self._expand(block, blocks) for block in blocks]
        head = "".join(f"{line}\n" for line in imports) + ("\n" if imports else "")
        return head + "class Solution {\n" + "\n\n".join(parts) + "\n}\n"

    def _expand(self, block: str, blocks: Sequence[str]) -> str:
        """A block as it is, or the caller a placeholder stands for."""
        mark = _MARK.match(block)
        if mark is None:
            return block.strip("\n")
        which, calls, target = mark.groups()
        for other in blocks:
            for member in [] if _MARK.match(other) else members(other) or []:
                sig = signature(member.header) if member.method else None
                if member.name == target and sig and sig.names[-1:] != ["calls"]:
                    return _caller(sig, which, bool(calls), target)
        raise ValueError(f"{block}: no plain method {target} among the blocks")

    def run_test(self, problem: Problem, name: str) -> str:
        return re.sub(rf"(?<![\w$.])s\.{re.escape(problem.name)}\(", f"s.{name}(", problem.test)

    def test_program(self, snippets: Sequence[str]) -> str:
        checks = [f"    static class Check{i} {{\n{_indent(snippet.strip(chr(10)), 4)}\n    }}"
                  for i, snippet in enumerate(snippets, 1)]
        calls = "".join(f"        Check{i}.main(args);\n" for i in range(1, len(snippets) + 1))
        return ("public class Main {\n" + "\n\n".join(checks) + "\n\n    public static void "
                f"main(String[] args) throws Exception {{\n{calls}    }}\n}}\n")

    def absent(self, name: str) -> str:
        return ("    public static void main(String[] args) {\n"
                "        for (java.lang.reflect.Method method : "
                "Solution.class.getDeclaredMethods()) {\n"
                f'            if (method.getName().equals("{name}")) {{\n'
                f'                throw new AssertionError("{name} is still defined");\n'
                "            }\n        }\n    }\n")

    def new_name(self, old: str, prefix: str) -> str:
        return prefix + old[:1].upper() + old[1:]

    def callers(self, name: str) -> tuple[str, str]:
        return f"//@caller1 {name}", f"//@caller2 {name}"

    def add_calls_param(self, block: str, name: str) -> tuple[str, str] | None:
        found = _plain(block, name)
        if found is None or not found[1].params or any(
                re.search(rf"(?<![\w$]){word}(?![\w$])", block) for word in _RESERVED):
            return None
        member, sig = found
        single = sig.params[0][0] if len(sig.params) == 1 else ""
        lines = block.splitlines()
        # A lone object array would be spread by Arrays.asList; the declaration is one line.
        if (single.endswith("[]") and not re.match(r"^(int|long|double|float|char|byte|short|"
                                                   r"boolean)\[\]$", single)
                or member.brace != member.start or not lines[member.start].rstrip().endswith("{")):
            return None
        indent = lines[member.start][:len(lines[member.start]) - len(lines[member.start].lstrip())]
        inner = indent + "    "
        record, call = f"Arrays.asList({sig.args})", f"{name}({sig.args}, null);"
        overload = [f"{indent}{sig.declare(name, sig.typed, sig.mods)} {{",
                    f"{indent}    {call if sig.ret == 'void' else 'return ' + call}",
                    f"{indent}}}"]
        lines[member.last + 1:member.last + 1] = ["", *overload]
        lines[member.start:member.start + 1] = [
            f"{indent}{sig.declare(name, [*sig.typed, _CALLS], sig.mods)} {{",
            f"{inner}if (calls != null) {{", f"{inner}    calls.add({record});", f"{inner}}}"]
        return "\n".join(lines), record

    def param_callers(self, name: str) -> tuple[str, str]:
        return f"//@caller1 {name}", f"//@caller1+calls {name}"

    def param_instruction(self, name: str, record: str) -> str:
        return (f"Add a last parameter {_CALLS} to {name}: when calls is not null, {name} first "
                f"adds the list {record} of its arguments to it. Keep an overload of {name} "
                f"with its old parameters that passes null for calls. Give caller1 a new first "
                f"parameter {_CALLS} and pass it on as the last argument of its call of {name}.")

    def spy_test(self, problem: Problem, caller: str | None) -> str:
        found = _plain(problem.fixed, problem.name)
        if found is None:
            raise ValueError(f"{problem.id}: no plain method {problem.name}")
        sig, args = found[1], found[1].args
        call = (f"new Solution().{caller}(spyLog, {args})" if caller
                else f"new Solution().{problem.name}({args}, spyLog)")
        run = (f"{call};" if sig.ret == "void" else f"{sig.ret} spyResult = {call};")
        spied = (f"    {sig.declare('spied', sig.typed, 'static ')} {{\n"
                 f"        List<List<Object>> spyLog = new ArrayList<>();\n        {run}\n"
                 f"        if (spyLog.isEmpty() || !spyLog.get(0).equals("
                 f"Arrays.asList(new Object[] {{{args}}}))) {{\n"
                 f'            throw new AssertionError("calls not recorded: " + spyLog);\n'
                 f"        }}\n" + ("" if sig.ret == "void" else "        return spyResult;\n")
                 + "    }\n\n")
        test = re.sub(rf"(?<![\w$.])s\.{re.escape(problem.name)}\(", "spied(", problem.test)
        return spied + test

    def remove_param_instruction(self, name: str) -> str:
        return (f"Remove the parameter calls from {name}, with the code in {name} that uses it "
                f"and the overload of {name} that passes null for it, and remove it from caller1 "
                f"too, which only passes it on to {name}.")

    def debug_branch(self, block: str, name: str,
                     imports: frozenset[str]) -> tuple[str, str] | None:
        found, lines = _method(block, name), block.splitlines()
        if found is None or found.brace != found.start or not lines[found.start].rstrip().endswith(
                "{"):
            return None
        start = lines[found.start]
        inner = start[:len(start) - len(start.lstrip())] + "    "
        lines[found.start + 1:found.start + 1] = [
            f"{inner}if ({FLAG}) {{", f'{inner}    System.out.println("{name} called");',
            f"{inner}}}"]
        return "\n".join(lines), f"public static final boolean {FLAG} = false;"

    def describe(self, block: str, name: str) -> str | None:
        found = _plain(block, name)
        doc = _doc(block.splitlines(), found[0]) if found else None
        if found is None or doc is None:
            return None
        return f"{found[1].declare(name, found[1].typed, found[1].mods)}: {doc}"

    def shorten_doc(self, block: str, name: str) -> tuple[str, str] | None:
        found, lines = _method(block, name), block.splitlines()
        doc = _doc(lines, found) if found else None
        text = first_sentence(doc) if doc else ""
        if found is None or not text or "*/" in text:
            return None
        start = lines[found.start]
        lines[found.first:found.start] = [
            f"{start[:len(start) - len(start.lstrip())]}/** {text} */"]
        return "\n".join(lines), text

    def doc_instruction(self, name: str, text: str) -> str:
        return f"Replace the Javadoc comment of {name} with the one-line comment /** {text} */."

    def constant_words(self, imports: bool) -> tuple[str, str]:
        return "constant", "at the top of class Solution, before its first method"

    def literal(self, value: str | int) -> str:
        return json.dumps(value)

    def constant(self, name: str, literal: str) -> str:
        kind = "String" if literal.startswith('"') else "int"
        return f"public static final {kind} {name} = {literal};"

    def assert_equal(self, name: str, literal: str) -> str:
        return ("    public static void main(String[] args) {\n"
                f"        if (!java.util.Objects.equals(Solution.{name}, {literal})) {{\n"
                f'            throw new AssertionError("{name}: " + Solution.{name});\n'
                "        }\n    }\n")

    def functions(self, text: str) -> list[str]:
        split = split_file(text)
        found = members(split[1]) if split else None
        return list(dict.fromkeys(m.name for m in found or [] if m.method))

    def exports(self, names: Sequence[str]) -> tuple[str, bool, str, str]:
        listing = "".join(f"    {json.dumps(name)},\n" for name in names)
        expected = ", ".join(json.dumps(name) for name in names)
        return (f"public static final String[] METHODS = {{\n{listing}}};", True,
                ("At the top of class Solution, add a field public static final String[] "
                 "METHODS that lists the name of every method of the class, as strings, in the "
                 "order they are defined."),
                ("    public static void main(String[] args) {\n"
                 f"        String[] expected = {{{expected}}};\n"
                 "        if (!java.util.Arrays.equals(Solution.METHODS, expected)) {\n"
                 "            throw new AssertionError(\"METHODS: \" + "
                 "java.util.Arrays.toString(Solution.METHODS));\n        }\n    }\n"))


JAVA = JavaLanguage()
