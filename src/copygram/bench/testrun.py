"""Running a row's own tests against a candidate document, in a subprocess.

The edit sets that carry tests (see :data:`TESTED_DATASETS`) store them in ``meta``:

* ``humanevalfix_{docs,decl}_python``: ``meta["test"]`` defines ``check(fn)`` and ends with a
  call ``check(<entry_point>)``; the program run is ``candidate + test`` (HumanEvalPack's own
  harness concatenates them the same way).
* ``humanevalfix_{docs,decl}_js``: ``meta["test"]`` is JavaScript calling ``console.assert`` and
  ending with a call of its test function. ``console.assert`` only *prints* on failure, so node
  runs with a preamble (``--require``) that makes it throw: a failed assertion exits non-zero.
  One task (``stringToMd5``) does ``require('js-md5')``: the temporary directory gets a
  ``node_modules/js-md5`` shim over node's own ``crypto`` md5 (the npm package's default export
  is the same function: hex digest of a string), so that nothing is fetched.
* ``quixbugs_python``: ``meta["tests"]`` is a plain script (plain ``assert`` lines, or
  ``testN()`` functions called at its end, defining any helper class such as ``Node`` itself)
  that refers to the function by name; the program run is ``candidate + tests``.
* ``kinds_python`` / ``kinds_js`` (``copygram bench kinds``, :mod:`copygram.bench.kinds`), or any
  row whose ``meta`` has :data:`TEST_PROGRAM_KEY`: a whole-file test program (every assembled
  problem's tests, and the kind's own checks) that runs after the candidate as it is, Python with
  the interpreter, JS with node and the preamble above; no ``check`` call is appended.

Each run happens in a fresh temporary directory (removed afterwards), in its own session and
process group (killed as a whole on timeout), with stdin closed, a minimal environment, output
captured to a file (capped in size) and a wall-clock timeout; never in the caller's process.
A run passes iff the process exits with status 0 within the timeout.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from copygram.bench.data import EditRow

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "TESTED_DATASETS",
    "TEST_PROGRAM_KEY",
    "TestOutcome",
    "harness_program",
    "has_tests",
    "run_tests",
]

DEFAULT_TIMEOUT_S = 15.0
"""Every reference solution of the tested sets passes in under 0.3 s, but one (QuixBugs
``levenshtein``: exponential recursion) takes ~3 s alone on a CPU core; 15 s leaves room for a
busy machine. A candidate that loops forever costs this much."""

TESTED_DATASETS: tuple[str, ...] = (
    "humanevalfix_docs_python",
    "humanevalfix_docs_js",
    "quixbugs_python",
    "humanevalfix_decl_python",
    "humanevalfix_decl_js",
    "kinds_python",
    "kinds_js",
)
"""The sets whose rows carry runnable tests (the first three are ``bench quality``'s default)."""

TEST_PROGRAM_KEY = "test_program"
"""The ``meta`` key of a whole-file test program (``copygram bench kinds``' rows)."""

TAIL_CHARS = 800
OUTPUT_CAP_BYTES = 8 << 20  # RLIMIT_FSIZE of the test process: its output file stops here
PYTHON_MEMORY_BYTES = 4 << 30  # RLIMIT_AS of Python test runs (not node: V8 reserves far more)

Status = Literal["pass", "fail", "timeout", "error"]

_JS_PREAMBLE = """\
'use strict';
// A failed console.assert only prints; make it throw so that the run exits non-zero.
console.assert = function (condition, ...message) {
  if (!condition) {
    const text = message.length ? ': ' + message.map(String).join(' ') : '';
    throw new Error('Assertion failed' + text);
  }
};
"""

_JS_MD5_SHIM = """\
'use strict';
// Stand-in for the npm package js-md5: md5(text) -> lowercase hex digest.
const crypto = require('crypto');
module.exports = function md5(text) {
  return crypto.createHash('md5').update(String(text), 'utf8').digest('hex');
};
"""


@dataclass(frozen=True)
class TestOutcome:
    """How one candidate fared on its row's tests.

    ``status``: ``"pass"`` (exit 0), ``"fail"`` (non-zero exit: an assertion, an exception, a
    syntax error in the candidate), ``"timeout"`` (killed after ``timeout_s``), ``"error"``
    (the harness could not run the tests: no tests in the row, no ``node``, a spawn failure).
    ``tail`` is the end of the combined stdout/stderr (or the harness's reason).
    """

    __test__ = False  # not a pytest test class, despite the name

    passed: bool
    status: Status
    seconds: float
    tail: str


def _field(row: EditRow | Mapping[str, object], name: str) -> object:
    if isinstance(row, EditRow):
        return getattr(row, name)
    return row.get(name)


def _meta(row: EditRow | Mapping[str, object]) -> Mapping[str, object]:
    meta = _field(row, "meta")
    return meta if isinstance(meta, Mapping) else {}


def _language(row: EditRow | Mapping[str, object]) -> str | None:
    lang = str(_field(row, "lang") or "").lower()
    if lang in ("python", "py", "python3"):
        return "python"
    if lang in ("js", "javascript", "node"):
        return "js"
    return None


def _test_text(row: EditRow | Mapping[str, object]) -> str | None:
    meta = _meta(row)
    for key in (TEST_PROGRAM_KEY, "test", "tests"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def has_tests(dataset_or_row: str | EditRow | Mapping[str, object]) -> bool:
    """Whether a dataset (by name) or a row carries tests this module can run."""
    if isinstance(dataset_or_row, str):
        return dataset_or_row in TESTED_DATASETS
    return _language(dataset_or_row) is not None and _test_text(dataset_or_row) is not None


def harness_program(row: EditRow | Mapping[str, object], candidate: str) -> tuple[str, str]:
    """``(language, program text)``: what :func:`run_tests` runs for ``candidate`` on ``row``.

    The candidate, a blank line, then the row's tests (its ``meta[TEST_PROGRAM_KEY]`` where it has
    one); for a HumanEvalFix Python row whose test does not call ``check`` itself,
    ``check(<entry_point>)`` is appended.
    """
    language = _language(row)
    test = _test_text(row)
    if language is None or test is None:
        raise ValueError(f"row {_field(row, 'id')!r} carries no runnable tests")
    program = candidate if candidate.endswith("\n") else candidate + "\n"
    program += "\n\n" + test
    if not program.endswith("\n"):
        program += "\n"
    entry = _meta(row).get("entry_point")
    whole = isinstance(_meta(row).get(TEST_PROGRAM_KEY), str)
    if (language == "python" and not whole and isinstance(entry, str) and entry.isidentifier()
            and "def check(" in test
            and not re.search(rf"^check\(\s*{re.escape(entry)}\s*\)", test, re.MULTILINE)):
        program += f"\ncheck({entry})\n"
    return language, program


def _minimal_env(home: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


def _limit(pid: int, memory: int | None) -> None:
    """Cap the test process's core dumps, output file size and (Python) address space.

    Applied from outside right after the spawn (``prlimit``, Linux): a ``preexec_fn`` would run
    Python code between fork and exec, which can deadlock in a process with native threads (a
    loaded model's). Best effort elsewhere: the timeout still bounds the run.
    """
    prlimit = getattr(resource, "prlimit", None)
    if prlimit is None:  # pragma: no cover - not Linux
        return
    limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, OUTPUT_CAP_BYTES)]
    if memory is not None:
        limits.append((resource.RLIMIT_AS, memory))
    for which, value in limits:
        try:
            prlimit(pid, which, (value, value))
        except (ProcessLookupError, PermissionError, ValueError, OSError):
            return


def _tail(path: Path, limit: int = TAIL_CHARS) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 4 * limit))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace").strip()
    return text[-limit:]


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_tests(row: EditRow | Mapping[str, object], candidate_text: str, *,
              timeout_s: float = DEFAULT_TIMEOUT_S, node: str | None = None) -> TestOutcome:
    """Run ``row``'s tests against ``candidate_text`` in a subprocess (see module doc).

    ``node`` is the node executable (default: ``node`` on ``PATH``). Never raises for a bad
    candidate; a row without tests or a missing runtime gives ``status="error"``.
    """
    try:
        language, program = harness_program(row, candidate_text)
    except ValueError as exc:
        return TestOutcome(False, "error", 0.0, str(exc))
    with tempfile.TemporaryDirectory(prefix="copygram-test-") as tmp:
        work = Path(tmp)
        if language == "python":
            script = work / "program.py"
            script.write_text(program, encoding="utf-8")
            argv = [sys.executable, "-I", "-B", str(script)]
            memory: int | None = PYTHON_MEMORY_BYTES
        else:
            runtime = node or shutil.which("node")
            if runtime is None:
                return TestOutcome(False, "error", 0.0, "node is not installed (needed for JS)")
            script = work / "program.js"
            script.write_text(program, encoding="utf-8")
            preamble = work / "assert_throws.js"
            preamble.write_text(_JS_PREAMBLE, encoding="utf-8")
            shim = work / "node_modules" / "js-md5"
            shim.mkdir(parents=True)
            (shim / "index.js").write_text(_JS_MD5_SHIM, encoding="utf-8")
            argv = [runtime, "--require", str(preamble), str(script)]
            memory = None
        output = work / "output.txt"
        start = time.perf_counter()
        with output.open("wb") as sink:
            try:
                process = subprocess.Popen(
                    argv, cwd=work, env=_minimal_env(tmp), stdin=subprocess.DEVNULL,
                    stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
                )
            except OSError as exc:
                return TestOutcome(False, "error", 0.0, f"could not start {argv[0]}: {exc}")
            _limit(process.pid, memory)
            try:
                code = process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.wait()
                return TestOutcome(False, "timeout", time.perf_counter() - start,
                                   _tail(output) or f"no result within {timeout_s:g} s")
            finally:
                # Whatever the test program left running in its group goes too.
                _kill_group(process)
        seconds = time.perf_counter() - start
        tail = _tail(output)
        if code == 0:
            return TestOutcome(True, "pass", seconds, tail)
        if code < 0:
            tail = f"{tail}\n[killed by signal {-code}]".strip()
        return TestOutcome(False, "fail", seconds, tail or f"exit status {code}")
