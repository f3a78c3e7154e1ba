"""Loading real edit pairs (``<dataset>.dev.jsonl`` rows) for the benchmarks.

The data folder is named by ``--data DIR`` or, when that is not given, by the
``COPYGRAM_DATA`` environment variable; copygram ships no data and assumes no location. Rows are
read in file order and ``limit`` keeps the first ``N`` usable ones, so a run is deterministic.
Rows whose ``before`` is empty are skipped: there is nothing to copy from.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from copygram.errors import ConfigError, DocumentError
from copygram.language.lines import count_lines

DATA_ENV = "COPYGRAM_DATA"
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

DataPath = str | Path | None
"""A data folder, or ``None`` for the one ``$COPYGRAM_DATA`` names."""


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


def data_dir(path: DataPath = None) -> Path:
    """``path`` (or ``$COPYGRAM_DATA`` when ``path`` is ``None``) resolved against the current
    directory; :class:`ConfigError` naming both when neither is given or the folder is absent."""
    if path is None or str(path) == "":
        path = os.environ.get(DATA_ENV) or None
    if path is None:
        raise ConfigError(
            f"no edit data folder given: pass --data DIR or set {DATA_ENV}=DIR, the folder "
            f"holding the *{SUFFIX} files"
        )
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_dir():
        raise ConfigError(
            f"edit data folder {resolved} does not exist; pass --data DIR or set {DATA_ENV}=DIR, "
            f"the folder holding the *{SUFFIX} files"
        )
    return resolved


def available_datasets(path: DataPath = None) -> list[str]:
    """Names of every ``*.dev.jsonl`` file in ``path``, sorted."""
    return sorted(p.name[: -len(SUFFIX)] for p in data_dir(path).glob(f"*{SUFFIX}"))


def parse_datasets(spec: str | None, path: DataPath = None) -> list[str]:
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


def read_edit_rows(file: Path, dataset: str | None = None) -> Iterator[EditRow]:
    """Every row of a JSONL file of edit pairs, in file order (blank lines skipped).

    Each line is a JSON object with ``before`` and ``after`` strings and optional ``id``,
    ``instruction``, ``lang``, ``source`` and ``meta``; anything else raises
    :class:`DocumentError` naming the file and line. ``dataset`` defaults to the file's stem.
    """
    name = dataset if dataset is not None else file.name.removesuffix(SUFFIX).removesuffix(".jsonl")
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                before, after = raw["before"], raw["after"]
                if not isinstance(before, str) or not isinstance(after, str):
                    raise TypeError("'before' and 'after' must be strings")
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise DocumentError(
                    f"{file}:{number}: each line must be a JSON object with 'before' and 'after' "
                    f"strings ({exc})"
                ) from None
            yield EditRow(
                dataset=name,
                id=str(raw.get("id", f"{name}:{number}")),
                before=before,
                after=after,
                instruction=str(raw.get("instruction") or ""),
                lang=str(raw.get("lang") or ""),
                source=str(raw.get("source") or ""),
                meta=dict(raw.get("meta") or {}),
            )


def iter_rows(dataset: str, path: DataPath = None, *, limit: int | None = None,
              max_lines: int | None = None) -> Iterator[EditRow]:
    """The first ``limit`` rows of ``dataset`` (all when ``None``) with a non-empty ``before``
    of at most ``max_lines`` lines (any when ``None``)."""
    file = data_dir(path) / f"{dataset}{SUFFIX}"
    if not file.is_file():
        raise ConfigError(f"dataset file {file} does not exist; see --data and --datasets")
    if limit is not None and limit <= 0:
        return
    count = 0
    for row in read_edit_rows(file, dataset):
        if not row.before or (max_lines is not None and count_lines(row.before) > max_lines):
            continue
        yield row
        count += 1
        if limit is not None and count >= limit:
            return


def load_rows(datasets: Sequence[str], path: DataPath = None, *,
              limit: int | None = None, max_lines: int | None = None
              ) -> dict[str, list[EditRow]]:
    """``{dataset: rows}`` for each name, in the order given."""
    return {name: list(iter_rows(name, path, limit=limit, max_lines=max_lines))
            for name in datasets}


def add_data_arguments(parser: argparse.ArgumentParser, *,
                       default_max_lines: int | None = None,
                       default_datasets: Sequence[str] = DEFAULT_DATASETS,
                       max_lines: bool = True) -> None:
    """``--data``, ``--datasets``, ``--limit`` and (with ``max_lines``) ``--max-lines``, shared
    by the benchmark commands."""
    parser.add_argument("--data", default=None,
                        help=f"folder of *{SUFFIX} files (default: ${DATA_ENV})")
    parser.add_argument("--datasets", default=None,
                        help="comma-separated dataset names, or 'all' "
                             f"(default: {','.join(default_datasets)})")
    parser.add_argument("--limit", type=int, default=None,
                        help="first N usable rows of each dataset (default: all)")
    if not max_lines:
        return
    parser.add_argument("--max-lines", type=int, default=default_max_lines,
                        help="skip rows whose 'before' has more lines, 0 for no limit (default "
                             f"{default_max_lines or 'none'}; long files cost minutes a row on a "
                             "CPU: attention grows with the context)")


def rows_from_args(args: argparse.Namespace) -> dict[str, list[EditRow]]:
    """The rows selected by :func:`add_data_arguments`' options."""
    return load_rows(parse_datasets(args.datasets, args.data), args.data, limit=args.limit,
                     max_lines=args.max_lines or None)
