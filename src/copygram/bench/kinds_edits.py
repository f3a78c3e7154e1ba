"""The edit kinds of ``copygram bench kinds`` (:mod:`copygram.bench.kinds`), by rule: what a
language must provide (:class:`Language`), the problem blocks a file is assembled from
(:class:`Problem`), and :func:`make_edit`, which turns the blocks of one file into a row's before,
after, instruction and test snippets for a kind."""

from __future__ import annotations

import dataclasses
import random
import re
import textwrap
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from copygram.bench.data import EditRow

CODE_KINDS = ("bugfix", "multi_bugfix", "rename", "add_function", "remove_function",
              "add_parameter", "remove_parameter", "remove_branch", "top_level", "docstring")
BEHAVIOUR_KINDS = frozenset(CODE_KINDS) - {"docstring", "remove_parameter", "remove_branch"}
"""Kinds whose ``before`` must fail the row's tests (the edit changes what the code does); the
others change nothing a test can call (a comment, a parameter no caller passes, a branch that
never runs), so a text check judges them beside the tests (:func:`.kinds.changed_lines`)."""
FLAG = "DEBUG"
"""The module constant a ``remove_branch`` row's branch tests (its value false)."""
PREFIXES = ("compute", "find", "get", "calc")
CONSTANTS = ("VERSION", "MAX_ITEMS", "DEFAULT_TIMEOUT", "RETRY_LIMIT", "ENCODING")


@dataclass(frozen=True)
class Problem:
    """One HumanEvalFix problem as a block of an assembled file (its imports apart)."""

    id: str
    name: str
    instruction: str
    fixed: str
    buggy: str
    imports: tuple[str, ...]
    names: frozenset[str]
    test: str


class Language(ABC):
    """What :func:`build_rows` needs of a language (:mod:`.kinds_python`, :mod:`.kinds_js`)."""

    name: str
    source: str
    caller_names: tuple[str, str]
    declare_before_use: bool = False
    """Whether a function must be declared above its first call (C++): callers go below."""

    @abstractmethod
    def parse(self, row: EditRow) -> Problem | None: ...
    @abstractmethod
    def render(self, imports: Sequence[str], consts: Sequence[str],
               blocks: Sequence[str]) -> str: ...
    @abstractmethod
    def run_test(self, problem: Problem, name: str) -> str: ...
    @abstractmethod
    def absent(self, name: str) -> str: ...
    @abstractmethod
    def new_name(self, old: str, prefix: str) -> str: ...
    @abstractmethod
    def callers(self, name: str) -> tuple[str, str]: ...
    @abstractmethod
    def add_calls_param(self, block: str, name: str) -> tuple[str, str] | None: ...
    @abstractmethod
    def param_callers(self, name: str) -> tuple[str, str]: ...
    @abstractmethod
    def param_instruction(self, name: str, record: str) -> str: ...
    @abstractmethod
    def spy_test(self, problem: Problem, caller: str | None) -> str: ...
    @abstractmethod
    def debug_branch(self, block: str, name: str,
                     imports: frozenset[str]) -> tuple[str, str] | None:
        """``(block, flag line)``: ``block`` with a branch on :data:`FLAG` at the start of
        ``name``'s body that prints a debug line, and the line that defines the flag as false
        (``imports``: the file's, where printing needs one); None where it cannot go in."""
    @abstractmethod
    def describe(self, block: str, name: str) -> str | None: ...
    @abstractmethod
    def shorten_doc(self, block: str, name: str) -> tuple[str, str] | None: ...
    @abstractmethod
    def doc_instruction(self, name: str, text: str) -> str: ...
    @abstractmethod
    def literal(self, value: str | int) -> str: ...
    @abstractmethod
    def constant(self, name: str, literal: str) -> str: ...
    @abstractmethod
    def assert_equal(self, name: str, literal: str) -> str: ...
    @abstractmethod
    def functions(self, text: str) -> list[str]: ...
    @abstractmethod
    def exports(self, names: Sequence[str]) -> tuple[str, bool, str, str]: ...

    def remove_param_instruction(self, name: str) -> str:
        """The ``remove_parameter`` instruction: the parameter ``calls`` :meth:`add_calls_param`
        adds, taken out of ``name`` and of the first caller, which passes it on."""
        return (f"Remove the parameter calls from {name}, with the code in {name} that uses it, "
                f"and remove it from {self.caller_names[0]} too, which only passes it on to "
                f"{name}.")

    def test_program(self, snippets: Sequence[str]) -> str:
        """A row's whole test program from its snippets (:meth:`run_test`, :meth:`absent`, ...),
        run after the candidate file. A script language runs them in order as they are; a
        compiled one wraps them (a ``main`` that calls each)."""
        return "\n".join(snippets)

    def constant_words(self, imports: bool) -> tuple[str, str]:
        """How a ``top_level`` instruction names a module constant, and where it says a new one
        goes (a language whose constants live elsewhere, Java's in its class, says so)."""
        return ("module-level constant",
                "at the top of the file" + (", right after the imports" if imports else ""))


