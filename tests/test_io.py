"""Atomic writes keep the user's file whole (content, permissions) whatever goes wrong."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from copygram.errors import DocumentError
from copygram.io import read_document, write_bytes_atomic, write_text_atomic


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


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_failure_leaves_the_file_byte_identical_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    path = tmp_path / "doc.txt"
    original = b"line 1\r\nline 2\n\xe2\x82\xac"
    path.write_bytes(original)
    path.chmod(0o640)

    def failing_replace(src: object, dst: object) -> None:
        raise error

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(type(error)):
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
    with pytest.raises(OSError, match="I/O error"):
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
