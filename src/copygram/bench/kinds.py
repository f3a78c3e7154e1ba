"""``copygram bench kinds``: edit rows of many kinds and sizes, judged by tests that see the whole
file (issue 40, part 1).

``copygram bench kinds --data SRC --out DIR [--seed N] [--languages python,js,cpp,java,prose]``
reads the HumanEvalFix rows (``humanevalfix_docs_{python,js,cpp,java}``) and the IteraTeR
paragraphs (``iterater_human_doc_sentlines``) of any split in ``SRC`` and writes a
``kinds_<language>`` ``.dev.jsonl`` file per language to ``DIR``, in the rows' own schema (each
language's file shape and test program: :mod:`.kinds_python`, :mod:`.kinds_js`, :mod:`.kinds_cpp`,
:mod:`.kinds_java`). A code row's file is *assembled* from several problems (fixed solutions,
docstrings included) until it reaches its size bucket (:data:`SIZES`), and its ``meta["test_program"]`` runs **every**
assembled problem's tests after the edit, so that damage to any neighbour fails the row. Kinds
(:data:`CODE_KINDS`, by rule, never by hand): ``bugfix`` (one problem buggy), ``multi_bugfix``
(2-3), ``rename`` (one function and both of the callers the builder adds; the old name must be
gone), ``add_function`` / ``remove_function`` (a whole problem), ``add_parameter`` (a last
parameter ``calls`` that records the call (C++: counts it; Java: with an overload keeping the old
signature), passed on by a caller; tested through a spy), ``top_level`` (add or change a module
constant, or list every function in ``__all__`` / ``module.exports`` / a ``FUNCTIONS`` or
``METHODS`` constant), ``docstring`` (a docstring cut to its first sentence),
``remove_parameter`` (``add_parameter`` the other way round: the parameter, its use and the
caller's taken out), ``remove_branch`` (a debug branch on a false ``DEBUG`` constant at the start
of one function taken out; the constant stays), and ``prose`` (one paragraph of a concatenated
IteraTeR text revised, the paragraph named by a quote of its first words; no tests) and
``prose_counted`` (the same, the paragraph named by its count: "the third paragraph",
"paragraph 14") and ``prose_part`` (the first or last paragraph, named "the introduction" or
"the conclusion"). ``meta`` holds ``kind``, ``size``,
``language``, ``lines``, ``source_ids``, ``targets`` and the test program.

A ``docstring``, ``remove_parameter`` or ``remove_branch`` row changes nothing a test can call
(a comment, a parameter no test passes, a branch that never runs), so its ``meta["text_check"]``
(:func:`changed_lines`) also asks for the lines the edit writes and the absence of those it
takes out (:func:`copygram.bench.testrun.text_check`): the file left as it was fails it.

While building, every code row's reference ``after`` must pass its program and its ``before``
must fail it (run by
:func:`copygram.bench.testrun.run_tests`); a row that does not hold is dropped and counted, and its
slot drawn again. Rows are deterministic for a seed (each slot draws from its own seeded RNG).
``--indent tab|2|4`` lays every code row out in that unit (the sources indent by four spaces,
JavaScript and C++ by their own): files as people indent them, with the self-check run on them.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from copygram.bench.data import SUFFIX, EditRow, data_dir, read_edit_rows
from copygram.bench.kinds_edits import (
    BEHAVIOUR_KINDS,
    CODE_KINDS,
    Language,
    Problem,
    make_edit,
)
from copygram.bench.testrun import TEXT_CHECK_KEY, missing_toolchain
from copygram.errors import ConfigError
from copygram.language.indent_style import TAB, indent_unit, relaid_text
from copygram.language.lines import count_lines, split_lines
from copygram.language.passages import ORDINALS

PROSE_KINDS: Mapping[str, str] = MappingProxyType(
    {"prose": "quote", "prose_counted": "count", "prose_part": "part"})
"""The prose kinds, each with how its instruction names the paragraph to revise."""
KINDS = (*CODE_KINDS, *PROSE_KINDS)
SIZES: dict[str, tuple[int, int, int, int]] = {
    "small": (1, 50, 18, 42), "medium": (51, 300, 70, 270), "large": (301, 1500, 330, 1350)}
"""bucket -> (fewest lines, most lines, and the range a row's target length is drawn from)."""
LANGUAGES = ("python", "js", "cpp", "java", "prose")
PROSE_SOURCE = "iterater_human_doc_sentlines"
ATTEMPTS = 16


def languages() -> dict[str, Language]:
    from copygram.bench.kinds_cpp import CPP
    from copygram.bench.kinds_java import JAVA
    from copygram.bench.kinds_js import JS
    from copygram.bench.kinds_python import PYTHON

    return {"python": PYTHON, "js": JS, "cpp": CPP, "java": JAVA}


def assemble(items: Sequence[str], rng: random.Random, span: tuple[int, int],
             collide: Callable[[int, set[str]], frozenset[str]] | None = None) -> list[int]:
    """Indexes of ``items`` (texts), drawn until their lines reach a length drawn from ``span``
    (fewest, most), two blank lines apart; ``collide(index, taken)``: the names an item defines,
    and an item whose names are taken is passed over."""
    low, high = span
    goal, order = rng.randint(low, high), list(range(len(items)))
    rng.shuffle(order)
    chosen: list[int] = []
    taken: set[str] = set()
    total = 2
    for index in order:
        lines = count_lines(items[index]) + 2
        names = collide(index, taken) if collide else frozenset()
        if total + lines > high or names & taken:
            continue
        chosen.append(index)
        taken |= names
        total += lines
        if total >= goal:
            break
    return chosen


def _code_row(lang: Language, problems: Sequence[Problem], kind: str, size: str,
              rng: random.Random) -> dict[str, object] | None:
    picked = assemble([p.fixed for p in problems], rng, SIZES[size][2:],
                      lambda i, _: problems[i].names)
    chosen = [problems[i] for i in picked]
    if not chosen:
        return None
    edit = make_edit(kind, lang, chosen, rng)
    if edit is None or set(lang.caller_names) & {n for p in chosen for n in p.names}:
        return None
    imports = list(dict.fromkeys(line for p in chosen for line in p.imports))
    before = lang.render(imports, edit.consts_before, edit.before)
    after = lang.render(imports, edit.consts_after, edit.after)
    row: dict[str, object] = {
        "lang": lang.name, "source": lang.source, "before": before, "after": after,
        "instruction": edit.instruction, "ids": [p.id for p in chosen], "targets": edit.targets,
        "test_program": lang.test_program(edit.tests)}
    if kind not in BEHAVIOUR_KINDS:
        row[TEXT_CHECK_KEY] = changed_lines(before, after)
    return row


def changed_lines(before: str, after: str) -> dict[str, list[str]]:
    """The text check (:data:`~copygram.bench.testrun.TEXT_CHECK_KEY`) of an edit no test can
    see: the non-blank lines ``after`` has and ``before`` lacks (``present``) and those
    ``before`` has and ``after`` lacks (``absent``), indentation stripped, each once, in file
    order; lines that differ in whitespace only are the same line, as the check reads them."""
    old = [line.strip() for line in before.splitlines()]
    new = [line.strip() for line in after.splitlines()]
    had, has = ({"".join(line.split()) for line in side} for side in (old, new))
    return {"present": list(dict.fromkeys(line for line in new
                                          if line and "".join(line.split()) not in had)),
            "absent": list(dict.fromkeys(line for line in old
                                         if line and "".join(line.split()) not in has))}


def _prose_row(rows: Sequence[EditRow], size: str, rng: random.Random,
               named: str = "quote") -> dict[str, object] | None:
    """A ``prose`` row whose place is ``named`` by a quote of its first words, by its count
    (``"count"``) or as the introduction or the conclusion (``"part"``: the first or the last
    paragraph)."""
    usable = [r for r in rows if r.before.strip() and r.after.strip() != r.before.strip()]
    chosen = [usable[i] for i in assemble([r.before.strip() for r in usable], rng,
                                          SIZES[size][2:])]
    if not chosen:
        return None
    if named == "part":
        if len(chosen) < 3:  # a text of one or two paragraphs has no introduction of its own
            return None
        index = rng.choice([0, len(chosen) - 1])
        target = chosen[index]
        place = "the introduction" if index == 0 else "the conclusion"
    else:
        target = rng.choice(chosen)
        index = chosen.index(target)
        if named == "count":
            place = (f"the {ORDINALS[index]} paragraph" if index < len(ORDINALS)
                     else "the last paragraph" if index == len(chosen) - 1
                     else f"paragraph {index + 1}")
        else:
            prefix = " ".join(target.before.split()[:8])
            if sum(r.before.strip().startswith(prefix) for r in chosen) != 1:
                return None
            place = f'the paragraph that starts with "{prefix}"'
    instruction = (target.instruction.replace("this text", place, 1)
                   if "this text" in target.instruction
                   else f"In {place}: {target.instruction}")
    return {"lang": target.lang or "en", "source": PROSE_SOURCE,
            "before": "\n\n".join(r.before.strip() for r in chosen) + "\n",
            "after": "\n\n".join((r.after if r is target else r.before).strip()
                                 for r in chosen) + "\n",
            "instruction": instruction + " Leave the other paragraphs as they are.",
            "ids": [r.id for r in chosen], "targets": [target.id]}


INDENTS = MappingProxyType({"tab": TAB, "2": "  ", "4": "    "})
"""``--indent``'s choices: the units a builder may lay its code rows out in."""

SLOW_SHARE = 3
"""The self-check drops a row whose tests, run on its ``after``, take more than a third of the
timeout."""


def verdict(row: dict[str, object], kind: str, timeout_s: float) -> str | None:
    """Why ``row`` does not hold (its after fails, or its before passes where it must not)."""
    from copygram.bench.testrun import run_tests

    outcome = run_tests(row, str(row["after"]), timeout_s=timeout_s)
    if not outcome.passed:
        return f"after {outcome.status}"
    # A row whose tests take most of the timeout here times out on a busier machine (the bench
    # runs them beside a model): it would judge the machine, not the edit.
    if outcome.seconds > timeout_s / SLOW_SHARE:
        return "slow tests"
    # Every code kind's before fails: a behaviour kind's tests, a documentation edit's text
    # check (changed_lines).
    if run_tests(row, str(row["before"]), timeout_s=timeout_s).passed:
        return "before passes"
    return None


def build_rows(sources: Mapping[str, Sequence[EditRow]], *, seed: int = 0,
               langs: Sequence[str] = LANGUAGES, kinds: Sequence[str] = KINDS,
               sizes: Sequence[str] = tuple(SIZES), per_cell: int = 4, check: bool = True,
               timeout_s: float = 10.0, log: Callable[[str], None] = lambda _: None,
               indent: str | None = None,
               ) -> tuple[dict[str, list[dict[str, object]]], Counter[str]]:
    """``({"kinds_<language>": rows}, dropped)`` from the source rows by dataset name (module
    doc). ``dropped`` counts the self-check's drops as ``"<language>/<kind>: <reason>"``.
    ``indent``: every code row's before and after laid out in that unit (``"\\t"``, ``"  "``:
    files as people indent them; :mod:`copygram.language.indent_style`), a row whose unit
    cannot be read or whose lines would not come back as they were left out."""
    code = languages()
    out: dict[str, list[dict[str, object]]] = {}
    dropped: Counter[str] = Counter()
    for language in langs:
        lang = code.get(language)
        problems = [p for p in (lang.parse(r) for r in sources.get(lang.source, ()))
                    if p is not None] if lang else []
        prose = list(sources.get(PROSE_SOURCE, ()))
        missing = missing_toolchain(lang.name) if lang is not None else None
        checking = check and lang is not None and missing is None
        if check and lang is not None and missing:
            log(f"{language}: {missing}: its rows are written without the self-check")
        rows: list[dict[str, object]] = []
        for kind in kinds:
            if (kind in PROSE_KINDS) != (language == "prose"):
                continue
            for size in sizes:
                seen: set[tuple[object, object]] = set()
                for slot in range(per_cell):
                    for attempt in range(ATTEMPTS):
                        rng = random.Random(f"{seed}/{language}/{kind}/{size}/{slot}/{attempt}")
                        built = (_code_row(lang, problems, kind, size, rng) if lang
                                 else _prose_row(prose, size, rng,
                                                 named=PROSE_KINDS.get(kind, "quote")))
                        if built is None or (built["before"], built["instruction"]) in seen:
                            continue
                        lines = count_lines(str(built["before"]))
                        if not SIZES[size][0] <= lines <= SIZES[size][1]:
                            continue
                        if indent is not None and lang is not None:
                            built = _laid_out(built, indent)
                            if built is None:
                                continue
                        row = _finish(built, language, kind, size, slot, lines, seed, checking)
                        reason = verdict(row, kind, timeout_s) if checking else None
                        if reason:
                            dropped[f"{language}/{kind}: {reason}"] += 1
                            continue
                        seen.add((built["before"], built["instruction"]))
                        rows.append(row)
                        break
        out[f"kinds_{language}"] = rows
    return out, dropped


def _laid_out(built: dict[str, object], indent: str) -> dict[str, object] | None:
    """``built`` with its before and after indented by ``indent`` (their own unit read from
    the before), where each comes back as it was when laid out again in its own unit."""
    before, after = str(built["before"]), str(built["after"])
    own = indent_unit(split_lines(before))
    if own is None:
        return None
    laid = [relaid_text(text, own, indent) for text in (before, after)]
    if [relaid_text(text, indent, own) for text in laid] != [before, after]:
        return None
    return {**built, "before": laid[0], "after": laid[1]}


def _finish(built: dict[str, object], language: str, kind: str, size: str, slot: int,
            lines: int, seed: int, checked: bool) -> dict[str, object]:
    meta: dict[str, object] = {"kind": kind, "size": size, "language": language, "lines": lines,
                               "source_ids": built["ids"], "targets": built["targets"],
                               "seed": seed}
    if "test_program" in built:
        meta.update(test_program=built["test_program"], checked=checked)
    if TEXT_CHECK_KEY in built:
        meta[TEXT_CHECK_KEY] = built[TEXT_CHECK_KEY]
    return {"id": f"kinds/{language}/{kind}/{size}/{slot}", "source": built["source"],
            "lang": built["lang"], "before": built["before"],
            "instruction": built["instruction"], "after": built["after"], "meta": meta}


def _names(spec: str, known: Sequence[str], option: str) -> list[str]:
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ConfigError(f"{option} takes a comma list from {', '.join(known)}; got {spec!r}")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", default=None, help="folder of the source *.dev.jsonl files "
                        "(default: $COPYGRAM_DATA)")
    parser.add_argument("--out", required=True, help="folder to write kinds_*.dev.jsonl into")
    parser.add_argument("--seed", type=int, default=0, help="the draw (default 0)")
    parser.add_argument("--languages", default=",".join(LANGUAGES),
                        help=f"comma list from {', '.join(LANGUAGES)} (default: all)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma list (default: all)")
    parser.add_argument("--sizes", default=",".join(SIZES), help="comma list (default: all)")
    parser.add_argument("--per-cell", type=int, default=4,
                        help="rows per kind, size and language (default 4)")
    parser.add_argument("--no-check", action="store_true",
                        help="skip running every row's tests on its after and before")
    parser.add_argument("--indent", choices=sorted(INDENTS), default=None,
                        help="lay every code row out in this indentation (tab, 2: two spaces, "
                        "4: four spaces) instead of its source's")
    parser.add_argument("--test-timeout", type=float, default=10.0,
                        help="seconds one test run may take in the self-check (default 10)")


