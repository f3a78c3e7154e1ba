"""``bench quality``: the test harness (subprocesses), the metrics, pooling, fence stripping, the
rewrite baseline over a fake backend, and the command over a scripted model."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.bench.data import EditRow
from copygram.bench.quality import (
    DATA_ENV,
    UNCHANGED,
    RewriteBaseline,
    RowQuality,
    data_path,
    evaluate_row,
    exact_match,
    extract_document,
    floor_row,
    line_similarity,
    markdown_table,
    parse_approaches,
    pool,
    program_approach,
    rewrite_budget,
    rewrite_decode,
    rewrite_mode_approach,
    write_plot,
)
from copygram.bench.testrun import harness_program, has_tests, run_tests
from copygram.decode.prompt import RewritePromptBuilder
from copygram.errors import ConfigError, GenerationError
from copygram.language.oracle import oracle
from copygram.session import EditSession
from copygram.testing import ScriptedBackend
from tests.bench.doubles import SplitPromptBackend

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# --- rows shaped like the real sets ---------------------------------------------------------------

PY_FIXED = '''from typing import List


def below_zero(operations: List[int]) -> bool:
    """ True if the running balance ever drops below zero. """
    balance = 0
    for op in operations:
        balance += op
        if balance < 0:
            return True
    return False
'''
PY_BUGGY = PY_FIXED.replace("if balance < 0:", "if balance == 0:")
PY_TEST = '''



def check(below_zero):
    assert below_zero([]) == False
    assert below_zero([1, 2, -3, 1, 2, -3]) == False
    assert below_zero([1, 2, -4, 5, 6]) == True

check(below_zero)
'''

JS_FIXED = '''/* True if the running balance ever drops below zero. */
const belowZero = (operations) => {
  let balance = 0;
  for (const op of operations) {
    balance += op;
    if (balance < 0) {
      return true;
    }
  }
  return false;
}
'''
JS_BUGGY = JS_FIXED.replace("if (balance < 0)", "if (balance == 0)")
JS_TEST = '''const testBelowZero = () => {
  console.assert(belowZero([]) === false)
  console.assert(belowZero([1, 2, -3, 1, 2, -3]) === false)
  console.assert(belowZero([1, 2, -4, 5, 6]) === true)
}

testBelowZero()
'''

QUIX_FIXED = '''def gcd(a, b):
    if b == 0:
        return a
    else:
        return gcd(b, a % b)
'''
QUIX_BUGGY = QUIX_FIXED.replace("gcd(b, a % b)", "gcd(a % b, b)")
QUIX_TESTS = '''assert gcd(*[17, 0]) == 17
assert gcd(*[13, 13]) == 13
assert gcd(*[37, 600]) == 1
'''


def py_row(before: str = PY_BUGGY, after: str = PY_FIXED, test: str = PY_TEST,
           dataset: str = "humanevalfix_docs_python", row_id: str = "py/0") -> EditRow:
    return EditRow(dataset, row_id, before, after, instruction="Fix bugs in below_zero.",
                   lang="python", meta={"test": test, "entry_point": "below_zero"})


def js_row() -> EditRow:
    return EditRow("humanevalfix_docs_js", "js/0", JS_BUGGY, JS_FIXED,
                   instruction="Fix bugs in belowZero.", lang="js",
                   meta={"test": JS_TEST, "entry_point": "belowZero"})


def quix_row() -> EditRow:
    return EditRow("quixbugs_python", "quix/gcd", QUIX_BUGGY, QUIX_FIXED,
                   instruction="Fix the bug in gcd.", lang="python",
                   meta={"docstring": "gcd", "tests": QUIX_TESTS})


# --- the test harness ---------------------------------------------------------------------------


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


# --- metrics ------------------------------------------------------------------------------------


def test_line_similarity() -> None:
    assert line_similarity("a\nb\nc\n", "a\nb\nc\n") == 1.0
    assert line_similarity("", "") == 1.0
    assert line_similarity("x\ny\n", "a\nb\n") == 0.0
    assert line_similarity("a\nb\nc\nd\n", "a\nB\nc\nd\n") == pytest.approx(0.75)
    assert line_similarity("a\nb", "a\r\nb\n") == 1.0  # endings and the last newline are free
    assert line_similarity("a\n", "") == 0.0
    assert line_similarity("a\nb\n\n\n", "a\nb") == 1.0  # consistent with exact_match


def test_exact_match_ignores_only_trailing_newlines() -> None:
    assert exact_match("a\nb", "a\nb\n")
    assert exact_match("a\nb\n\n", "a\nb\n")
    assert not exact_match("a\nb ", "a\nb\n")
    assert not exact_match("a\n\nb\n", "a\nb\n")


class RowApproach:
    """A fake approach: returns the same thing for every row."""

    def __init__(self, text: str | None, error: str | None = None, tokens: int = 7) -> None:
        self.text, self.error, self.tokens = text, error, tokens

    def __call__(self, row: EditRow) -> tuple[str | None, dict[str, object], str | None]:
        return self.text, {"decoded_tokens": self.tokens}, self.error


def test_evaluate_row_valid_invalid_and_crash() -> None:
    row = quix_row()
    good, (text, _, _) = evaluate_row(row, "a", RowApproach(QUIX_FIXED + "\n\n"))
    assert text == QUIX_FIXED + "\n\n"
    assert good.valid and good.passed and good.exact and not good.unchanged
    assert good.similarity == 1.0 and good.decoded_tokens == 7 and good.test_status == "pass"
    assert not good.crashed and good.error is None and good.wall_s >= 0

    same, _ = evaluate_row(row, "a", RowApproach(QUIX_BUGGY))
    assert same.valid and same.unchanged and not same.passed and not same.exact

    invalid, _ = evaluate_row(row, "a", RowApproach(None, "GenerationError: ran out"))
    assert not invalid.valid and invalid.passed is False and invalid.similarity == 0.0
    assert invalid.error == "GenerationError: ran out" and not invalid.crashed

    def boom(row: EditRow) -> tuple[str | None, dict[str, object], str | None]:
        raise AssertionError

    crash, result = evaluate_row(row, "a", boom)
    assert crash.crashed and not crash.valid and result[0] is None
    assert crash.error is not None and crash.error.startswith("AssertionError at test_quality.py")


def test_floor_row() -> None:
    floor = floor_row(quix_row())
    assert floor.approach == UNCHANGED and floor.valid and floor.unchanged
    assert floor.passed is False and floor.wall_s == 0.0
    assert floor.similarity == line_similarity(QUIX_BUGGY, QUIX_FIXED)


def _quality(dataset: str, approach: str, *, valid: bool = True, passed: bool | None = True,
             exact: bool = False, sim: float = 0.5, wall: float = 1.0,
             crashed: bool = False) -> RowQuality:
    return RowQuality(dataset, "r", approach, valid=valid, passed=passed, exact=exact,
                      unchanged=False, similarity=sim, wall_s=wall, decoded_tokens=3,
                      crashed=crashed)


def test_pool_json_shape_and_table(tmp_path: Path) -> None:
    rows = [
        _quality("d1", "program", passed=True, exact=True, sim=1.0, wall=2.0),
        _quality("d1", "program", valid=False, passed=False, sim=0.0, wall=1.0, crashed=True),
        _quality("d1", "rewrite", passed=False, sim=0.5, wall=4.0),
        _quality("d2", "rewrite", passed=None, sim=0.25),
    ]
    pooled = json.loads(json.dumps(pool(rows)))
    assert list(pooled) == ["d1", "d2"]
    assert list(pooled["d1"]) == ["program", "rewrite"]
    program = pooled["d1"]["program"]
    required = {"pass", "exact", "valid", "rows", "sim", "wall_s"}
    assert required <= set(program)
    assert (program["pass"], program["exact"], program["valid"], program["rows"]) == (1, 1, 1, 2)
    assert program["sim"] == pytest.approx(0.5)  # the invalid row counts 0
    assert program["sim_valid"] == pytest.approx(1.0)
    assert program["wall_s"] == pytest.approx(3.0)
    assert program["crashed"] == 1 and program["decoded_tokens"] == 6
    assert pooled["d2"]["rewrite"]["pass"] is None  # a set without tests
    table = markdown_table(pool(rows))
    assert "| d1 | program | 1/2 | 1/2 | 1/2 | 0/2 | 1/2 | 0.500 | 3.0 |" in table
    assert "| d2 | rewrite | - |" in table
    pytest.importorskip("matplotlib")
    path = write_plot(tmp_path / "plots", pool(rows))
    assert path.read_bytes().startswith(b"\x89PNG")


# --- fence stripping ----------------------------------------------------------------------------

_DOC = st.text(max_size=200).map(
    lambda t: t if not t or t.endswith("\n") else t + "\n")
_TAG = st.sampled_from(["", "python", "py", "js", "javascript", "c++", "python3 "])


@given(_DOC, _TAG, st.sampled_from(["", "\n", "\n\n", "  \n", "\nThat fixes the bug.\n"]),
       st.sampled_from(["```", "````", "~~~"]))
def test_stripping_a_fenced_text_gives_it_back(text: str, tag: str, tail: str,
                                               marker: str) -> None:
    fenced = f"{marker}{tag}\n{text}{marker}{tail}"
    assert extract_document(fenced) == text
    assert extract_document("\n" + fenced) == text


@given(_DOC)
def test_unfenced_text_is_kept(text: str) -> None:
    first = text.lstrip().split("\n", 1)[0]
    if not first.startswith(("```", "~~~")):
        assert extract_document(text) == text


def test_fence_examples() -> None:
    assert extract_document("```python\ndef f():\n    pass\n") == "def f():\n    pass\n"
    assert extract_document("```\n```") == ""
    assert extract_document("```py\nx = 1\n```\n") == "x = 1\n"
    # The document's final line break survives a model that stops right after the last character.
    assert extract_document("x = 1", "x = 0\n") == "x = 1\n"
    assert extract_document("x = 1", "x = 0\r\n") == "x = 1\r\n"
    assert extract_document("x = 1", "x = 0") == "x = 1"
    assert extract_document("", "x = 0\n") == ""
    assert extract_document("x = '```'\n") == "x = '```'\n"
    assert extract_document("Here it is:\n```\nx\n```\n") == "Here it is:\n```\nx\n```\n"
    inner = "# doc\n```\ncode\n```\nend\n"
    assert extract_document(f"```markdown\n{inner}```\n") == inner


# --- the rewrite baseline -----------------------------------------------------------------------


def reply_backend(reply: str, context_length: int = 1 << 20) -> ScriptedBackend:
    """A fake model over bytes (plus EOS) that answers every prompt with ``reply``, byte by
    byte, then EOS; every forward is recorded. The prompt may come in more than one forward."""
    return SplitPromptBackend(reply=reply, context_length=context_length)


def forwards(backend: ScriptedBackend) -> list[tuple[str, int]]:
    """The backend's forwards so far, as ``(kind, n_tokens)``."""
    return [(call.kind, len(call.ids)) for call in backend.calls]


