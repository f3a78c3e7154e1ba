"""Loading real edit pairs (``<dataset>.dev.jsonl`` rows) for the benchmarks.

Rows are read in file order and ``limit`` keeps the first ``N`` usable ones, so a run is
deterministic. Rows whose ``before`` is empty are skipped: there is nothing to copy from.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from copygram.errors import ConfigError
from copygram.lines import count_lines

DEFAULT_DATA = "../shared/data/edits"
SUFFIX = ".dev.jsonl"
DEFAULT_DATASETS: tuple[str, ...] = (
    "humanevalfix_docs_python",
    "humanevalfix_docs_js",
    "quixbugs_python",
    "editeval_instructcoder",
    "commits_py_repos",
)
"""The five sets the measurements report: bug fixes in two languages, human instructions, and
single-file commits of real repositories (up to 400 lines)."""


@dataclass(frozen=True)
class EditRow:
    """One real edit: ``after`` is what the model should produce from ``before``."""

    dataset: str
    id: str
    before: str
    after: str
    instruction: str = ""
    lang: str = ""
    source: str = ""
    meta: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


def data_dir(path: str | Path = DEFAULT_DATA) -> Path:
    """``path`` resolved against the current directory; :class:`ConfigError` if it is absent."""
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_dir():
        raise ConfigError(
            f"edit data directory {resolved} does not exist; pass --data DIR pointing at the "
            f"folder holding the *{SUFFIX} files (default {DEFAULT_DATA}, relative to the "
            "current directory)"
        )
    return resolved


def available_datasets(path: str | Path = DEFAULT_DATA) -> list[str]:
    """Names of every ``*.dev.jsonl`` file in ``path``, sorted."""
    return sorted(p.name[: -len(SUFFIX)] for p in data_dir(path).glob(f"*{SUFFIX}"))


def parse_datasets(spec: str | None, path: str | Path = DEFAULT_DATA) -> list[str]:
    """``None`` -> :data:`DEFAULT_DATASETS`; ``"all"`` -> every file; else a comma list.

    Unknown names raise :class:`ConfigError` listing what exists.
    """
    known = available_datasets(path)
    if spec is None or not spec.strip():
        names = list(DEFAULT_DATASETS)
    elif spec.strip() == "all":
        return known
    else:
        names = [name.strip() for name in spec.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigError(
            f"unknown dataset(s) {', '.join(unknown)} in {data_dir(path)}; "
            f"known: {', '.join(known)}"
        )
    return names


def iter_rows(dataset: str, path: str | Path = DEFAULT_DATA, *, limit: int | None = None,
              max_lines: int | None = None) -> Iterator[EditRow]:
    """The first ``limit`` rows of ``dataset`` (all when ``None``) with a non-empty ``before``
    of at most ``max_lines`` lines (any when ``None``)."""
    file = data_dir(path) / f"{dataset}{SUFFIX}"
    if not file.is_file():
        raise ConfigError(f"dataset file {file} does not exist; see --data and --datasets")
    if limit is not None and limit <= 0:
        return
    count = 0
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                before, after = raw["before"], raw["after"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ConfigError(f"{file}:{number}: not an edit row ({exc})") from exc
            if not before or (max_lines is not None and count_lines(before) > max_lines):
                continue
            yield EditRow(
                dataset=dataset,
                id=str(raw.get("id", f"{dataset}:{number}")),
                before=before,
                after=after,
                instruction=str(raw.get("instruction") or ""),
                lang=str(raw.get("lang") or ""),
                source=str(raw.get("source") or ""),
                meta=dict(raw.get("meta") or {}),
            )
            count += 1
            if limit is not None and count >= limit:
                return


def load_rows(datasets: Sequence[str], path: str | Path = DEFAULT_DATA, *,
              limit: int | None = None, max_lines: int | None = None
              ) -> dict[str, list[EditRow]]:
    """``{dataset: rows}`` for each name, in the order given."""
    return {name: list(iter_rows(name, path, limit=limit, max_lines=max_lines))
            for name in datasets}


def add_data_arguments(parser: argparse.ArgumentParser, *,
                       default_max_lines: int | None = None) -> None:
    """``--data``, ``--datasets`` and ``--limit``, shared by the benchmark commands."""
    parser.add_argument("--data", default=DEFAULT_DATA,
                        help=f"folder of *{SUFFIX} files (default {DEFAULT_DATA}, from the CWD)")
    parser.add_argument("--datasets", default=None,
                        help="comma-separated dataset names, or 'all' "
                             f"(default: {','.join(DEFAULT_DATASETS)})")
    parser.add_argument("--limit", type=int, default=None,
                        help="first N usable rows of each dataset (default: all)")
    parser.add_argument("--max-lines", type=int, default=default_max_lines,
                        help="skip rows whose 'before' has more lines, 0 for no limit (default "
                             f"{default_max_lines or 'none'}; long files cost minutes a row on a "
                             "CPU: attention grows with the context)")


def rows_from_args(args: argparse.Namespace) -> dict[str, list[EditRow]]:
    """The rows selected by :func:`add_data_arguments`' options."""
    return load_rows(parse_datasets(args.datasets, args.data), args.data, limit=args.limit,
                     max_lines=args.max_lines or None)
