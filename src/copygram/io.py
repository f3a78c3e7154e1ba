"""File helpers: atomic writes (a user's file is never left half-written) and safe reads.

A write replaces the file a path *resolves* to, so a symlink stays a link and its target gets the
edit. The replacement keeps the file's mode (and owner and group where allowed); a new file gets
the mode the umask gives, as any editor's would. A read-only file (no write bit at all, or one
the user may not write) is refused rather than replaced: root may write anything, but a 0444 file
says its owner wants it left alone, so ``chmod u+w`` is the way to edit it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from copygram.errors import DocumentError

_TEMP_SUFFIX = ".copygram.tmp"


def writable_target(path: Path) -> Path:
    """The file a write to ``path`` would replace (symlinks followed), checked writable.

    Raises :class:`DocumentError`, saying what to do, for a folder that does not exist or cannot
    take a new file, a directory, something that is not a regular file, or a read-only file.
    Cheap: call it before anything slow, so a bad path fails at once.
    """
    target = Path(os.path.realpath(path))
    try:
        info = target.stat()
    except FileNotFoundError:
        info = None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise DocumentError(f"{path}: is a directory; give the path of a file")
        if not stat.S_ISREG(info.st_mode):
            # Renaming over a device or a pipe would replace it, not write into it.
            raise DocumentError(f"{path}: not a regular file; copygram replaces files whole "
                                "(for the standard output, use '-')")
        mode = stat.S_IMODE(info.st_mode)
        if not mode & 0o222:
            # os.access says yes to root whatever the mode: the mode bits are the owner's word.
            raise DocumentError(
                f"{path}: read-only (mode {mode:04o}), so copygram leaves it alone; make it "
                f"writable first (chmod u+w {path}) or write the edit to another file"
            )
        if not os.access(target, os.W_OK):
            raise DocumentError(f"{path}: you may not write it (mode {mode:04o}); write the edit "
                                "to another file")
    folder = target.parent
    if not folder.is_dir():
        raise DocumentError(f"{path}: the folder {folder} does not exist; create it first")
    # The new content goes to a temporary file in the same folder, then a rename.
    if not os.access(folder, os.W_OK | os.X_OK):
        raise DocumentError(f"{path}: cannot create files in {folder} (permission denied); "
                            "write the edit somewhere else")
    return target


def write_bytes_atomic(path: Path, data: bytes, *, expected: bytes | None = None,
                       before_commit: Callable[[], None] | None = None) -> None:
    """Write ``data`` to the file ``path`` resolves to, via a temporary file and a rename.

    ``expected``: what the file held when it was read; if it holds anything else now (another
    program wrote it meanwhile), nothing is written and a :class:`DocumentError` says so, so that
    the other program's change is not silently lost. ``before_commit`` runs just before the
    rename; whatever it raises stops the write. On any error (or Ctrl-C) the original file is
    untouched and the temporary file is removed; an OS error is reported as a
    :class:`DocumentError`.
    """
    target = writable_target(path)
    try:
        info: os.stat_result | None = target.stat()
    except FileNotFoundError:
        info = None
    # Created with the file's own mode, the temporary copy is never readable by more people than
    # the file is; a new file gets 0666 less the umask (what the kernel gives any new file).
    fd, tmp_name = _create_temp(target, stat.S_IMODE(info.st_mode) if info else 0o666)
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if info is not None:
                _copy_owner_and_mode(tmp_name, info)
            if before_commit is not None:
                before_commit()
            if expected is not None:
                _refuse_if_changed(path, target, expected)
            os.replace(tmp_name, target)
        except OSError as exc:
            raise DocumentError(
                f"{path}: could not write the edit ({exc.strerror or exc}); the file is unchanged"
            ) from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text_atomic(path: Path, text: str, *, expected: bytes | None = None,
                      before_commit: Callable[[], None] | None = None) -> None:
    write_bytes_atomic(path, text.encode("utf-8"), expected=expected, before_commit=before_commit)


def _create_temp(target: Path, mode: int) -> tuple[int, str]:
    # Not tempfile.mkstemp: it always creates 0600, which a new file would keep.
    for _ in range(100):
        name = str(target.parent / f".{target.name}.{secrets.token_hex(4)}{_TEMP_SUFFIX}")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name next to {target}")


def _copy_owner_and_mode(tmp_name: str, info: os.stat_result) -> None:
    # chown first: it clears set-uid/set-gid bits that chmod then restores. Only root (or the
    # owner, for one of their groups) may chown; otherwise the writer owns the new file, as with
    # any editor that saves by rename.
    created = os.stat(tmp_name)
    if (info.st_uid, info.st_gid) != (created.st_uid, created.st_gid):
        with contextlib.suppress(PermissionError):
            os.chown(tmp_name, info.st_uid, info.st_gid)
    os.chmod(tmp_name, stat.S_IMODE(info.st_mode))


def _refuse_if_changed(path: Path, target: Path, expected: bytes) -> None:
    try:
        current: bytes | None = target.read_bytes()
    except FileNotFoundError:
        current = None
    if current != expected:
        what = "was removed" if current is None else "changed"
        raise DocumentError(
            f"{path} {what} while copygram was editing it (another program wrote it?); nothing "
            "was written: run the edit again on the current file"
        )


def read_document(path: Path) -> str:
    """A text file's content, exactly (no newline translation); a clear error if not UTF-8 text.

    ``read_document(p).encode("utf-8")`` is the file's bytes (strict UTF-8 round-trips), which is
    what ``write_bytes_atomic(..., expected=...)`` compares with.
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise DocumentError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DocumentError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{path}: looks binary (it holds NUL bytes); copygram edits text files")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); convert it to UTF-8 first"
        ) from None