BEFORE = "def area(w, h):\n    return w + h\n"
AFTER = "def area(w, h):\n    return w * h\n"


def test_rewrite_decode_is_plain_greedy_and_strips_the_fence() -> None:
    reply = f"```python\n{AFTER}```"
    backend = reply_backend(reply)
    out = rewrite_decode(backend, BEFORE, "Fix area.")
    assert out.text == AFTER and out.raw == reply and out.stop == "eos"
    assert out.decoded_tokens == len(reply.encode())
    prompt = backend.tokenize(RewritePromptBuilder().build(BEFORE, "Fix area.", backend),
                              special=True)
    assert out.prompt_tokens == len(prompt)
    assert backend.cached_ids[:len(prompt)] == prompt
    # Plain greedy is one token per forward, the prompt's last token too: a batched row is not
    # bit-equal to a one-token step on llama.cpp, so the baseline must not read its first token
    # from the prompt's splice. The prompt but its last token in one splice, the last token
    # alone, then one decode step per output token (the last one's logits say EOS).
    assert forwards(backend) == ([("splice", len(prompt) - 1), ("decode", 1)]
                                 + [("decode", 1)] * len(reply.encode()))
    assert backend.calls[1].ids == (prompt[-1],)
    assert out.forwards == len(reply.encode())  # the steps after the prompt
    assert out.budget == rewrite_budget(len(BEFORE.encode()))

    again = rewrite_decode(backend, BEFORE, "Fix area.")  # the cached prompt prefix is reused
    assert again.text == AFTER
    assert forwards(backend)[len(reply) + 2 : len(reply) + 4] == [("splice", 1), ("decode", 1)]


