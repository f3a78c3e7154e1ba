"""Would a boundary check fix program mode's spans? An offline measurement (issue 18's third route).

For every program the model wrote in a ``copygram bench quality --rows`` run, this replays the
program through the same model in the context the decode loop leaves (the prompt, then each op's
markup, each copy followed by its lines in one forward) and reads, from that forward, the model's
next-token choices at the start of every copied line but the first. Two rules say where a copy
would be cut:

- ``tag``: the model's argmax at a checked row starts markup (``<``): reading its own copy, it
  would end the copy there and write a tag;
- ``verify``: ``verify_copies``'s rule (copygram.decode.copy_check): the argmax at a checked row
  (the first tokens of each copied line but the first) is not the copied token.

The cut program keeps everything else as the model wrote it (a copy ``a-b`` cut at line ``j``
becomes ``a-j``), is resolved, and is judged by the row's tests. This measures how often each rule
fires and whether the cut alone fixes the row; it cannot say what the model would have written
after a cut made online (its later ops would see a different context), so it is an estimate of the
route, not the route. Teacher-forced replays use the program's text re-tokenized, not the exact
tokens of the run.

    PYTHONPATH=src .venv/bin/python scripts/boundary_check.py --rows ROWS.jsonl \\
        --data ../shared/data/edits --model qwen2.5-coder-1.5b --n-threads 2
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from copygram import Copy, EditSession, Op, Program, parse, render, resolve
from copygram.bench.data import load_rows
from copygram.bench.quality.scoring import score
from copygram.decode.copy_check import copy_checks, first_disagreement
from copygram.language.lines import split_lines

RULES = ("tag", "verify")


def cut_points(session: EditSession, row_before: str, instruction: str,
               program: Program) -> dict[str, list[int | None]]:
    """For each rule, per copy of ``program`` in order: the line at which it would be cut, or
    None. ``verify`` is the rule ``verify_copies`` applies online (copygram.decode.copy_check)."""
    backend = session.backend
    spelled = backend.token_bytes()
    lines = split_lines(row_before)
    prompt = backend.tokenize(session.prompt(row_before, instruction), special=True)
    backend.truncate(0)
    backend.splice(prompt)
    cuts: dict[str, list[int | None]] = {rule: [] for rule in RULES}
    for op in program:
        markup = backend.tokenize(render(Program([op]), session.syntax))
        if not isinstance(op, Copy):
            backend.splice(markup)
            continue
        copied = backend.tokenize("".join(lines[op.start - 1 : op.end]))
        checks = copy_checks(copied, spelled, lines, op.lines, len(markup))
        ids = markup + copied
        found: dict[str, int | None] = {rule: None for rule in RULES}
        if checks:
            logits = np.asarray(backend.splice_all(ids, rows=[c.row for c in checks]))
            found["verify"] = first_disagreement(checks, logits)
            for check, row in zip(checks, logits, strict=True):
                if found["tag"] is None and spelled[int(np.argmax(row))].lstrip().startswith(b"<"):
                    found["tag"] = check.line
        else:
            backend.splice(ids)
        for rule in RULES:
            cuts[rule].append(found[rule])
    return cuts


def cut_program(program: Program, cuts: list[int | None]) -> Program:
    ops: list[Op] = []
    copies = iter(cuts)
    for op in program:
        if isinstance(op, Copy):
            end = next(copies)
            ops.append(Copy(op.start, end) if end is not None else op)
        else:
            ops.append(op)
    return Program(ops)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", required=True, help="a bench quality --rows file")
    parser.add_argument("--data", required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--n-threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--approach", default="program")
    args = parser.parse_args()

    records = [json.loads(line) for line in Path(args.rows).read_text().splitlines()]
    programs = {(r["dataset"], r["row_id"]): r["stats"]["program"] for r in records
                if r["approach"] == args.approach and "program" in r.get("stats", {})}
    passed = {(r["dataset"], r["row_id"]): r["passed"] for r in records
              if r["approach"] == args.approach}
    datasets = sorted({dataset for dataset, _ in programs})
    rows = {(row.dataset, row.id): row
            for dataset_rows in load_rows(datasets, args.data).values() for row in dataset_rows
            if (row.dataset, row.id) in programs}
    session = EditSession.from_config({"backend": "llamacpp", "model": args.model,
                                       "n_ctx": args.n_ctx, "n_threads": args.n_threads})
    tally: Counter[str] = Counter()
    for key, text in programs.items():
        row = rows[key]
        program = parse(text, session.syntax)
        cuts = cut_points(session, row.before, row.instruction, program)
        report = [f"{key[0]} {key[1]}: pass={passed[key]} copies={len(program.copies())}"]
        tally["rows"] += 1
        tally["copies"] += len(program.copies())
        tally["passed"] += bool(passed[key])
        for rule in RULES:
            fired = sum(end is not None for end in cuts[rule])
            tally[f"{rule} fired"] += fired
            if not fired:
                tally[f"{rule} passed"] += bool(passed[key])
                continue
            edited = resolve(cut_program(program, cuts[rule]), split_lines(row.before))
            quality, _ = score(row, f"cut-{rule}", edited)
            tally[f"{rule} passed"] += bool(quality.passed)
            tally[f"{rule} rows changed"] += 1
            report.append(f"{rule}: cut {fired} -> pass={quality.passed}")
        print("  ".join(report), flush=True)
    print(dict(tally))
    return 0


if __name__ == "__main__":
    sys.exit(main())
