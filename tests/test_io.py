"""Atomic writes keep the user's file whole (content, permissions) whatever goes wrong."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from copygram.errors import DocumentError
from copygram.io import read_document, writable_target, write_bytes_atomic, write_text_atomic


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


def test_replaces_content_and_keeps_permissions(tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_bytes(b"#!/bin/sh\necho old\n")
    path.chmod(0o751)
    write_text_atomic(path, "#!/bin/sh\necho new \u00e9\r\n")
    assert path.read_bytes() == "#!/bin/sh\necho new \u00e9\r\n".encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert _leftovers(tmp_path, {"script.sh"}) == []


def test_creates_a_new_file(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    write_text_atomic(path, "hello\n")
    assert path.read_text(encoding="utf-8") == "hello\n"
    assert _leftovers(tmp_path, {"new.txt"}) == []


def test_relative_path_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_text_atomic(Path("rel.txt"), "x")
    assert (tmp_path / "rel.txt").read_text() == "x"


@pytest.mark.parametrize(("error", "raised"), [(OSError("disk full"), DocumentError),
                                               (KeyboardInterrupt(), KeyboardInterrupt)])
def test_failure_leaves_the_file_byte_identical_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException,
    raised: type[BaseException],
) -> None:
    path = tmp_path / "doc.txt"
    original = b"line 1\r\nline 2\n\xe2\x82\xac"
    path.write_bytes(original)
    path.chmod(0o640)

    def failing_replace(src: object, dst: object) -> None:
        raise error

    monkeypatch.setattr(os, "replace", failing_replace)
    # An OS error becomes a typed error that says the file is unchanged; Ctrl-C stays Ctrl-C.
    with pytest.raises(raised):
        write_bytes_atomic(path, b"something else entirely")
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert _leftovers(tmp_path, {"doc.txt"}) == []


def test_failure_while_writing_the_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "doc.txt"
    path.write_bytes(b"keep me\n")

    def failing_fsync(fd: int) -> None:
        raise OSError("I/O error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(DocumentError, match="I/O error.*the file is unchanged"):
        write_text_atomic(path, "new")
    assert path.read_bytes() == b"keep me\n"
    assert _leftovers(tmp_path, {"doc.txt"}) == []


def test_read_document_is_exact_and_rejects_non_text(tmp_path: Path) -> None:
    text = tmp_path / "t.txt"
    text.write_bytes(b"a\r\nb\rc\n")
    assert read_document(text) == "a\r\nb\rc\n"  # no newline translation
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("caf\u00e9\n".encode("latin-1"))
    with pytest.raises(DocumentError, match="not UTF-8"):
        read_document(latin)
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"ab\x00cd")
    with pytest.raises(DocumentError, match="binary"):
        read_document(binary)
    with pytest.raises(DocumentError, match="no such file"):
        read_document(tmp_path / "missing.txt")
    with pytest.raises(DocumentError, match="directory"):
        read_document(tmp_path)


def test_a_symlink_stays_a_link_and_its_target_gets_the_edit(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    target = real / "doc.txt"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    first = tmp_path / "first"
    first.symlink_to("real/doc.txt")  # relative, and a chain of two links
    second = tmp_path / "second"
    second.symlink_to(first)
    write_text_atomic(second, "new\n")
    assert second.is_symlink() and os.readlink(second) == str(first)
    assert first.is_symlink() and os.readlink(first) == "real/doc.txt"
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _leftovers(tmp_path, {"real", "first", "second"}) == []
    assert _leftovers(real, {"doc.txt"}) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        write_text_atomic(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == mode


def test_a_read_only_file_is_refused_even_for_root(tmp_path: Path) -> None:
    # Root may write a 0444 file (os.access says yes); the mode bits are what is checked.
    path = tmp_path / "frozen.txt"
    path.write_bytes(b"keep\n")
    path.chmod(0o444)
    with pytest.raises(DocumentError, match=r"read-only \(mode 0444\).*chmod u\+w"):
        write_text_atomic(path, "changed\n")
    assert path.read_bytes() == b"keep\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert _leftovers(tmp_path, {"frozen.txt"}) == []


def test_writable_target_refuses_what_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(DocumentError, match="does not exist; create it first"):
        writable_target(tmp_path / "missing" / "out.txt")
    with pytest.raises(DocumentError, match="is a directory"):
        writable_target(tmp_path)
    with pytest.raises(DocumentError, match="not a regular file"):
        writable_target(Path("/dev/null"))
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access

    def access(path: object, mode: int) -> bool:  # a folder the user may not write (as non-root)
        return False if Path(str(path)) == locked else real_access(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(DocumentError, match="cannot create files in"):
        writable_target(locked / "out.txt")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "missing.txt")  # a dangling link: its target is created
    assert writable_target(link) == tmp_path / "missing.txt"


def test_a_file_changed_since_it_was_read_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    path.write_bytes(b"the other program's edit\n")  # it held b"original\n" when read
    with pytest.raises(DocumentError, match="changed while copygram was editing.*nothing was"):
        write_text_atomic(path, "copygram's edit\n", expected=b"original\n")
    assert path.read_bytes() == b"the other program's edit\n"
    path.unlink()
    with pytest.raises(DocumentError, match="was removed while copygram was editing"):
        write_text_atomic(path, "copygram's edit\n", expected=b"original\n")
    assert _leftovers(tmp_path, set()) == []
    path.write_bytes(b"original\n")
    write_text_atomic(path, "copygram's edit\n", expected=b"original\n")
    assert path.read_text() == "copygram's edit\n"


def test_before_commit_can_stop_the_write(tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    path.write_bytes(b"keep\n")

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(path, "new\n", before_commit=interrupted)
    assert path.read_bytes() == b"keep\n"
    assert _leftovers(tmp_path, {"doc.txt"}) == []