def test_rewrite_decode_budget_and_context() -> None:
    backend = reply_backend("x" * 500)
    out = rewrite_decode(backend, BEFORE, "Fix area.", max_new_tokens=10)
    assert out.stop == "budget" and out.decoded_tokens == 10 and out.raw == "x" * 10
    # the prompt's last token, then a step after each output token but the last
    assert sum(1 for kind, _ in forwards(backend) if kind == "decode") == 1 + 9
    default = rewrite_decode(reply_backend("x" * 500), BEFORE, "Fix area.")
    assert default.stop == "budget" and default.decoded_tokens == rewrite_budget(len(BEFORE))

    prompt_len = len(backend.tokenize(RewritePromptBuilder().build(BEFORE, "Fix area.", backend)))
    tight = reply_backend("x" * 500, context_length=prompt_len + 5)
    out = rewrite_decode(tight, BEFORE, "Fix area.")
    assert out.stop == "context" and tight.n_tokens <= prompt_len + 5

    too_small = reply_backend(AFTER, context_length=10)
    text, _, error = RewriteBaseline(too_small)(py_row())
    assert text is None and error is not None and error.startswith("DocumentError")


def test_rewrite_baseline_as_an_approach() -> None:
    row = EditRow("quixbugs_python", "quix/gcd", QUIX_BUGGY, QUIX_FIXED,
                  instruction="Fix the bug in gcd.", lang="python",
                  meta={"tests": QUIX_TESTS})
    quality, (_, stats, _) = evaluate_row(row, "rewrite",
                                          RewriteBaseline(reply_backend(f"```\n{QUIX_FIXED}```")))
    assert quality.valid and quality.passed and quality.exact
    assert quality.decoded_tokens == stats["decoded_tokens"] == len(QUIX_FIXED) + 7
    assert stats["raw"] == f"```\n{QUIX_FIXED}```" and stats["stop"] == "eos"


