"""``copygram edit``: output modes, atomic in-place writes that survive failures, bad input,
interrupts (in a fresh process, with real signals), progress and the diff.

The session is a scripted byte-level model (monkeypatched in for ``EditSession.from_config``); the
tests marked ``llamacpp`` run the real default model through ``python -m copygram``.
"""

from __future__ import annotations

import ast
import ctypes
import io
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from copygram import (
    BackendError,
    Copy,
    EditSession,
    Gen,
    GenerationError,
    Program,
    ProgramSyntaxError,
    edit_cli,
    parse,
    render,
    resolve,
)
from copygram.catalog import default_editor
from copygram.cli import main
from copygram.config import parse_config
from copygram.testing import ScriptedBackend
from tests.decode import test_renames as renames

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\n"
PROGRAM = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 5)])
EDITED = resolve(PROGRAM, DOCUMENT)


class _InterruptingBackend(ScriptedBackend):
    """Ctrl-C arrives during the third forward after the prompt (whatever its kind)."""

    def _append(self, kind: str, ids: Sequence[int]) -> None:
        if len(self.calls) == 3:
            raise KeyboardInterrupt
        super()._append(kind, ids)


def use_session(monkeypatch: pytest.MonkeyPatch, make: Callable[[], EditSession]) -> list[object]:
    """Make ``EditSession.from_config`` return ``make()``; returns the configs it was given."""
    seen: list[object] = []

    def from_config(cls: type[EditSession], config: object) -> EditSession:
        seen.append(config)
        return make()

    monkeypatch.setattr(EditSession, "from_config", classmethod(from_config))
    return seen


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    return use_session(monkeypatch, lambda: EditSession(ScriptedBackend(DOCUMENT, PROGRAM), syntax="lines",
                                                        mode="program"))


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "f.py"
    path.write_bytes(DOCUMENT.encode())
    path.chmod(0o640)
    return path


def folder_listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def run_cli(args: Sequence[str]) -> int:
    return main(["edit", *args])


