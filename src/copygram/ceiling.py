"""``copygram ceiling``: the oracle round trip and the line-level copy ceiling of edit pairs.

For every row ``{before, after}`` of each JSONL file: the oracle program must resolve back to
``after`` exactly; the *copy ceiling* is the share of ``after`` characters the oracle copies
rather than generates (the oracle generates short lines whose copy tag would be longer), and the
*line coverage* the share of ``after`` characters on lines that stand anywhere in ``before`` (the
most a line-level copy could cover).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from copygram.bench.data import read_edit_rows
from copygram.errors import DocumentError
from copygram.language.lines import split_lines
from copygram.language.ops import Copy
from copygram.language.oracle import oracle
from copygram.language.resolve import resolve
from copygram.language.syntaxes import render


@dataclass
class CeilingStats:
    file: str
    rows: int = 0
    exact: int = 0
    after_chars: int = 0
    copied_chars: int = 0
    coverable_chars: int = 0
    program_chars: int = 0
    copy_ops: int = 0
    gen_ops: int = 0

    @property
    def round_trip(self) -> float:
        return self.exact / self.rows if self.rows else 1.0

    @property
    def copy_ceiling(self) -> float:
        return self.copied_chars / self.after_chars if self.after_chars else 0.0

    @property
    def line_coverage(self) -> float:
        return self.coverable_chars / self.after_chars if self.after_chars else 0.0

    @property
    def program_ratio(self) -> float:
        return self.program_chars / self.after_chars if self.after_chars else 0.0

    def add(self, before: str, after: str) -> None:
        program = oracle(before, after)
        source = split_lines(before)
        self.rows += 1
        self.exact += resolve(program, source) == after
        self.after_chars += len(after)
        self.program_chars += len(render(program))
        for op in program:
            if isinstance(op, Copy):
                self.copy_ops += 1
                self.copied_chars += sum(len(line) for line in source[op.start - 1 : op.end])
            else:
                self.gen_ops += 1
        known = set(source)
        self.coverable_chars += sum(len(line) for line in split_lines(after) if line in known)

    def summary(self) -> dict[str, object]:
        return {**asdict(self), "round_trip": self.round_trip, "copy_ceiling": self.copy_ceiling,
                "line_coverage": self.line_coverage, "program_ratio": self.program_ratio}


def ceiling(path: Path) -> CeilingStats:
    stats = CeilingStats(file=path.name)
    for row in read_edit_rows(path):
        stats.add(row.before, row.after)
    return stats


def format_table(results: list[CeilingStats]) -> str:
    header = ("| file | rows | round trip | copy ceiling | line coverage | program/after chars "
              "| copy ops | gen ops |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = [
        f"| {s.file} | {s.rows} | {s.exact}/{s.rows} ({s.round_trip:.0%}) | {s.copy_ceiling:.3f} "
        f"| {s.line_coverage:.3f} | {s.program_ratio:.3f} | {s.copy_ops} | {s.gen_ops} |"
        for s in results
    ]
    return "\n".join([header, *rows])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", type=Path, help="JSONL files with before/after rows")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")


def run(args: argparse.Namespace) -> int:
    results = []
    for path in args.files:
        if not path.is_file():
            raise DocumentError(f"{path}: no such file (pass JSONL files of before/after rows)")
        results.append(ceiling(path))
        print(f"{path.name}: {results[-1].rows} rows", file=sys.stderr)
    print(format_table(results))
    if args.json:
        from copygram.io import write_text_atomic

        write_text_atomic(args.json, json.dumps([s.summary() for s in results], indent=2) + "\n")
    return 0 if all(s.exact == s.rows for s in results) else 1
