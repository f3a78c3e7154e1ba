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
* ``humanevalfix_{docs,decl}_cpp``: ``meta["test"]`` is ``#undef NDEBUG``, ``#include<assert.h>``
  and a ``main`` of ``assert``s; the program ``candidate + test`` is compiled by ``g++ -std=c++17``
  (with ``-lcrypto`` where it includes OpenSSL, as ``string_to_md5`` does) and run.
* ``humanevalfix_{docs,decl}_java``: ``meta["test"]`` is a ``public class Main`` that throws
  ``AssertionError``; ``candidate + test`` is written to ``Main.java``, compiled by ``javac`` and
  run by ``java``.
* ``kinds_{python,js,cpp,java}`` (``copygram bench kinds``, :mod:`copygram.bench.kinds`), or any
  row whose ``meta`` has :data:`TEST_PROGRAM_KEY`: a whole-file test program (every assembled
  problem's tests, and the kind's own checks) that runs after the candidate as it is, in the
  row's language as above; no ``check`` call is appended.
* Any row whose ``meta`` has :data:`TEXT_CHECK_KEY` (``{"present": [...], "absent": [...]}``,
  lines compared with their indentation stripped): before its tests run, the candidate must
  hold every ``present`` line and none of the ``absent`` ones, or the row fails with the first
  line that does not hold. A documentation edit (``bench kinds``' ``docstring`` rows) changes
  nothing a test can call, so without it the file left as it was would pass.

A compiled language's build counts toward the timeout, and a candidate that does not compile
fails, as a Python file with a syntax error does. A runtime or compiler that is not on ``PATH``
is an ``"error"`` that names its Debian package (:func:`missing_toolchain`; ``bench quality``
refuses such a set before the model loads).

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
    "TEXT_CHECK_KEY",
    "TestOutcome",
    "harness_program",
    "has_tests",
    "missing_toolchain",
    "run_tests",
    "text_check",
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
    "humanevalfix_docs_cpp",
    "humanevalfix_decl_cpp",
    "humanevalfix_docs_java",
    "humanevalfix_decl_java",
    "kinds_cpp",
    "kinds_java",
)
"""The sets whose rows carry runnable tests (the first three are ``bench quality``'s default)."""

TEST_PROGRAM_KEY = "test_program"
"""The ``meta`` key of a whole-file test program (``copygram bench kinds``' rows)."""

TEXT_CHECK_KEY = "text_check"
"""The ``meta`` key of the lines a candidate must and must not hold (module doc)."""

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
    if lang in ("cpp", "c++", "cxx"):
        return "cpp"
    if lang == "java":
        return "java"
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


def _toolchain(language: str, node: str | None) -> list[str] | str:
    """The executables ``language`` needs, found on ``PATH``, or why they are missing."""
    needs = {"js": ["node"], "cpp": ["g++"], "java": ["javac", "java"]}.get(language, [])
    found: list[str] = []
    for name in needs:
        path = node if name == "node" and node else shutil.which(name)
        if path is None:
            package = {"node": "nodejs", "g++": "g++", "javac": "default-jdk-headless",
                       "java": "default-jdk-headless"}[name]
            return (f"{name} is not installed (needed to test {language} rows; "
                    f"Debian: apt-get install {package})")
        found.append(path)
    return found


def missing_toolchain(language: str | EditRow | Mapping[str, object]) -> str | None:
    """Why rows of ``language`` (``python``, ``js``, ``cpp``, ``java``; or a row's own) cannot be
    tested on this machine (a runtime or compiler not on ``PATH``), or None when they can."""
    if not isinstance(language, str):
        language = _language(language) or ""
    tools = _toolchain(language, None)
    return tools if isinstance(tools, str) else None


