"""File helpers: atomic writes (a user's file is never left half-written) and safe reads."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from copygram.errors import DocumentError


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename.

    On any error (or Ctrl-C) the original file is untouched and the temporary file is removed.
    The file's permission bits are kept when it already exists.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".copygram.tmp",
                                    dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def read_document(path: Path) -> str:
    """A text file's content, exactly (no newline translation); a clear error if not UTF-8 text."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise DocumentError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DocumentError(f"{path}: is a directory, not a file") from None
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{path}: looks binary (it holds NUL bytes); copygram edits text files")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); convert it to UTF-8 first"
        ) from None