def test_rewrite_mode_as_an_approach() -> None:
    row = py_row()
    reply = f"```python\n{row.after}```"
    session = EditSession(ScriptedBackend(reply=reply), mode="rewrite")
    quality, (text, stats, error) = evaluate_row(row, "rewrite-mode",
                                                 rewrite_mode_approach(session))
    assert text == row.after and error is None and quality.passed and quality.exact
    assert stats["raw"] == reply == rewrite_decode(reply_backend(reply), row.before,
                                                   row.instruction).raw
    assert quality.accepted_prediction_tokens == stats["accepted_prediction_tokens"]
    assert quality.forwards == stats["forwards"]
    assert quality.accepted_prediction_tokens > 0 and quality.forwards < len(reply)
    tight = EditSession(ScriptedBackend(reply=reply, context_length=50), mode="rewrite")
    text, _, error = rewrite_mode_approach(tight)(row)
    assert text is None and error is not None and error.startswith("DocumentError")
    with pytest.raises(ValueError, match="rewrite mode"):
        rewrite_mode_approach(EditSession(ScriptedBackend()))
    table = markdown_table(pool([quality]))
    assert "| accepted prediction | rejected prediction | same as rewrite |" in table


# --- program mode and the command ---------------------------------------------------------------


def test_program_approach_valid_and_invalid() -> None:
    row = py_row()
    session = EditSession(ScriptedBackend(row.before, oracle(row.before, row.after)))
    quality, (text, stats, error) = evaluate_row(row, "program", program_approach(session))
    assert text == row.after and error is None and quality.passed and quality.exact
    assert isinstance(stats["program"], str) and quality.decoded_tokens > 0

    class Failing:
        def edit(self, document: str, instruction: str) -> None:
            raise GenerationError("the edit ran out of context", partial_program="<copy")

    text, stats, error = program_approach(Failing())(row)  # type: ignore[arg-type]
    assert text is None and stats["partial_program"] == "<copy"
    assert error == "GenerationError: the edit ran out of context"