def _steps(language: str, work: Path, program: str, tools: list[str],
           ) -> list[tuple[list[str], int | None]]:
    """Write ``program`` into ``work`` and return the commands that build and run it, each with
    its address-space cap (compilers and the JVM reserve far more than they use: none)."""
    if language == "python":
        script = work / "program.py"
        script.write_text(program, encoding="utf-8")
        return [([sys.executable, "-I", "-B", str(script)], PYTHON_MEMORY_BYTES)]
    if language == "js":
        script = work / "program.js"
        script.write_text(program, encoding="utf-8")
        preamble = work / "assert_throws.js"
        preamble.write_text(_JS_PREAMBLE, encoding="utf-8")
        shim = work / "node_modules" / "js-md5"
        shim.mkdir(parents=True)
        (shim / "index.js").write_text(_JS_MD5_SHIM, encoding="utf-8")
        return [([tools[0], "--require", str(preamble), str(script)], None)]
    if language == "cpp":
        source = work / "program.cpp"
        source.write_text(program, encoding="utf-8")
        # HumanEvalFix's string_to_md5 links OpenSSL's MD5; nothing else needs a library.
        libraries = ["-lcrypto"] if "openssl/" in program else []
        return [([tools[0], "-std=c++17", "-O0", "-w", str(source), "-o", str(work / "program"),
                  *libraries], None),
                ([str(work / "program")], PYTHON_MEMORY_BYTES)]
    # java: HumanEvalFix's tests are a `public class Main`, so the file must be Main.java.
    source = work / "Main.java"
    source.write_text(program, encoding="utf-8")
    return [([tools[0], "-nowarn", "-encoding", "UTF-8", "-d", str(work), str(source)], None),
            ([tools[1], "-Xss16m", "-cp", str(work), "Main"], None)]


def run_tests(row: EditRow | Mapping[str, object], candidate_text: str, *,
              timeout_s: float = DEFAULT_TIMEOUT_S, node: str | None = None) -> TestOutcome:
    """Run ``row``'s tests against ``candidate_text`` in a subprocess (see module doc).

    ``node`` is the node executable (default: ``node`` on ``PATH``). Never raises for a bad
    candidate; a row without tests or a missing runtime or compiler gives ``status="error"``.
    A compiled language's build counts toward ``timeout_s``, and a build that fails (the
    candidate does not compile) is a ``"fail"``, as a Python syntax error is.
    """
    try:
        language, program = harness_program(row, candidate_text)
    except ValueError as exc:
        return TestOutcome(False, "error", 0.0, str(exc))
    wrong = text_check(row, candidate_text)
    if wrong is not None:
        return TestOutcome(False, "fail", 0.0, wrong)
    tools = _toolchain(language, node)
    if isinstance(tools, str):
        return TestOutcome(False, "error", 0.0, tools)
    with tempfile.TemporaryDirectory(prefix="copygram-test-") as tmp:
        work = Path(tmp)
        output = work / "output.txt"
        start = time.perf_counter()
        code = 0
        for argv, memory in _steps(language, work, program, tools):
            left = timeout_s - (time.perf_counter() - start)
            result = _run(argv, work, output, memory, max(left, 0.001))
            if isinstance(result, TestOutcome):
                return TestOutcome(result.passed, result.status, time.perf_counter() - start,
                                   result.tail or f"no result within {timeout_s:g} s")
            code = result
            if code != 0:
                break
        seconds = time.perf_counter() - start
        tail = _tail(output)
        if code == 0:
            return TestOutcome(True, "pass", seconds, tail)
        if code < 0:
            tail = f"{tail}\n[killed by signal {-code}]".strip()
        return TestOutcome(False, "fail", seconds, tail or f"exit status {code}")


def text_check(row: EditRow | Mapping[str, object], candidate_text: str) -> str | None:
    """Why ``candidate_text`` fails ``row``'s :data:`TEXT_CHECK_KEY` (a line it lacks or one it
    still holds, read without its whitespace: ``f(a,b)`` is ``f(a, b)``), or ``None`` where it
    holds or the row has none."""
    check = _meta(row).get(TEXT_CHECK_KEY)
    if not isinstance(check, Mapping):
        return None
    held = {"".join(line.split()) for line in candidate_text.splitlines()}
    for line in check.get("present") or ():
        if "".join(str(line).split()) not in held:
            return f"the file lacks the line {str(line).strip()!r}"
    for line in check.get("absent") or ():
        if "".join(str(line).split()) in held:
            return f"the file still holds the line {str(line).strip()!r}"
    return None


def _run(argv: list[str], work: Path, output: Path, memory: int | None,
         timeout_s: float) -> int | TestOutcome:
    """One command of a test run: its exit status, or the outcome that ends the run (a spawn
    failure, a timeout). Output is appended to ``output``."""
    with output.open("ab") as sink:
        try:
            process = subprocess.Popen(
                argv, cwd=work, env=_minimal_env(str(work)), stdin=subprocess.DEVNULL,
                stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
            )
        except OSError as exc:
            return TestOutcome(False, "error", 0.0, f"could not start {argv[0]}: {exc}")
        _limit(process.pid, memory)
        try:
            return process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.wait()
            return TestOutcome(False, "timeout", 0.0, _tail(output))
        finally:
            # Whatever the test program left running in its group goes too.
            _kill_group(process)
