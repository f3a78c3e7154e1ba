"""Edits of data files (JSON, TOML, YAML) with a real model: is every file written still one
that parses, and what did the damage check catch (docs/quality.md, "Data files")?

    .venv/bin/python scripts/data_files_probe.py [--model qwen2.5-coder-1.5b] \
        [--modes program,auto] [--json OUT]

Runs the instructions below on the files of examples/data in each mode, one model loaded once,
and prints one line per edit: the file, the mode, the instruction, how it ended (``written``,
``refused``), whether the text parses in its format, the damage a program was redone for, the
mode that wrote the text, and the seconds. Cost: ~30-300 s an edit on 2 cores (a redo in
rewrite mode writes the whole file again).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from copygram import EditSession
from copygram.errors import DamagedEditError
from copygram.language.damage import language_for_path, parses

DATA = Path(__file__).resolve().parent.parent / "examples" / "data"
EDITS = (
    ("package.json", "Remove the license field."),
    ("package.json", 'Add a script named "lint" that runs "eslint .".'),
    ("messages.json", "Remove the billing_label message."),
    ("messages.json", ('Add a "search_no_results" message with the text "No results found" '
                       "to the search section.")),
    ("ci.yml", "Add Python 3.13 to the test matrix."),
    ("ci.yml", "Remove the docs job."),
    ("config.toml", "Set the database timeout to 60 and add a retries = 3 setting to it."),
    ("config.toml", "Add a [cache] section with ttl = 300."),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--modes", default="program,auto")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write the rows here (JSON lines)")
    args = parser.parse_args()
    session = EditSession.from_config({"model": args.model, "n_threads": args.threads})
    rows = []
    for mode in args.modes.split(","):
        edit = session.derive(mode=mode)
        for name, instruction in EDITS:
            document = (DATA / name).read_text(encoding="utf-8")
            language = language_for_path(name)
            assert language is not None
            start = time.perf_counter()
            try:
                result = edit.edit(document, instruction, language=language)
                ended, text = "written", result.text
                redone = "; ".join(str(d) for d in result.redone.damage) if result.redone else ""
                wrote = result.mode
            except DamagedEditError as exc:
                ended, text, redone, wrote = "refused", document, str(exc)[:160], ""
            row = {"file": name, "mode": mode, "instruction": instruction, "ended": ended,
                   "parses": parses(text, language), "changed": text != document,
                   "redone_for": redone, "written_by": wrote,
                   "seconds": round(time.perf_counter() - start, 1), "text": text}
            rows.append(row)
            print(" | ".join(str(row[key]) for key in ("file", "mode", "instruction", "ended",
                  "parses", "changed", "written_by", "seconds", "redone_for")), flush=True)
    if args.json:
        args.json.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