def first_sentence(doc: str) -> str:
    """The docstring's first sentence: its lines up to a blank line or an example, joined."""
    kept: list[str] = []
    for line in doc.strip().splitlines():
        text = line.strip()
        if not text or text.startswith(">>>") or text.lower().startswith(("example", "for ex")):
            break
        kept.append(text)
    sentence = " ".join(kept)
    match = re.match(r"(.+?[.!?])(\s|$)", sentence)
    sentence = match.group(1) if match else sentence
    return sentence if len(sentence) <= 120 else sentence[:117].rsplit(" ", 1)[0] + "..."


def c_comment_above(lines: Sequence[str], index: int) -> tuple[int, int] | None:
    """``(first, last)`` line indexes of the ``/* ... */`` comment right above line ``index``
    (JavaScript, C++)."""
    last = index - 1
    if last < 0 or not lines[last].rstrip().endswith("*/"):
        return None
    for first in range(last, -1, -1):
        if lines[first].lstrip().startswith("/*"):
            return first, last
        if "*/" in lines[first] and first != last:
            return None
    return None


def shorten_c_comment(lines: list[str], index: int) -> tuple[str, str] | None:
    """The ``docstring`` kind for a ``/* ... */`` comment right above line ``index``: the block
    with that comment cut to its first sentence on one line, and the sentence."""
    comment = c_comment_above(lines, index)
    if comment is None:
        return None
    raw = "\n".join(lines[comment[0]:comment[1] + 1]).strip()
    text = first_sentence(textwrap.dedent(raw.removeprefix("/*").removesuffix("*/")))
    if not text or "*/" in text:
        return None
    lines[comment[0]:comment[1] + 1] = [f"/* {text} */"]
    return "\n".join(lines), text


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


@dataclass
class Edit:
    """A code row before rendering: blocks and module constants on each side, and its tests."""

    before: list[str]
    after: list[str]
    instruction: str
    tests: list[str]
    targets: list[str]
    consts_before: list[str] = field(default_factory=list)
    consts_after: list[str] = field(default_factory=list)


def _exclusive(problem: Problem, chosen: Sequence[Problem]) -> bool:
    """Whether only ``problem`` mentions its name (no neighbour calls it, no attribute shares it)."""
    word = _word(problem.name)
    return (not re.search(rf"\.{re.escape(problem.name)}(?![\w$])", problem.fixed)
            and not any(p is not problem and (problem.name in p.names or word.search(p.fixed)
                                              or word.search(p.buggy) or word.search(p.test))
                        for p in chosen))


def _plain(lang: Language, chosen: Iterable[Problem]) -> list[str]:
    return [lang.run_test(p, p.name) for p in chosen]


def _fixed(chosen: Sequence[Problem]) -> list[str]:
    return [p.fixed for p in chosen]


def _bugfix(lang: Language, chosen: list[Problem], rng: random.Random, count: int) -> Edit | None:
    buggy = [p for p in chosen if p.buggy != p.fixed]
    if len(buggy) < count:
        return None
    targets = sorted(rng.sample(buggy, count), key=chosen.index)
    names = [p.name for p in targets]
    instruction = (targets[0].instruction if count == 1 else
                   f"Fix bugs in {', '.join(names[:-1])} and {names[-1]}.")
    return Edit([p.buggy if p in targets else p.fixed for p in chosen], _fixed(chosen),
                instruction, _plain(lang, chosen), names)


def _rename(lang: Language, chosen: list[Problem], rng: random.Random) -> Edit | None:
    target = rng.choice(chosen)
    prefix = rng.choice([p for p in PREFIXES if not target.name.lower().startswith(p)])
    old, new = target.name, lang.new_name(target.name, prefix)
    everything = "\n".join(p.fixed + "\n" + p.test for p in chosen)
    if _word(new).search(everything) or not _exclusive(target, chosen):
        return None
    before = _fixed(chosen)
    first, last = lang.callers(old)
    # The first caller goes between two blocks; in a language that must declare a function
    # before its use (C++), after the target's block.
    low = chosen.index(target) + 1 if lang.declare_before_use else 1
    before.insert(rng.randrange(low, len(chosen)) if len(chosen) > low else len(chosen), first)
    before.append(last)
    after = [_word(old).sub(new, block) for block in before]
    renamed = dataclasses.replace(target, name=new, test=_word(old).sub(new, target.test))
    tests = [lang.run_test(renamed if p is target else p, new if p is target else p.name)
             for p in chosen]
    tests += [lang.run_test(renamed, caller) for caller in lang.caller_names]
    return Edit(before, after, f"Rename the function {old} to {new} and update every call of it.",
                [*tests, lang.absent(old)], [old, new])


def _add_or_remove(lang: Language, chosen: list[Problem], rng: random.Random,
                   add: bool) -> Edit | None:
    target = rng.choice(chosen)
    description = lang.describe(target.fixed, target.name)
    if (len(chosen) < 2 or target.names != {target.name} or not _exclusive(target, chosen)
            or not description):
        return None
    rest = [p for p in chosen if p is not target]
    if add:
        return Edit(_fixed(rest), _fixed([*rest, target]), f"Add a function {description}",
                    _plain(lang, [*rest, target]), [target.name])
    return Edit(_fixed(chosen), _fixed(rest), f"Remove the function {target.name}; nothing "
                "calls it.", [*_plain(lang, rest), lang.absent(target.name)], [target.name])


