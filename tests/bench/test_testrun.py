"""The test harness of ``bench quality`` (``copygram.bench.testrun``): each set's tests run on a
candidate file in a sandboxed subprocess with a timeout."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import pytest

from copygram.bench.data import EditRow
from copygram.bench.testrun import harness_program, has_tests, run_tests
from tests.bench.rows import (
    CPP_FIXED,
    JAVA_FIXED,
    JS_FIXED,
    PY_FIXED,
    PY_TEST,
    QUIX_FIXED,
    cpp_row,
    java_row,
    js_row,
    py_row,
    quix_row,
)

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
needs_java = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                reason="a JDK is not installed")


def test_python_fixed_passes_and_buggy_fails() -> None:
    row = py_row()
    good = run_tests(row, row.after)
    assert good.passed and good.status == "pass", good.tail
    bad = run_tests(row, row.before)
    assert not bad.passed and bad.status == "fail"
    assert "AssertionError" in bad.tail
    assert bad.seconds > 0


def test_python_check_call_is_appended_when_missing() -> None:
    row = py_row(test=PY_TEST.replace("check(below_zero)\n", ""))
    _, program = harness_program(row, row.after)
    assert program.rstrip().endswith("check(below_zero)")
    assert not run_tests(row, row.before).passed
    assert run_tests(row, row.after).passed
    _, untouched = harness_program(py_row(), PY_FIXED)
    assert untouched.count("\ncheck(below_zero)") == 1


def test_quixbugs_script_tests() -> None:
    row = quix_row()
    assert run_tests(row, row.after).passed
    assert run_tests(row, row.before).status in ("fail", "timeout")


@needs_node
def test_js_fixed_passes_and_failed_console_assert_fails() -> None:
    row = js_row()
    good = run_tests(row, row.after)
    assert good.passed, good.tail
    bad = run_tests(row, row.before)
    assert bad.status == "fail"
    assert "Assertion failed" in bad.tail


@needs_node
def test_js_console_assert_alone_makes_node_exit_nonzero() -> None:
    # Nothing but a failing console.assert: plain node would print and exit 0.
    row = EditRow("humanevalfix_docs_js", "js/1", "", "", lang="js",
                  meta={"test": "console.assert(1 === 2, 'one is two')\n"})
    outcome = run_tests(row, "const x = 1;\n")
    assert outcome.status == "fail"
    assert "one is two" in outcome.tail
    passing = dataclasses.replace(row, meta={"test": "console.assert(1 === 1)\n"})
    assert run_tests(passing, "const x = 1;\n").passed


@needs_node
def test_js_md5_shim() -> None:
    candidate = ("const md = (text) => {\n  var md5 = require('js-md5')\n  return md5(text)\n}\n")
    row = EditRow("humanevalfix_docs_js", "js/md5", candidate, candidate, lang="js", meta={
        "test": "console.assert(md('Hello world') === '3e25960a79dbc69b674cd4ec67a72c62')\n"})
    assert run_tests(row, candidate).passed


def test_missing_node_is_an_error_not_a_fail() -> None:
    outcome = run_tests(js_row(), JS_FIXED, node="/nonexistent/node")
    assert outcome.status == "error" and not outcome.passed


@pytest.mark.parametrize("make_row", [pytest.param(cpp_row, marks=needs_gxx),
                                      pytest.param(java_row, marks=needs_java)])
def test_compiled_languages_build_then_run(make_row: object) -> None:
    assert callable(make_row)
    row: EditRow = make_row()
    assert has_tests(row) and has_tests(row.dataset)
    good = run_tests(row, row.after)
    assert good.passed and good.status == "pass", good.tail
    bad = run_tests(row, row.before)
    assert bad.status == "fail" and not bad.passed
    # A candidate that does not compile fails (as a Python SyntaxError does), with the
    # compiler's message in the tail.
    broken = run_tests(row, row.after.replace("return false;", "return false"))
    assert broken.status == "fail" and "error" in broken.tail.lower()


@pytest.mark.parametrize(("make_row", "fixed", "tool"), [(cpp_row, CPP_FIXED, "g++"),
                                                         (java_row, JAVA_FIXED, "javac")])
def test_missing_compiler_is_an_error_that_names_it(
        monkeypatch: pytest.MonkeyPatch, make_row: object, fixed: str, tool: str) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if name == tool else real(name, *a, **k))
    assert callable(make_row)
    outcome = run_tests(make_row(), fixed)
    assert outcome.status == "error" and not outcome.passed
    assert f"{tool} is not installed" in outcome.tail and "apt-get install" in outcome.tail


@needs_gxx
def test_compiled_timeout_counts_the_build_and_kills_the_program() -> None:
    row = cpp_row()
    looping = CPP_FIXED.replace("int balance=0;", "int balance=0; while (true) {}")
    start = time.perf_counter()
    outcome = run_tests(row, looping, timeout_s=3.0)
    assert outcome.status == "timeout" and not outcome.passed
    assert time.perf_counter() - start < 10.0


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    candidate = (
        "import subprocess, time\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "while True:\n"
        "    pass\n"
    )
    row = quix_row()
    start = time.perf_counter()
    outcome = run_tests(row, candidate, timeout_s=1.0)
    elapsed = time.perf_counter() - start
    assert outcome.status == "timeout" and not outcome.passed
    assert 1.0 <= outcome.seconds and elapsed < 1.0 + 5.0
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{grandchild}/stat").is_file() and \
                Path(f"/proc/{grandchild}/stat").read_text().split()[2] == "Z":
            break  # killed, waiting for its (new) parent to reap it
        time.sleep(0.05)
    else:
        pytest.fail("the test's grandchild outlived the timeout")


def test_crash_and_syntax_error_fail() -> None:
    row = quix_row()
    crash = run_tests(row, "def gcd(a, b):\n    raise RuntimeError('boom')\n")
    assert crash.status == "fail" and "RuntimeError: boom" in crash.tail
    syntax = run_tests(row, "def gcd(a, b)\n    return a\n")
    assert syntax.status == "fail" and "SyntaxError" in syntax.tail


def test_sandbox_stdin_env_and_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPYGRAM_TEST_SECRET", "leak")
    probe = (
        "import os, sys\n"
        "assert 'COPYGRAM_TEST_SECRET' not in os.environ, 'env leaked'\n"
        "assert sys.stdin.read() == '', 'stdin open'\n"
        "assert os.path.basename(os.getcwd()).startswith('copygram-test-'), os.getcwd()\n"
        "assert not os.path.exists('pyproject.toml')\n"
    )
    outcome = run_tests(quix_row(), probe + QUIX_FIXED)
    assert outcome.passed, outcome.tail


def test_rows_without_tests() -> None:
    row = EditRow("commits_py_repos", "c/0", "a\n", "b\n", lang="python", meta={})
    assert not has_tests(row)
    assert run_tests(row, "b\n").status == "error"
    assert has_tests(py_row()) and has_tests(quix_row()) and has_tests(js_row())
    assert has_tests("quixbugs_python") and has_tests("humanevalfix_decl_js")
    assert not has_tests("commits_py_repos")
    assert has_tests({"lang": "python", "meta": {"tests": "assert True\n"}})