def test_default_prints_a_unified_diff_and_leaves_the_file(
    scripted: list[object], doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli([str(doc), "-i", "add 2"]) == 0
    out, err = capsys.readouterr()
    assert f"--- a/{doc}" in out and f"+++ b/{doc}" in out
    assert "-    return x + 1\n" in out and "+    return x + 2\n" in out
    assert " def f(x):\n" in out  # context line
    assert "copygram:" in err and "copied tokens" in err  # the summary goes to stderr
    assert doc.read_bytes() == DOCUMENT.encode()
    # No --config: the defaults, with the catalog's best editor for this machine as the model.
    assert scripted == [parse_config({"model": default_editor()[0]})]


def test_quiet_and_show_program(scripted: list[object], doc: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([str(doc), "-i", "x", "--quiet", "--show-program"]) == 0
    err = capsys.readouterr().err
    assert render(PROGRAM) in err and "copied tokens" not in err


def test_output_file(scripted: list[object], doc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = doc.parent / "out.py"
    assert run_cli([str(doc), "-i", "x", "-o", str(out), "--quiet"]) == 0
    assert out.read_bytes() == EDITED.encode()
    assert doc.read_bytes() == DOCUMENT.encode()
    assert capsys.readouterr().out == ""
    assert folder_listing(doc) == ["f.py", "out.py"]


def test_in_place_writes_atomically_and_keeps_permissions(scripted: list[object], doc: Path) -> None:
    assert run_cli([str(doc), "-i", "x", "--in-place", "--quiet"]) == 0
    assert doc.read_bytes() == EDITED.encode()
    assert stat.S_IMODE(doc.stat().st_mode) == 0o640
    assert folder_listing(doc) == ["f.py"]


def test_config_path_is_passed_on(scripted: list[object], doc: Path) -> None:
    config = doc.parent / "c.toml"
    config.write_text('backend = "llamacpp"\n')
    assert run_cli([str(doc), "-i", "x", "--config", str(config), "--quiet"]) == 0
    # Parsed once, by the command; a config that names no model edits with the default editor.
    assert scripted == [parse_config({"backend": "llamacpp", "model": default_editor()[0]})]
    config.write_text('backend = "llamacpp"\nmodel = "smollm2-135m"\n')
    assert run_cli([str(doc), "-i", "x", "--config", str(config), "--quiet"]) == 0
    assert scripted[-1] == parse_config(config)


def _assert_untouched(doc: Path) -> None:
    assert doc.read_bytes() == DOCUMENT.encode()
    assert stat.S_IMODE(doc.stat().st_mode) == 0o640
    assert folder_listing(doc) == ["f.py"]


def test_in_place_generation_error_leaves_the_file_byte_identical(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_session(monkeypatch,
                lambda: EditSession(ScriptedBackend(DOCUMENT, PROGRAM), syntax="lines", max_new_tokens=4,
                                    mode="program"))
    assert run_cli([str(doc), "-i", "x", "--in-place"]) == 1
    assert "max_new_tokens" in capsys.readouterr().err
    _assert_untouched(doc)


def test_in_place_ctrl_c_mid_edit_leaves_the_file_byte_identical(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_session(monkeypatch, lambda: EditSession(_InterruptingBackend(DOCUMENT, PROGRAM), syntax="lines",
                                                 mode="program"))
    assert run_cli([str(doc), "-i", "x", "--in-place"]) == 130
    assert "interrupted" in capsys.readouterr().err
    _assert_untouched(doc)


def test_in_place_ctrl_c_during_the_write_leaves_the_file_byte_identical(
    scripted: list[object], monkeypatch: pytest.MonkeyPatch, doc: Path
) -> None:
    def interrupted_replace(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted_replace)
    assert run_cli([str(doc), "-i", "x", "--in-place", "--quiet"]) == 130
    _assert_untouched(doc)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"caf\xe9\n", "not UTF-8"), (b"ELF\x00\x01\x02", "binary")],
    ids=["latin-1", "binary"],
)
def test_non_text_files_fail_clearly(scripted: list[object], tmp_path: Path, content: bytes,
                                     message: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "data"
    path.write_bytes(content)
    assert run_cli([str(path), "-i", "x", "--in-place"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("copygram: error:") and message in err and str(path) in err
    assert path.read_bytes() == content
    assert scripted == []  # failed before any model was loaded


def test_missing_file_and_missing_config(scripted: list[object], doc: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([str(doc.parent / "nope.py"), "-i", "x"]) == 1
    assert "no such file" in capsys.readouterr().err
    missing = doc.parent / "missing.toml"
    assert run_cli([str(doc), "-i", "x", "--config", str(missing)]) == 1
    err = capsys.readouterr().err
    assert "--config" in err and str(missing) in err and "no such file" in err
    assert scripted == []


def test_in_place_and_output_are_exclusive(doc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run_cli([str(doc), "-i", "x", "--in-place", "-o", "out"])
    assert info.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


# --- files --------------------------------------------------------------------------------------


def test_in_place_on_a_symlink_edits_its_target(scripted: list[object], doc: Path) -> None:
    link = doc.parent / "elsewhere" / "link.py"
    link.parent.mkdir()
    link.symlink_to("../f.py")
    assert run_cli([str(link), "-i", "x", "--in-place", "--quiet"]) == 0
    assert link.is_symlink() and os.readlink(link) == "../f.py"
    assert doc.read_bytes() == EDITED.encode()
    assert stat.S_IMODE(doc.stat().st_mode) == 0o640
    assert folder_listing(doc) == ["elsewhere", "f.py"] and folder_listing(link) == ["link.py"]


def test_in_place_refuses_a_read_only_file_before_the_model_loads(
    scripted: list[object], doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc.chmod(0o444)
    assert run_cli([str(doc), "-i", "x", "--in-place"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("copygram: error:") and "read-only" in err and "chmod u+w" in err
    assert doc.read_bytes() == DOCUMENT.encode() and stat.S_IMODE(doc.stat().st_mode) == 0o444
    assert scripted == []


@pytest.mark.parametrize("case", ["missing folder", "directory", "read-only", "locked folder"])
def test_a_bad_output_path_fails_before_the_model_loads(
    scripted: list[object], doc: Path, monkeypatch: pytest.MonkeyPatch, case: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, message = {
        "missing folder": (doc.parent / "no" / "out.py", "does not exist"),
        "directory": (doc.parent, "is a directory"),
        "read-only": (doc.parent / "ro.py", "read-only"),
        "locked folder": (doc.parent / "locked" / "out.py", "cannot create files"),
    }[case]
    if case == "read-only":
        out.write_text("keep")
        out.chmod(0o444)
    if case == "locked folder":  # a folder the user may not write (root may write any)
        out.parent.mkdir()
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda path, mode: (
            Path(path) != out.parent and real_access(path, mode)))
    assert run_cli([str(doc), "-i", "x", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("copygram: error:") and message in err and "Traceback" not in err
    assert scripted == []  # checked before the model loaded


def test_output_dash_writes_the_document_to_stdout(
    scripted: list[object], doc: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(doc.parent)
    assert run_cli([str(doc), "-i", "x", "-o", "-", "--quiet"]) == 0
    assert capsys.readouterr().out == EDITED
    assert folder_listing(doc) == ["f.py"] and doc.read_bytes() == DOCUMENT.encode()


def test_a_file_changed_during_an_in_place_edit_is_not_overwritten(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = "# another program's edit\n"

    class Backend(ScriptedBackend):  # another editor saves the file during the generation
        def _append(self, kind: str, ids: Sequence[int]) -> None:
            if len(self.calls) == 3:
                doc.write_text(other)
            super()._append(kind, ids)

    use_session(monkeypatch, lambda: EditSession(Backend(DOCUMENT, PROGRAM), syntax="lines",
                                                 mode="program"))
    assert run_cli([str(doc), "-i", "x", "--in-place", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "changed while copygram was editing it" in err and "nothing was written" in err
    assert doc.read_text() == other
    assert folder_listing(doc) == ["f.py"]


# --- the instruction, --show-program, progress ---------------------------------------------------


@pytest.mark.parametrize("instruction", ["", "  \t\n"], ids=["empty", "whitespace"])
def test_an_empty_instruction_is_refused_before_the_model_loads(
    scripted: list[object], doc: Path, instruction: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli([str(doc), "-i", instruction, "--in-place"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("copygram: error:") and "instruction (-i) is empty" in err
    assert scripted == []
    _assert_untouched(doc)


def test_show_program_prints_the_partial_program_on_error(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def session() -> EditSession:
        return EditSession(ScriptedBackend(DOCUMENT, PROGRAM), syntax="lines", max_new_tokens=12,
                           mode="program")

    with pytest.raises(GenerationError) as info:
        session().edit(DOCUMENT, "x")
    partial = info.value.partial_program
    assert partial and render(PROGRAM).startswith(partial)
    use_session(monkeypatch, session)
    assert run_cli([str(doc), "-i", "x", "--show-program", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"--- partial program (the run failed) ---\n{partial}\n--- end of program ---" in err
    assert "max_new_tokens" in err


class _Clock:
    """A fake ``time.monotonic`` that advances ``step`` seconds at every call."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_off_a_terminal_is_plain_lines_at_most_once_a_second() -> None:
    stream = io.StringIO()
    clock = _Clock(0.3)
    progress = edit_cli._Progress(stream, True, clock)  # created at t=0.3
    for _ in range(10):  # t = 0.6 .. 3.3: lines at 1.5 and 2.7 only
        progress.update(generated=1, copied=2)
    progress.close()
    assert stream.getvalue() == ("copygram: 4 generated, 8 copied tokens\n"
                                 "copygram: 8 generated, 16 copied tokens\n")


def test_progress_on_a_terminal_redraws_one_line() -> None:
    stream = _Terminal()
    progress = edit_cli._Progress(stream, True, _Clock(0.06))  # created at t=0.06
    progress.status("loading the model")
    for _ in range(4):  # t = 0.12 .. 0.3: redrawn at 0.18 and 0.3
        progress.update(generated=1)
    progress.close()
    loading = "copygram: loading the model"
    assert stream.getvalue() == ("\r" + loading
                                 + "\r" + "copygram: 2 generated, 0 copied tokens".ljust(len(loading))
                                 + "\r" + "copygram: 4 generated, 0 copied tokens".ljust(len(loading))
                                 + "\n")


def test_a_long_prompt_shows_how_far_it_is_read() -> None:
    stream = io.StringIO()
    progress = edit_cli._Progress(stream, True, _Clock(2.0))  # created at t=2
    for done in (0, 1024, 2048, 3000):  # t = 4 .. 10; the last: read, no line
        progress.prefill(done, 3000, 0)
    progress.prefill(0, 900, 0)  # a short prompt: no line
    for done in (1200, 1232, 21200):  # t = 14 .. 18: 32 tokens in 2 s, 20,000 in 4 s
        progress.prefill(done, 41200, 1200)
    assert stream.getvalue() == (
        "copygram: reading the prompt: 0 of 3000 tokens\n"
        "copygram: reading the prompt: 1024 of 3000 tokens (512 tokens/s, ~4 s left)\n"
        "copygram: reading the prompt: 2048 of 3000 tokens (512 tokens/s, ~2 s left)\n"
        "copygram: reading the prompt: 1200 of 41200 tokens (1200 found in the cache)\n"
        "copygram: reading the prompt: 1232 of 41200 tokens (16 tokens/s, ~42 min left)\n"
        "copygram: reading the prompt: 21200 of 41200 tokens (5000 tokens/s, ~4 s left)\n")


def test_an_error_on_a_terminal_starts_on_a_line_of_its_own(
    monkeypatch: pytest.MonkeyPatch, doc: Path
) -> None:
    def failing_load() -> EditSession:
        raise BackendError("no model here")

    use_session(monkeypatch, failing_load)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert run_cli([str(doc), "-i", "x"]) == 1
    assert terminal.getvalue() == "\rcopygram: loading the model\ncopygram: error: no model here\n"


@pytest.mark.parametrize("quiet", [False, True], ids=["progress", "quiet"])
def test_the_command_shows_progress_on_a_non_tty(
    scripted: list[object], doc: Path, monkeypatch: pytest.MonkeyPatch, quiet: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(edit_cli, "monotonic", _Clock(0.6))  # a slow run: a line every 2 events
    assert run_cli([str(doc), "-i", "x", *(["--quiet"] if quiet else [])]) == 0
    err = capsys.readouterr().err
    progress = re.findall(r"^copygram: \d+ generated, \d+ copied tokens$", err, re.MULTILINE)
    if quiet:
        assert err == ""
    else:
        assert err.startswith("copygram: loading the model\n") and "\r" not in err
        assert len(progress) >= 3


# --- the diff -----------------------------------------------------------------------------------


def test_the_diff_of_a_cr_only_file_has_no_missing_newline_markers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = DOCUMENT.replace("\n", "\r")
    program = Program([Copy(1, 1), Gen("    return x + 2\r"), Copy(3, 5)])
    use_session(monkeypatch, lambda: EditSession(ScriptedBackend(document, program), syntax="lines",
                                                 mode="program"))
    path = tmp_path / "mac.py"
    path.write_bytes(document.encode())
    assert run_cli([str(path), "-i", "x", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "No newline" not in out
    assert "-    return x + 1\r\n+    return x + 2\r\n" in out and " def f(x):\r\n" in out


def test_only_a_last_line_without_terminator_gets_the_marker() -> None:
    # terminator -> how a diff line shows it: a bare \r gets a \n so that the diff has lines
    for ending, shown in [("\r", "\r\n"), ("\n", "\n"), ("\r\n", "\r\n")]:
        before, after = f"a{ending}b{ending}c", f"a{ending}B{ending}c"
        diff = "".join(edit_cli.diff_lines(before, after, Path("f")))
        assert diff.endswith(f"-b{shown}+B{shown} c\n\\ No newline at end of file\n"), diff
        assert diff.count("No newline") == 1
    diff = "".join(edit_cli.diff_lines("a\rb\r", "a\rb", Path("f")))
    assert diff.endswith("-b\r\n+b\n\\ No newline at end of file\n")


@pytest.fixture
def real_model() -> None:
    from copygram.errors import BackendError
    from copygram.testing import default_model_path

    try:
        default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))


ADD_PY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
# An edit the default model (SmolLM2-135M) finishes in program mode's default, head blocks: with
# a call after the function it writes the function fixed, then the call, then loops on calls of
# its own (the repeat guard stops it); the copy tags looped in a gen on ADD_PY.
IS_EVEN_PY = 'def is_even(n):\n    """True when n is even."""\n    return n % 2 == 1\n'


@pytest.mark.llamacpp
def test_real_model_end_to_end(tmp_path: Path, real_model: None) -> None:
    source = tmp_path / "add.py"
    source.write_text(IS_EVEN_PY)
    before = source.read_bytes()
    out = tmp_path / "out.py"
    proc = subprocess.run(
        [sys.executable, "-m", "copygram", "edit", str(source), "-i", "Fix is_even.",
         "-o", str(out), "--show-program", "--model", "smollm2-135m"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--- program ---" in proc.stderr and "copied tokens" in proc.stderr
    assert source.read_bytes() == before
    edited = out.read_text(encoding="utf-8")
    assert edited  # the edit program resolved to a document
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.py", "out.py"]


# --- interrupts ---------------------------------------------------------------------------------


def signal_from_native_code(signum: int) -> None:
    """Send ``signum`` to this process from inside a ctypes callback, where llama.cpp's log
    callback gets it during a model load: ctypes drops the exception the handler raises there."""

    def callback() -> None:
        os.kill(os.getpid(), signum)
        for _ in range(1000):  # the handler runs here, inside the callback
            pass

    ctypes.CFUNCTYPE(None)(callback)()


def child_main(moment: str, signum: int, path: str) -> int:
    """Run in a fresh process: ``copygram edit PATH --in-place`` with the scripted model, and
    ``signum`` from native code during the model load or the third forward of the generation."""

    class Backend(ScriptedBackend):
        def _append(self, kind: str, ids: Sequence[int]) -> None:
            if moment == "generation" and len(self.calls) == 3:
                signal_from_native_code(signum)
            super()._append(kind, ids)

    def load() -> EditSession:
        session = EditSession(Backend(DOCUMENT, PROGRAM), syntax="lines", mode="program")
        if moment == "load":
            signal_from_native_code(signum)
        return session

    use_session(pytest.MonkeyPatch(), load)
    return main(["edit", path, "-i", "x", "--in-place", "--quiet"])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("moment", ["load", "generation"])
def test_a_signal_that_native_code_swallows_still_stops_the_run(doc: Path, moment: str,
                                                                signum: int) -> None:
    code = (f"from tests.test_edit_cli import child_main; "
            f"raise SystemExit(child_main({moment!r}, {int(signum)}, {str(doc)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 128 + signum, proc.stderr
    assert "copygram: interrupted" in proc.stderr
    assert "Exception ignored" not in proc.stderr  # the dropped exception is not reported
    _assert_untouched(doc)


def test_an_ignored_sigint_stays_ignored(monkeypatch: pytest.MonkeyPatch, doc: Path) -> None:
    # As a shell starts a background job: Ctrl-C at the terminal is not for it.
    def load() -> EditSession:
        signal_from_native_code(signal.SIGINT)
        return EditSession(ScriptedBackend(DOCUMENT, PROGRAM), syntax="lines", mode="program")

    use_session(monkeypatch, load)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert run_cli([str(doc), "-i", "x", "--in-place", "--quiet"]) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    assert doc.read_bytes() == EDITED.encode()


@pytest.mark.parametrize("after_rename", [False, True], ids=["before-rename", "after-rename"])
def test_a_signal_during_the_write_gives_all_or_nothing(
    scripted: list[object], monkeypatch: pytest.MonkeyPatch, doc: Path, after_rename: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if not after_rename:
            os.kill(os.getpid(), signal.SIGINT)

    def replace(src: str, dst: str) -> None:
        real_replace(src, dst)
        if after_rename:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    code = run_cli([str(doc), "-i", "x", "--in-place", "--quiet"])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    err = capsys.readouterr().err
    if after_rename:  # too late to stop: the edit is whole, and the run says so
        assert code == 0 and doc.read_bytes() == EDITED.encode()
        assert "interrupt came after" in err and "the edit is complete" in err
        assert folder_listing(doc) == ["f.py"]
    else:
        assert code == 130 and "interrupted" in err
        _assert_untouched(doc)


def _signal_run(path: Path, signum: int, anchor: str, delay: float) -> tuple[int, str, bool]:
    """``copygram edit PATH --in-place`` on the default model, sent ``signum`` ``delay`` seconds
    after ``anchor``: the start, the line saying that the model loads, or the first progress line
    (which a short edit may finish without). Returns the exit code, stderr, and whether the
    anchor was seen."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "copygram", "edit", str(path), "-i", "Fix the bug in add.",
         "--in-place", "--show-program", "--model", "smollm2-135m"],
        cwd=path.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stderr is not None
    marker = {"start": "", "load": "copygram: loading the model", "generation": " generated, "}
    seen = ""
    while marker[anchor] not in seen:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    time.sleep(delay)
    proc.send_signal(signum)
    _, rest = proc.communicate(timeout=120)
    return proc.returncode, seen + rest, marker[anchor] in seen


@pytest.mark.llamacpp
@pytest.mark.parametrize(
    ("signum", "anchor", "delay"),
    [(signal.SIGINT, "start", 0.05), (signal.SIGINT, "start", 0.4),
     (signal.SIGINT, "load", 0.0), (signal.SIGINT, "load", 0.3), (signal.SIGINT, "load", 0.6),
     (signal.SIGINT, "generation", 0.0), (signal.SIGTERM, "start", 0.2),
     (signal.SIGTERM, "load", 0.0), (signal.SIGTERM, "load", 0.5),
     (signal.SIGTERM, "generation", 0.0)],
)
def test_real_model_signal_at_any_moment_writes_all_or_nothing(
    tmp_path: Path, real_model: None, signum: int, anchor: str, delay: float
) -> None:
    path = tmp_path / "add.py"
    path.write_text(ADD_PY)
    code, err, anchored = _signal_run(path, signum, anchor, delay)
    assert anchored or anchor == "generation", err
    assert "Exception ignored" not in err, err
    assert os.listdir(tmp_path) == ["add.py"]  # no temporary file left
    # The load then the generation take seconds: a signal as the load starts is in time.
    in_time = (anchor, delay) == ("load", 0.0)
    if code == 0 and not in_time:  # the run finished before the signal: all of the edit is written
        program = re.search(r"--- program ---\n(.*)\n--- end of program ---", err, re.DOTALL)
        assert program, err
        try:  # the default route's head blocks, unless the program was redone as a rewrite
            expected = resolve(parse(program.group(1), "search_replace", ADD_PY), ADD_PY)
        except ProgramSyntaxError:
            ast.parse(path.read_text())  # a whole rewrite, checked before it was written
        else:
            assert path.read_text() == expected
        return
    assert path.read_text() == ADD_PY
    if anchor == "start" and "copygram: interrupted" not in err:
        # The signal came while Python itself started (site, the first imports), before copygram
        # installed its handlers: Python's defaults ended it (killed, or "Fatal Python error").
        assert code != 0, err
    else:
        assert code == 128 + signum and "Traceback" not in err, err


def test_compare_plain_decodes_the_output_again_one_token_per_forward(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM)
    use_session(monkeypatch, lambda: EditSession(backend, syntax="lines", mode="program"))
    assert run_cli([str(doc), "-i", "add 2", "--compare-plain"]) == 0
    _, err = capsys.readouterr()
    edited = DOCUMENT.replace("x + 1", "x + 2")
    n = len(edited.encode())  # the fake model's tokens are bytes
    assert f"plain decoding of the same {n} output tokens" in err
    decodes = [call for call in backend.calls if call.kind == "decode"]
    assert [call.ids[0] for call in decodes[-n:]] == list(edited.encode())


def _damaging_session() -> EditSession:
    # A rewrite that duplicates f: the edit would damage the file (copygram.decode.checked).
    return EditSession(ScriptedBackend(reply=DOCUMENT + "\n\ndef f(x):\n    return 0\n"),
                       mode="rewrite")


def test_a_damaged_edit_is_not_written_without_force(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_session(monkeypatch, _damaging_session)
    assert run_cli([str(doc), "-i", "x", "--in-place", "--quiet", "--show-program"]) == 1
    err = capsys.readouterr().err
    assert "would damage the file" in err and "f is defined 2 times" in err
    assert "--- program (its edit would damage the file) ---" in err
    _assert_untouched(doc)
    assert run_cli([str(doc), "-i", "x", "--in-place", "--quiet", "--force"]) == 0
    assert "writing a damaged edit (--force)" in capsys.readouterr().err
    assert doc.read_text().count("def f(x):") == 2


def test_a_kept_damaged_edit_is_not_written_without_force(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def keep() -> EditSession:
        return _damaging_session().derive(on_damage="keep")

    use_session(monkeypatch, keep)
    assert run_cli([str(doc), "-i", "x", "--in-place", "--quiet"]) == 1
    assert "would damage the file" in capsys.readouterr().err
    _assert_untouched(doc)


def test_several_files_in_one_call_load_the_model_once_and_write_each(
    scripted: list[object], doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = doc.parent / "g.py"
    other.write_bytes(DOCUMENT.encode())
    assert run_cli([str(doc), str(other), "-i", "x", "--in-place"]) == 0
    assert doc.read_bytes() == other.read_bytes() == EDITED.encode()
    assert scripted == [parse_config({"model": default_editor()[0]})]  # one load
    err = capsys.readouterr().err
    # A summary line per file, named.
    assert f"copygram: {doc}: " in err and f"copygram: {other}: " in err


def test_several_files_print_a_diff_of_each(
    scripted: list[object], doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = doc.parent / "g.py"
    other.write_bytes(DOCUMENT.encode())
    assert run_cli([str(doc), str(other), "-i", "x", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"+++ b/{doc}" in out and f"+++ b/{other}" in out
    assert doc.read_bytes() == other.read_bytes() == DOCUMENT.encode()


def test_one_failing_file_is_reported_and_the_others_are_edited(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The scripted model writes PROGRAM whatever the file; on a one-line file its copies of lines
    # 3-5 cannot be written, so that file's run fails.
    use_session(monkeypatch, lambda: EditSession(ScriptedBackend(DOCUMENT, PROGRAM),
                                                 syntax="lines", mode="program",
                                                 on_damage="error", max_new_tokens=200))
    short = doc.parent / "short.py"
    short.write_bytes(b"x = 1\n")
    assert run_cli([str(doc), str(short), "-i", "x", "--in-place", "--quiet"]) == 1
    assert doc.read_bytes() == EDITED.encode()
    assert short.read_bytes() == b"x = 1\n"
    err = capsys.readouterr().err
    assert f"copygram: {short}: error: " in err and "1 of 2 files not edited" in err


@pytest.mark.parametrize("flags", [["-o", "out.py"], ["-o", "-"]])
def test_one_output_for_several_files_is_refused_before_the_model_loads(
    scripted: list[object], doc: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli([str(doc), str(doc.parent / "g.py"), "-i", "x", *flags]) == 1
    assert "-o names one output" in capsys.readouterr().err and scripted == []
    assert run_cli([str(doc), str(doc), "-i", "x", "--in-place"]) == 1
    assert "named twice" in capsys.readouterr().err and scripted == []


def test_model_names_the_model_over_the_config(scripted: list[object], doc: Path) -> None:
    config = doc.parent / "c.toml"
    config.write_text('model = "smollm2-135m"\nn_ctx = 2048\n')
    assert run_cli([str(doc), "-i", "x", "--model", "qwen2.5-coder-1.5b", "--quiet",
                    "--config", str(config)]) == 0
    assert scripted == [parse_config({"model": "qwen2.5-coder-1.5b", "n_ctx": 2048})]
    assert run_cli([str(doc), "-i", "x", "--model", "no-such-model", "--quiet"]) == 1
    assert len(scripted) == 1  # a bad name fails before any load


def test_the_summary_says_when_documented_calls_were_renamed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not the model's text (copygram.decode.renames): the summary says so.
    use_session(monkeypatch, lambda: renames.session("program"))
    path = tmp_path / "g.py"
    path.write_text(renames.DOCUMENT)
    assert run_cli([str(path), "-i", renames.INSTRUCTION, "--in-place"]) == 0
    assert ">>> add_one(1)" in path.read_text()
    assert "2 call(s) of the old name in comments or docstrings renamed too" in (
        capsys.readouterr().err)


def test_the_summary_says_when_a_partial_reply_was_put_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Auto's rewrite whose reply was median alone: the file keeps its other functions, and the
    # summary says they were kept as they were (not the model's text).
    from tests.decode import test_checked as checked

    docstring = checked.MEDIAN[checked.MEDIAN.index('    """'):checked.MEDIAN.index("    ordered")]
    documented = checked.MEDIAN.replace(docstring, '    """The middle value."""\n')
    use_session(monkeypatch, lambda: checked.session("unused", documented, mode="auto"))
    path = tmp_path / "stats.py"
    path.write_text(checked.STATS)
    instruction = 'Replace the docstring of median with """The middle value."""'
    assert run_cli([str(path), "-i", instruction, "--in-place"]) == 0
    assert path.read_text() == checked.STATS.replace(checked.MEDIAN, documented)
    assert "left out 3 definition(s) the instruction does not name; kept as the file had them" in (
        capsys.readouterr().err)


def test_the_summary_says_when_lines_were_put_in_the_file_s_indentation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A head block that wrote a tab-indented file's function in four spaces: the file keeps its
    # tabs, and the summary says the model's lines were re-indented (not the model's text).
    from copygram import EditSession
    from copygram.language.indent_style import relaid_text
    from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
    from copygram.testing import PromptedBackend
    from tests.decode import test_checked as checked

    program = (BLOCK_OPEN + "def median(values):\n" + DIVIDER + checked.MEDIAN_FIXED
               + BLOCK_CLOSE)
    use_session(monkeypatch, lambda: EditSession(
        PromptedBackend(checked.TABBED, replies=(("", program),)), mode="program",
        focus_tokens=4096, tabs_as_spaces=False))  # the file shown in tabs, as it was
    path = tmp_path / "stats.py"
    path.write_text(checked.TABBED)
    assert run_cli([str(path), "-i", "Fix median.", "--in-place"]) == 0
    assert path.read_text() == relaid_text(checked.FIXED, "    ", "\t")
    assert "line(s) in another indentation than the file's; written in the file's" in (
        capsys.readouterr().err)
    # By default the model reads the file in four spaces, and the summary says so.
    use_session(monkeypatch, lambda: EditSession(
        PromptedBackend(relaid_text(checked.TABBED, "\t", "    "), replies=(("", program),)),
        mode="program", focus_tokens=4096))
    path.write_text(checked.TABBED)
    assert run_cli([str(path), "-i", "Fix median.", "--in-place"]) == 0
    assert path.read_text() == relaid_text(checked.FIXED, "    ", "\t")
    assert "the file's tabs were shown to the model as four spaces" in capsys.readouterr().err
