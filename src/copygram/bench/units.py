"""``copygram bench units``: where the parser's units and the layout's part (issue 40, part 3).

``copygram bench units --data DIR [--datasets a,b]`` reads every row's ``before`` and, for each
non-blank line, asks where the unit it opens ends, twice: :func:`~copygram.language.units.unit_end`
(the parser's end where the document parses, the layout's elsewhere) and
:func:`~copygram.language.units.layout_end` (the layout alone, copygram's rule before the
parser). It prints, per dataset and language (:func:`~copygram.language.damage.guess_language`;
``none``: no parser reads the file), the lines, the documents the parser read, and the lines
whose unit ends elsewhere, with a few of them to read. A head block on such a line replaces
other lines under the two rules; everywhere else the rules agree. Reads text only: no model.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from copygram.bench.data import load_rows
from copygram.language.damage import guess_language
from copygram.language.lines import split_lines
from copygram.language.units import layout_end, unit_end

DEFAULT_DATASETS = ("humanevalfix_docs_python", "humanevalfix_docs_js", "quixbugs_python",
                    "commits_py_repos")


def compare(text: str) -> tuple[int, list[tuple[int, int, int]]]:
    """``text``'s non-blank lines, and ``(line, parser's end, layout's end)`` where they part."""
    lines = split_lines(text)
    parted = []
    counted = 0
    for number in range(1, len(lines) + 1):
        if not lines[number - 1].strip():
            continue
        counted += 1
        ours, layout = unit_end(lines, number), layout_end(lines, number)
        if ours != layout:
            parted.append((number, ours, layout))
    return counted, parted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", default=None, help="folder of *.dev.jsonl files "
                        "(default: $COPYGRAM_DATA)")
    parser.add_argument("--datasets", default=",".join(DEFAULT_DATASETS),
                        help=f"comma list (default: {','.join(DEFAULT_DATASETS)})")
    parser.add_argument("--examples", type=int, default=5,
                        help="lines to show where the rules part (default 5)")
    parser.add_argument("--json", default=None, help="write the counts here")


def run(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    counts: Counter[tuple[str, str, str]] = Counter()
    shown: list[str] = []
    for dataset, rows in load_rows(names, args.data).items():
        for row in rows:
            language = guess_language(row.before) or "none"
            lines, parted = compare(row.before)
            counts[dataset, language, "documents"] += 1
            counts[dataset, language, "lines"] += lines
            counts[dataset, language, "parted"] += len(parted)
            for number, ours, layout in parted[: max(0, args.examples - len(shown))]:
                head = split_lines(row.before)[number - 1].strip()[:60]
                shown.append(f"  {row.id} line {number} {head!r}: parser {ours}, "
                              f"layout {layout}")
    print("| dataset | language | documents | lines | lines whose unit ends elsewhere |")
    print("|---|---|---|---|---|")
    for dataset, language in sorted({key[:2] for key in counts}):
        print(f"| {dataset} | {language} | {counts[dataset, language, 'documents']} | "
              f"{counts[dataset, language, 'lines']} | {counts[dataset, language, 'parted']} |")
    if shown:
        print("where they part:\n" + "\n".join(shown))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([{"dataset": d, "language": lang, key: n}
                       for (d, lang, key), n in sorted(counts.items())], out, indent=1)
    return 0


__all__ = ["compare"]
