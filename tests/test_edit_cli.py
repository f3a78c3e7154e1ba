"""``copygram edit``: output modes, atomic in-place writes that survive failures, bad input.

The session is a scripted byte-level model (monkeypatched in for ``EditSession.from_config``); one
end-to-end test runs the real default model through ``python -m copygram``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from copygram import Copy, Gen, Program, resolve
from copygram.backends.scripted import ScriptedBackend
from copygram.cli import main
from copygram.session import EditSession

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
    return use_session(monkeypatch, lambda: EditSession(ScriptedBackend(DOCUMENT, PROGRAM)))


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
    assert scripted == [{}]  # no --config: the default config


def test_quiet_and_show_program(scripted: list[object], doc: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([str(doc), "-i", "x", "--quiet", "--show-program"]) == 0
    err = capsys.readouterr().err
    assert PROGRAM.render() in err and "copied tokens" not in err


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
    assert scripted == [config]


def _assert_untouched(doc: Path) -> None:
    assert doc.read_bytes() == DOCUMENT.encode()
    assert stat.S_IMODE(doc.stat().st_mode) == 0o640
    assert folder_listing(doc) == ["f.py"]


def test_in_place_generation_error_leaves_the_file_byte_identical(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_session(monkeypatch,
                lambda: EditSession(ScriptedBackend(DOCUMENT, PROGRAM), max_new_tokens=4))
    assert run_cli([str(doc), "-i", "x", "--in-place"]) == 1
    assert "max_new_tokens" in capsys.readouterr().err
    _assert_untouched(doc)


def test_in_place_ctrl_c_mid_edit_leaves_the_file_byte_identical(
    monkeypatch: pytest.MonkeyPatch, doc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_session(monkeypatch, lambda: EditSession(_InterruptingBackend(DOCUMENT, PROGRAM)))
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


@pytest.mark.llamacpp
def test_real_model_end_to_end(tmp_path: Path) -> None:
    from copygram.backends.model import default_model_path
    from copygram.errors import BackendError

    try:
        default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))
    source = tmp_path / "add.py"
    source.write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    before = source.read_bytes()
    out = tmp_path / "out.py"
    proc = subprocess.run(
        [sys.executable, "-m", "copygram", "edit", str(source), "-i", "Fix the bug in add.",
         "-o", str(out), "--show-program"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--- program ---" in proc.stderr and "copied tokens" in proc.stderr
    assert source.read_bytes() == before
    edited = out.read_text(encoding="utf-8")
    assert edited  # the edit program resolved to a document
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.py", "out.py"]
