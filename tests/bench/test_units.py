"""copygram bench units: where the parser's units and the layout's part, counted on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copygram.bench.units import compare
from copygram.cli import main

TEXT = 'HELP = """\nusage\n"""\n\n\ndef f():\n    return 1\n'


def test_compare_counts_the_lines_and_finds_where_the_rules_part() -> None:
    assert compare(TEXT) == (5, [(1, 3, 1)])
    assert compare(TEXT.replace("def f():", "def f(:")) == (5, [])  # no parse: layout alone


def test_the_command_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = {"id": "r1", "before": TEXT, "after": TEXT, "instruction": "x"}
    (tmp_path / "mine.dev.jsonl").write_text(json.dumps(row) + "\n")
    assert main(["bench", "units", "--data", str(tmp_path), "--datasets", "mine",
                 "--json", str(tmp_path / "out.json")]) == 0
    out = capsys.readouterr().out
    assert "| mine | python | 1 | 5 | 1 |" in out and "r1 line 1" in out
    assert {"dataset": "mine", "language": "python", "parted": 1} in json.loads(
        (tmp_path / "out.json").read_text())