def run(args: argparse.Namespace) -> int:
    from copygram.io import write_text_atomic

    if args.per_cell < 1:
        raise ConfigError(f"--per-cell must be >= 1, got {args.per_cell}")
    chosen = _names(args.languages, LANGUAGES, "--languages")
    folder = data_dir(args.data)
    names = {lang.source for key, lang in languages().items() if key in chosen}
    names |= {PROSE_SOURCE} if "prose" in chosen else set()
    sources: dict[str, list[EditRow]] = {}
    for name in sorted(names):
        file = folder / f"{name}{SUFFIX}"
        if not file.is_file():
            raise ConfigError(f"{file} does not exist: bench kinds builds from it")
        sources[name] = list(read_edit_rows(file, name))
    built, dropped = build_rows(
        sources, seed=args.seed, langs=chosen, kinds=_names(args.kinds, KINDS, "--kinds"),
        sizes=_names(args.sizes, tuple(SIZES), "--sizes"), per_cell=args.per_cell,
        check=not args.no_check, timeout_s=args.test_timeout,
        indent=INDENTS[args.indent] if args.indent else None,
        log=lambda line: print(line, file=sys.stderr))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for dataset, rows in built.items():
        write_text_atomic(out / f"{dataset}{SUFFIX}",
                          "".join(json.dumps(row) + "\n" for row in rows))
        counts = Counter(f"{row['meta']['kind']}/{row['meta']['size']}"  # type: ignore[index]
                         for row in rows)
        print(f"{out / (dataset + SUFFIX)}: {len(rows)} rows; "
              + ", ".join(f"{key} {n}" for key, n in counts.items()))
    total = sum(dropped.values())
    print(f"dropped by the self-check: {total}" + "".join(f"\n  {key}: {n}"
                                                          for key, n in sorted(dropped.items())))
    return 0