def test_data_path_and_approaches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(ConfigError, match=f"--data.*{DATA_ENV}"):
        data_path(None)
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    assert data_path(None) == tmp_path.resolve()
    assert data_path(str(tmp_path / "..")) == tmp_path.parent.resolve()
    assert parse_approaches("rewrite, program,rewrite") == ["rewrite", "program"]
    with pytest.raises(ConfigError):
        parse_approaches("program,magic")


def test_command_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    from copygram import cli
    from copygram.bench import quality

    assert cli._BENCHMARKS["quality"][0] == "copygram.bench.quality"
    rows = [py_row(row_id=f"py/{i}") for i in range(2)]
    data = tmp_path / "data"
    data.mkdir()
    with (data / "humanevalfix_docs_python.dev.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps({"id": row.id, "source": "", "lang": row.lang,
                                     "before": row.before, "instruction": row.instruction,
                                     "after": row.after, "meta": row.meta}) + "\n")
    session = EditSession(SplitPromptBackend(PY_BUGGY, oracle(PY_BUGGY, PY_FIXED)))
    configs: list[dict[str, object]] = []

    def from_config(config: dict[str, object]) -> EditSession:
        configs.append(config)
        return session

    monkeypatch.setattr(EditSession, "from_config", from_config)
    monkeypatch.setenv(DATA_ENV, str(data))
    out = tmp_path / "q.json"
    parser = argparse.ArgumentParser()
    quality.add_arguments(parser)
    args = parser.parse_args([
        "--datasets", "humanevalfix_docs_python", "--model", "tiny-model",
        "--json", str(out), "--rows", str(tmp_path / "rows.jsonl"), "--limit", "2"])
    assert quality.run(args) == 0
    assert configs[0]["model"] == "tiny-model" and configs[0]["backend"] == "llamacpp"
    pooled = json.loads(out.read_text())
    entry = pooled["humanevalfix_docs_python"]
    assert set(entry) == {"program", "rewrite", "rewrite-mode", UNCHANGED}
    assert entry["program"]["pass"] == 2 and entry["program"]["rows"] == 2
    assert entry[UNCHANGED]["pass"] == 0 and entry[UNCHANGED]["unchanged"] == 2
    assert entry["rewrite"]["valid"] == 2  # the scripted model writes its program as text
    assert entry["rewrite"]["pass"] == 0
    # Rewrite mode writes exactly what the baseline writes, on every row.
    assert entry["rewrite-mode"]["same_as_rewrite"] == 2
    assert entry["rewrite-mode"]["decoded_tokens"] == entry["rewrite"]["decoded_tokens"]
    lines = (tmp_path / "rows.jsonl").read_text().splitlines()
    assert len(lines) == 8
    captured = capsys.readouterr()
    assert "| humanevalfix_docs_python | program | 2/2 |" in captured.out
    assert "py/1: program=pass" in captured.err or "py/1: rewrite=" in captured.err
