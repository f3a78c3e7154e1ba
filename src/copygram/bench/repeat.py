"""``copygram bench repeat``: several edits in a row on one file of real size, as an editor
sends them (issue 42, point 4): the time of each edit, cold and warm, for program mode, rewrite
mode and plain rewriting, side by side in one run, each edit judged by the file's tests.

``copygram bench repeat --data SRC --model M [--lines 300] [--steps 5] [--chains 1]
[--approaches program,rewrite-mode,rewrite] [--route prompt_order=document_first]
[--interleave] [--prefix-cache-mb N] [--json OUT]``

The chains are :mod:`copygram.bench.chains`' (built from the HumanEvalFix Python rows of any
split in ``SRC``; every step's reference result passes its tests and its document fails them).
The approaches share one loaded model and are ``bench quality``'s
(:mod:`copygram.bench.quality.approaches`). Each edit of a chain runs in two conditions:

- **warm**: the cache holds what the approach's edit of the step before left (its prompt and
  its reply), as in a session or a server that edits the same file again; the first step of a
  chain has no warm run.
- **cold**: the cache holds only the approach's document-free prompt prefix (system message and
  worked example: what a server's prefix cache keeps for every request), as for a first edit.

With ``--interleave`` (two chains or more, warm only) the chains' files are edited in turn,
as an editor switching between them (:func:`run_interleaved`): a warm edit then finds its own
file's previous prompt only in the backend's snapshots of recent prompts (``prefix_cache_mb``).

Per step, the warm run comes first (its cache is the previous step's last run, which ended on
that step's prompt and reply whichever condition it was), then the cold one. An approach named
with ``:warm`` or ``:cold`` runs in that condition only (``rewrite:warm``: plain rewriting
decodes thousands of tokens a step, its prefill is a small share); warm only, its first step's
prompt is put in the cache untimed instead of running that step. Times are wall time of the
whole edit, the prompt's prefill included; ``cached`` is how many prompt tokens the cache
already held. Where the instruction comes before the document (``prompt_order``'s default), a
new edit reuses only the prompt's fixed prefix; with the document first it reuses the document
up to the first line the last edit changed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from copygram.bench.data import EditRow, data_dir, read_edit_rows
from copygram.bench.model_args import add_model_arguments, session_config
from copygram.bench.quality.scoring import Approach
from copygram.errors import ConfigError

if TYPE_CHECKING:
    from copygram.backends.base import Backend

__all__ = ["APPROACHES", "CONDITIONS", "Run", "add_arguments", "parse_approaches", "run",
           "run_chain", "run_interleaved", "summarise"]

APPROACHES = ("program", "rewrite-mode", "rewrite", "auto")
CONDITIONS = ("warm", "cold")
SOURCE = "humanevalfix_docs_python"


@dataclass(frozen=True)
class Run:
    """One edit of a chain by one approach in one condition."""

    approach: str
    condition: str
    chain: str
    step: int
    lines: int
    seconds: float
    prompt_tokens: int
    cached_tokens: int
    decoded_tokens: int
    passed: bool
    error: str | None = None
    redone: str = ""  # a program redone in rewrite mode: the damage that made it (decode.checked)


def parse_approaches(spec: str) -> dict[str, tuple[str, ...]]:
    """``name[:condition],...`` as ``{name: conditions}`` (module doc)."""
    out: dict[str, tuple[str, ...]] = {}
    for item in (part.strip() for part in spec.split(",") if part.strip()):
        name, _, condition = item.partition(":")
        if name not in APPROACHES or (condition and condition not in CONDITIONS):
            raise ConfigError(f"--approaches takes a comma list of {', '.join(APPROACHES)}, each "
                              f"with :warm or :cold or neither; got {item!r}")
        out[name] = (condition,) if condition else CONDITIONS
    if not out:
        raise ConfigError("--approaches names no approach")
    return out


def run_chain(rows: Sequence[EditRow], approach: Approach, conditions: Sequence[str], *,
              name: str, prime: Callable[[EditRow], None],
              judge: Callable[[EditRow, str], bool],
              warm_up: Callable[[EditRow], None] = lambda _: None,
              report: Callable[[Run], None] = lambda _: None) -> list[Run]:
    """Every step of one chain, in order: warm (from the second step) then cold (module doc);
    ``prime(row)`` leaves only the document-free prefix in the cache, ``judge(row, text)``
    runs the row's tests, ``report(run)`` hears of each run as it ends. Run warm only, the
    first step is not run: before the second, ``warm_up(first row)`` puts its prompt in the
    cache (untimed), which is what a warm edit reuses of the step before (the next prompt parts
    from it inside the document or the instruction, before the reply)."""
    runs: list[Run] = []
    for step, row in enumerate(rows):
        for condition in CONDITIONS:
            if condition not in conditions or (condition == "warm" and step == 0):
                continue
            if condition == "cold":
                prime(row)
            elif step == 1 and "cold" not in conditions:
                warm_up(rows[0])
            runs.append(_timed(row, step, approach, name, condition, judge))
            report(runs[-1])
    return runs


def run_interleaved(chains: Sequence[Sequence[EditRow]], approach: Approach, *, name: str,
                    judge: Callable[[EditRow, str], bool], warm_up: Callable[[EditRow], None],
                    report: Callable[[Run], None] = lambda _: None) -> list[Run]:
    """The chains' steps in turn (the second step of each chain, then the third of each, ...),
    warm only, as an editor switching between files: each chain's first prompt is put in the
    cache untimed, in turn, and each edit then finds in the live cache the other chain's last
    edit, and its own file's previous prompt only where the backend's prefix store kept a
    snapshot of it (``prefix_cache_mb``; 0 makes every such edit a cold one)."""
    for rows in chains:
        warm_up(rows[0])
    runs: list[Run] = []
    for step in range(1, max(len(rows) for rows in chains)):
        for rows in chains:
            if step < len(rows):
                runs.append(_timed(rows[step], step, approach, name, "warm", judge))
                report(runs[-1])
    return runs


def _timed(row: EditRow, step: int, approach: Approach, name: str, condition: str,
           judge: Callable[[EditRow, str], bool]) -> Run:
    tick = time.perf_counter()
    text, stats, error = approach(row)
    seconds = time.perf_counter() - tick
    return Run(approach=name, condition=condition, chain=str(row.meta.get("chain", "")),
               step=step, lines=int(str(row.meta.get("lines", 0))), seconds=round(seconds, 3),
               prompt_tokens=_int(stats.get("prompt_tokens")),
               cached_tokens=_int(stats.get("cached_prompt_tokens")),
               decoded_tokens=_int(stats.get("decoded_tokens")),
               passed=text is not None and judge(row, text), error=error,
               redone=str(stats.get("redone") or ""))


def _prompt_cacher(backend: Backend, prompt: Callable[[str, str], str],
                   ) -> Callable[[EditRow], None]:
    """Caches the prompt ``prompt`` builds for a row (its reply left out), untimed."""
    from copygram.decode.forwards import prefill

    def cache(row: EditRow) -> None:
        prefill(backend, backend.tokenize(prompt(row.before, row.instruction), special=True))

    return cache


def _print_run(r: Run) -> None:
    print(f"  {r.approach} {r.condition} step {r.step}: {r.seconds:.1f} s, cached "
          f"{r.cached_tokens}/{r.prompt_tokens}, decoded {r.decoded_tokens}, "
          f"{'pass' if r.passed else 'FAIL'}" + (f" ({r.error})" if r.error else "")
          + (f", redone in rewrite mode ({r.redone})" if r.redone else ""),
          file=sys.stderr, flush=True)


def _edit_row(row: Mapping[str, object]) -> EditRow:
    meta = row["meta"]
    return EditRow("repeat", str(row["id"]), str(row["before"]), str(row["after"]),
                   str(row["instruction"]), str(row["lang"]), str(row["source"]),
                   dict(meta) if isinstance(meta, dict) else {})


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def summarise(runs: Sequence[Run], baseline: str = "rewrite") -> list[dict[str, object]]:
    """One entry per approach and condition over the steps both it and the baseline ran (warm
    runs from the second step): edits, passed, mean seconds per edit, mean cached prompt
    tokens, and ``speedup``, the baseline's summed time over the entry's on those steps (the
    baseline's warm runs where it has them, else its cold ones)."""
    by_key: dict[tuple[str, str], dict[tuple[str, int], Run]] = {}
    for r in runs:
        by_key.setdefault((r.approach, r.condition), {})[(r.chain, r.step)] = r
    base = by_key.get((baseline, "warm")) or by_key.get((baseline, "cold")) or {}
    out: list[dict[str, object]] = []
    for (approach, condition), steps in by_key.items():
        shared = [key for key in steps if key in base] if base else list(steps)
        picked = [steps[key] for key in shared]
        if not picked:
            continue
        seconds = sum(r.seconds for r in picked)
        base_s = sum(base[key].seconds for key in shared) if base else None
        out.append({"approach": approach, "condition": condition, "edits": len(picked),
                    "passed": sum(r.passed for r in picked),
                    "redone": sum(bool(r.redone) for r in picked),
                    "mean_s": round(seconds / len(picked), 2),
                    "mean_cached_tokens": round(sum(r.cached_tokens for r in picked)
                                                / len(picked)),
                    "mean_prompt_tokens": round(sum(r.prompt_tokens for r in picked)
                                                / len(picked)),
                    "speedup": round(base_s / seconds, 2) if base_s and seconds > 0 else None})
    return out


def markdown(summary: Sequence[Mapping[str, object]]) -> str:
    lines = [("| approach | condition | edits | passed | redone | s per edit | prompt tokens "
              "| cached | vs plain rewriting |"), "|---|---|---|---|---|---|---|---|---|"]
    for e in summary:
        speedup = e["speedup"]
        lines.append(f"| {e['approach']} | {e['condition']} | {e['edits']} | {e['passed']} "
                     f"| {e['redone']} "
                     f"| {e['mean_s']} | {e['mean_prompt_tokens']} | {e['mean_cached_tokens']} "
                     f"| {'-' if speedup is None else f'{speedup}x'} |")
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", default=None, help="folder of the source *.dev.jsonl files "
                        f"(default: $COPYGRAM_DATA); the chains are built from {SOURCE}")
    add_model_arguments(parser)
    parser.add_argument("--lines", type=int, default=300,
                        help="about how many lines each chain's file has (default 300)")
    parser.add_argument("--steps", type=int, default=5, help="edits per chain (default 5)")
    parser.add_argument("--chains", type=int, default=1, help="chains (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="the draw (default 0)")
    parser.add_argument("--approaches", default="program,rewrite-mode,rewrite",
                        help=f"comma list of {', '.join(APPROACHES)}, each optionally :warm or "
                             ":cold (default: program,rewrite-mode,rewrite, both conditions)")
    parser.add_argument("--test-timeout", type=float, default=20.0,
                        help="seconds a step's tests may run (default 20)")
    parser.add_argument("--interleave", action="store_true",
                        help="with --chains 2 or more: edit the chains' files in turn, warm "
                             "only, as an editor switching between files (run_interleaved)")
    parser.add_argument("--json", default=None, help="write every run and the summary here")


def run(args: argparse.Namespace) -> int:
    from copygram.bench.chains import build_chains
    from copygram.bench.kinds import languages
    from copygram.bench.quality.approaches import (
        PrefixPrimer,
        RewriteBaseline,
        program_approach,
        rewrite_mode_approach,
    )
    from copygram.bench.testrun import run_tests
    from copygram.host import run_record
    from copygram.io import write_text_atomic
    from copygram.session import EditSession

    approaches = parse_approaches(args.approaches)
    if args.interleave and (args.chains < 2 or any(c != ("warm",) for c in approaches.values())):
        raise ConfigError("--interleave edits two or more files in turn, warm: give --chains 2 "
                          "or more and every approach as NAME:warm")
    for option in ("lines", "steps", "chains"):
        if getattr(args, option) < 1:
            raise ConfigError(f"--{option} must be >= 1, got {getattr(args, option)}")
    source = data_dir(args.data) / f"{SOURCE}.dev.jsonl"
    if not source.is_file():
        raise ConfigError(f"{source} does not exist: bench repeat builds its chains from it")
    python = languages()["python"]
    problems = [p for p in (python.parse(r) for r in read_edit_rows(source, SOURCE)) if p]
    chains, dropped = build_chains({"python": problems}, chains=args.chains, lines=args.lines,
                                   steps=args.steps, seed=args.seed,
                                   log=lambda line: print(line, file=sys.stderr))
    if not chains:
        raise ConfigError(f"no chain of {args.steps} steps could be built from {source}")
    config = session_config(args)
    record = run_record(sys.argv, config)
    program = EditSession.from_config({**config, "mode": "program"})
    rewriting, auto = program.derive(mode="rewrite"), program.derive(mode="auto")
    program.prepare()
    by_name: dict[str, tuple[Approach, Callable[[str, str], str]]] = {
        "program": (program_approach(program), program.prompt),
        "auto": (program_approach(auto), auto.prompt),
        "rewrite-mode": (rewrite_mode_approach(rewriting), rewriting.prompt),
        "rewrite": (RewriteBaseline(program.backend, rewriting.prompt_builder), rewriting.prompt),
    }

    def judge(row: EditRow, text: str) -> bool:
        return run_tests(row, text, timeout_s=args.test_timeout).passed

    runs: list[Run] = []
    all_rows = [[_edit_row(r) for r in chain] for chain in chains]
    for rows in all_rows:
        print(f"chain {rows[0].meta['chain']}: {rows[0].meta['lines']} lines, "
              f"{len(rows)} steps", file=sys.stderr)
    if args.interleave:
        for name in approaches:
            approach, prompt = by_name[name]
            runs += run_interleaved(all_rows, approach, name=name, judge=judge,
                                    warm_up=_prompt_cacher(program.backend, prompt),
                                    report=_print_run)
    for rows in all_rows if not args.interleave else []:
        for name, conditions in approaches.items():
            approach, prompt = by_name[name]
            runs += run_chain(rows, approach, conditions, name=name,
                              prime=PrefixPrimer(program.backend, prompt), judge=judge,
                              warm_up=_prompt_cacher(program.backend, prompt),
                              report=_print_run)
    summary = summarise(runs)
    print(markdown(summary), end="")
    if args.json:
        record.update(backend=program.backend.describe(), dropped=dict(dropped))
        write_text_atomic(Path(args.json), json.dumps(
            {"run": record, "summary": summary, "runs": [asdict(r) for r in runs],
             "chains": chains}, indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
