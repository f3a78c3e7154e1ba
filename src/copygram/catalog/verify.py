"""Checking a model file against its pins: a sink that counts and hashes while a file is written,
the sha256 of a file on disk, the ``.sha256`` sidecar that records a check, and the error that
refuses a mismatch."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import BinaryIO, Final

from copygram.catalog.entries import CatalogEntry
from copygram.catalog.errors import ModelIntegrityError
from copygram.catalog.progress import Throttle, mb

__all__ = ["CHUNK", "VerifyingSink", "integrity_error", "sha256_file", "sidecar_vouches",
           "verify_cached", "write_sidecar"]

CHUNK: Final = 1 << 20


class VerifyingSink:
    """Appends to ``out`` while counting and hashing; refuses to grow past ``limit`` bytes."""

    def __init__(self, out: BinaryIO, limit: int) -> None:
        self._out, self._limit = out, limit
        self._digest = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> bool:
        """Append ``chunk``; False (nothing written) if it would pass the limit."""
        if self.size + len(chunk) > self._limit:
            return False
        self._out.write(chunk)
        self._digest.update(chunk)
        self.size += len(chunk)
        return True

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def write_sidecar(path: Path, sha256: str) -> None:
    """Mark ``path`` as verified: a ``sha256sum -c`` style line, written atomically."""
    side = _sidecar(path)
    tmp = side.with_name(f".{side.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{sha256}  {path.name}\n", encoding="utf-8")
    os.replace(tmp, side)


def sidecar_vouches(path: Path, sha256: str) -> bool:
    """True when the sidecar records ``sha256`` and is not older than the file: a file copied in
    after the sidecar was written is hashed again. Two stat calls and a tiny read."""
    side = _sidecar(path)
    try:
        recorded = side.read_text(encoding="utf-8").split()
        return bool(recorded) and recorded[0] == sha256 and (
            side.stat().st_mtime_ns >= path.stat().st_mtime_ns)
    except OSError:
        return False


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def integrity_error(entry: CatalogEntry, path: Path, what: str, *, size: int,
                    sha256: str | None) -> ModelIntegrityError:
    if sha256 is not None:
        got = f"{size:,} bytes, sha256 {sha256}"
    else:  # stopped early: the hash of the whole was never computed
        got = f"{'at least ' if size > entry.size else ''}{size:,} bytes"
    return ModelIntegrityError(
        f"{entry.name}: {what}: expected {entry.size:,} bytes, sha256 {entry.sha256}; got "
        f"{got}. The file does not match the pinned one and was refused",
        path=path, expected_size=entry.size, actual_size=size, expected_sha256=entry.sha256,
        actual_sha256=sha256,
    )


def verify_cached(entry: CatalogEntry, path: Path, report: Throttle) -> None:
    """Check a cached file: its size always (one stat); its sha256 once (a full read, ~0.5 s/GB
    from the page cache, a few s/GB from disk), recorded in a ``.sha256`` sidecar."""
    size = path.stat().st_size
    if size != entry.size:
        raise integrity_error(entry, path, f"{path} has the wrong size (delete it to fetch it "
                              "again)", size=size, sha256=None)
    if sidecar_vouches(path, entry.sha256):
        return
    report(f"{entry.name}: verifying sha256 of {path} ({mb(size)}, once)", final=True)
    actual = sha256_file(path)
    if actual != entry.sha256:
        raise integrity_error(entry, path, f"{path} is not the pinned file (delete it to fetch "
                              "it again)", size=size, sha256=actual)
    write_sidecar(path, entry.sha256)
