"""The demo's example and its check: the check fails on the unedited file and passes on the fix,
so `make demo` passing means the model's edit is right."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BUGGY = "    return ordered[middle]\n\n\ndef variance"
FIXED = "    return (ordered[middle - 1] + ordered[middle]) / 2\n\n\ndef variance"


def check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(EXAMPLES / "check_stats.py"), str(path)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_check_fails_on_the_example_and_passes_on_its_fix(tmp_path: Path) -> None:
    original = (EXAMPLES / "stats.py").read_text(encoding="utf-8")
    failing = check(EXAMPLES / "stats.py")
    assert failing.returncode == 1 and "median([4, 1, 3, 2]) = 3" in failing.stdout
    assert original.count(BUGGY) == 1
    fixed = tmp_path / "stats.py"
    fixed.write_text(original.replace(BUGGY, FIXED), encoding="utf-8")
    passing = check(fixed)
    assert passing.returncode == 0 and "check: passed" in passing.stdout
