"""Edit chains for ``copygram bench repeat`` (:mod:`copygram.bench.repeat`): several edits in a
row on one file of real size, as an editor sends them.

A chain is built from the HumanEvalFix problems of any split (parsed as ``copygram bench kinds``
parses them, :mod:`copygram.bench.kinds`): a file of about ``lines`` lines assembled from fixed
solutions (docstrings included), ``steps`` of its functions made buggy. Step ``k``'s instruction
is the ``k``-th of those functions' own (``Fix bugs in f.``); its document is the file with the
steps before it applied (their reference result, so that every approach edits the same inputs
and one wrong edit does not decide the next); its tests run every function the step leaves
fixed, so that damage to any neighbour fails the step. Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

from copygram.bench.kinds import assemble, languages, verdict
from copygram.bench.kinds_edits import Language, Problem
from copygram.language.lines import count_lines

__all__ = ["ATTEMPTS", "build_chain", "build_chains"]

ATTEMPTS = 32
SPREAD = 0.1
"""A chain's file is drawn within this share of the lines asked for, either side."""


def build_chain(lang: Language, problems: Sequence[Problem], *, lines: int, steps: int,
                rng: random.Random, name: str) -> list[dict[str, object]] | None:
    """The rows of one chain (module doc), or ``None`` where this draw has too few problems
    with a bug to make ``steps`` edits."""
    span = (int(lines * (1 - SPREAD)), int(lines * (1 + SPREAD)))
    picked = assemble([p.fixed for p in problems], rng, span, lambda i, _: problems[i].names)
    chosen = [problems[i] for i in picked]
    buggy = [p for p in chosen if p.buggy != p.fixed]
    if len(buggy) < steps:
        return None
    targets = rng.sample(buggy, steps)  # the order the user asks for the fixes
    imports = list(dict.fromkeys(line for p in chosen for line in p.imports))

    def render(still_buggy: Sequence[Problem]) -> str:
        return lang.render(imports, [], [p.buggy if p in still_buggy else p.fixed
                                         for p in chosen])

    rows: list[dict[str, object]] = []
    for step, target in enumerate(targets):
        before, after = render(targets[step:]), render(targets[step + 1:])
        tests = [lang.run_test(p, p.name) for p in chosen if p not in targets[step + 1:]]
        rows.append({
            "id": f"repeat/{lang.name}/{name}/{step}", "source": lang.source, "lang": lang.name,
            "before": before, "instruction": target.instruction, "after": after,
            "meta": {"kind": "bugfix", "chain": name, "step": step,
                     "lines": count_lines(before), "language": lang.name,
                     "source_ids": [p.id for p in chosen], "targets": [target.name],
                     "test_program": "\n".join(tests)}})
    return rows


def build_chains(problems_by_language: dict[str, Sequence[Problem]], *, chains: int,
                 lines: int, steps: int, seed: int = 0, check: bool = True,
                 timeout_s: float = 10.0, log: Callable[[str], None] = lambda _: None,
                 ) -> tuple[list[list[dict[str, object]]], Counter[str]]:
    """``chains`` chains per language (in the order given), and what the self-check dropped:
    every step's reference ``after`` must pass its tests and its ``before`` fail them
    (:func:`copygram.bench.kinds.verdict`); a chain with a step that does not hold is drawn
    again, at most :data:`ATTEMPTS` times per chain."""
    known = languages()
    out: list[list[dict[str, object]]] = []
    dropped: Counter[str] = Counter()
    for language, problems in problems_by_language.items():
        lang = known[language]
        for index in range(chains):
            for attempt in range(ATTEMPTS):
                rng = random.Random(f"{seed}/repeat/{language}/{lines}/{steps}/{index}/{attempt}")
                rows = build_chain(lang, problems, lines=lines, steps=steps, rng=rng,
                                   name=f"{lines}-{index}")
                if rows is None:
                    dropped[f"{language}: too few buggy problems in the draw"] += 1
                    continue
                reasons = [verdict(row, "bugfix", timeout_s) for row in rows] if check else []
                failed = next((r for r in reasons if r), None)
                if failed:
                    dropped[f"{language}: {failed}"] += 1
                    continue
                out.append(rows)
                break
            else:
                log(f"{language}: no chain {index} of {steps} steps in {ATTEMPTS} draws")
    return out, dropped