def _parameter(lang: Language, chosen: list[Problem], rng: random.Random,
               add: bool) -> Edit | None:
    """``add_parameter``: a last parameter ``calls`` that records the call, passed on by a
    caller (tested through a spy); ``remove_parameter`` the other way round: the parameter,
    its use and the caller's, taken out (judged by the tests, the caller's too, and the text
    check)."""
    target = rng.choice(chosen)
    changed = lang.add_calls_param(target.fixed, target.name)
    if changed is None or not _exclusive(target, chosen):
        return None
    caller_before, caller_after = lang.param_callers(target.name)
    plain = [*_fixed(chosen), caller_before]
    with_param = [*(changed[0] if p is target else p.fixed for p in chosen), caller_after]
    if add:
        tests = [*_plain(lang, chosen), lang.spy_test(target, None),
                 lang.spy_test(target, lang.caller_names[0])]
        return Edit(plain, with_param, lang.param_instruction(target.name, changed[1]), tests,
                    [target.name])
    tests = [*_plain(lang, chosen), lang.run_test(target, lang.caller_names[0])]
    return Edit(with_param, plain, lang.remove_param_instruction(target.name), tests,
                [target.name])


def _remove_branch(lang: Language, chosen: list[Problem], rng: random.Random) -> Edit | None:
    """A debug branch at the start of one function taken out; the flag it tests stays."""
    target = rng.choice(chosen)
    if _word(FLAG).search("\n".join(p.fixed + "\n" + p.test for p in chosen)):
        return None
    changed = lang.debug_branch(target.fixed, target.name,
                                frozenset(line for p in chosen for line in p.imports))
    if changed is None:
        return None
    block, flag = changed
    instruction = (f"Remove the debug branch at the start of {target.name} (the if statement on "
                   f"{FLAG} and the print in it); keep the {FLAG} constant and the rest of "
                   f"{target.name} as they are.")
    return Edit([block if p is target else p.fixed for p in chosen], _fixed(chosen), instruction,
                _plain(lang, chosen), [target.name], [flag], [flag])


def _value(name: str, rng: random.Random) -> str | int:
    if name == "VERSION":
        return f"{rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}"
    if name == "ENCODING":
        return rng.choice(("utf-8", "latin-1", "ascii", "utf-16"))
    return rng.randint(2, 500)


def _top_level(lang: Language, chosen: list[Problem], rng: random.Random,
               imports: bool) -> Edit | None:
    blocks, tests = _fixed(chosen), _plain(lang, chosen)
    form = rng.choice(("add_constant", "change_constant", "exports"))
    if form == "exports":
        names = lang.functions(lang.render((), (), blocks))
        text, at_top, instruction, test = lang.exports(names)
        return Edit(blocks, blocks if at_top else [*blocks, text], instruction, [*tests, test],
                    ["exports"], [], [text] if at_top else [])
    name = rng.choice(CONSTANTS)
    if _word(name).search("\n".join(blocks + tests)):
        return None
    old, new = _value(name, rng), _value(name, rng)
    if old == new:
        return None
    line = lang.constant(name, lang.literal(new))
    noun, where = lang.constant_words(imports)
    instruction = (f"Add the {noun} `{line}` {where}." if form == "add_constant"
                   else f"Change the value of the {noun} {name} from "
                        f"{lang.literal(old)} to {lang.literal(new)}.")
    before = [] if form == "add_constant" else [lang.constant(name, lang.literal(old))]
    return Edit(blocks, blocks, instruction, [*tests, lang.assert_equal(name, lang.literal(new))],
                [name], before, [line])


def _docstring(lang: Language, chosen: list[Problem], rng: random.Random) -> Edit | None:
    target = rng.choice(chosen)
    changed = lang.shorten_doc(target.fixed, target.name)
    if changed is None:
        return None
    after = [changed[0] if p is target else p.fixed for p in chosen]
    return Edit(_fixed(chosen), after, lang.doc_instruction(target.name, changed[1]),
                _plain(lang, chosen), [target.name])


def make_edit(kind: str, lang: Language, chosen: list[Problem], rng: random.Random) -> Edit | None:
    if kind in ("bugfix", "multi_bugfix"):
        return _bugfix(lang, chosen, rng, 1 if kind == "bugfix" else rng.choice((2, 3)))
    if kind in ("add_function", "remove_function"):
        return _add_or_remove(lang, chosen, rng, kind == "add_function")
    if kind == "top_level":
        return _top_level(lang, chosen, rng, any(p.imports for p in chosen))
    if kind in ("add_parameter", "remove_parameter"):
        return _parameter(lang, chosen, rng, kind == "add_parameter")
    builders: dict[str, Callable[[Language, list[Problem], random.Random], Edit | None]] = {
        "rename": _rename, "docstring": _docstring, "remove_branch": _remove_branch}
    return builders[kind](lang, chosen, rng)
