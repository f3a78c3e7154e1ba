"""What a prose edit kept and how close its revision came: the two figures of docs/quality.md,
"Prose", read from a ``bench quality --rows`` file of ``kinds_prose`` rows.

    .venv/bin/python scripts/prose_kept.py --data ROWS_DIR --rows RUN.jsonl

``ROWS_DIR`` is the ``bench kinds`` folder the run read (its ``kinds_prose.dev.jsonl``). For each
approach, kind and size: **kept**, the share of the text's non-blank lines outside the revised
paragraph that the output still holds as they were (what "leave the other paragraphs" asks);
**paragraph sim**, the character similarity (white space collapsed) of what replaced the
paragraph to the human's revision, where the rest was kept (else the whole output, compared to
the whole reference), beside the paragraph left as it was (the floor); **refused**, the rows an
approach wrote nothing for (an error: ``lost``, ``missed``). Milliseconds a row.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from difflib import SequenceMatcher
from pathlib import Path


def _flat(text: str) -> str:
    return " ".join(text.split())


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, _flat(a), _flat(b), autojunk=False).ratio()


def _score(row: dict[str, object], output: str | None) -> dict[str, float] | None:
    before = str(row["before"]).split("\n\n")
    after = str(row["after"]).split("\n\n")
    target = next(i for i, (a, b) in enumerate(zip(before, after)) if a != b)
    floor = _ratio(before[target], after[target])
    if output is None:
        return None
    others = [line.strip() for i, p in enumerate(before) if i != target
              for line in p.splitlines() if line.strip()]
    have = {line.strip() for line in output.splitlines()}
    kept = sum(line in have for line in others) / max(len(others), 1)
    if kept == 1.0:
        lead = "\n\n".join(before[:target])
        tail = "\n\n".join(before[target + 1:])
        revised = output[len(lead):len(output) - len(tail)] if output.startswith(lead) and \
            output.rstrip("\n").endswith(tail.rstrip("\n")) else output
        sim = _ratio(revised, after[target])
    else:
        sim = _ratio(output, str(row["after"]))
    return {"kept": kept, "sim": sim, "floor": floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--rows", required=True, type=Path)
    args = parser.parse_args()
    rows = {r["id"]: r for r in map(json.loads, (args.data / "kinds_prose.dev.jsonl").open())}
    cells: dict[tuple[str, str, str], list[dict[str, float] | None]] = defaultdict(list)
    walls: dict[tuple[str, str, str], float] = defaultdict(float)
    for line in args.rows.open():
        result = json.loads(line)
        row = rows.get(result["row_id"])
        if row is None or result["approach"] == "copy_unchanged":
            continue
        meta = row["meta"]
        key = (result["approach"], meta["kind"], meta["size"])
        output = result.get("text") if not result.get("error") else None
        cells[key].append(_score(row, output))
        walls[key] += float(result.get("wall_s") or 0.0)
    print("approach | kind | size | rows | kept | paragraph sim | floor | refused | wall s")
    for key in sorted(cells):
        scored = [s for s in cells[key] if s is not None]
        n = len(scored)
        mean = {k: sum(s[k] for s in scored) / n for k in ("kept", "sim", "floor")} if n else {}
        print(" | ".join([*key, str(len(cells[key])),
                          f"{mean['kept']:.0%}" if n else "-",
                          f"{mean['sim']:.2f}" if n else "-",
                          f"{mean['floor']:.2f}" if n else "-",
                          str(len(cells[key]) - n), f"{walls[key]:.1f}"]))


if __name__ == "__main__":
    main()
