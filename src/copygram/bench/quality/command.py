"""The ``copygram bench quality`` command: its options, the run over every row and approach
(:func:`run_rows`), and the output (table on stdout, ``--json``, ``--rows``, ``--plot``)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from copygram.bench.data import EditRow, add_data_arguments, data_dir
from copygram.bench.model_args import add_model_arguments, session_config
from copygram.bench.quality.approaches import (
    AutoPrompt,
    LookupPeer,
    PrefixPrimer,
    RewriteBaseline,
    program_approach,
    rewrite_mode_approach,
)
from copygram.bench.quality.excerpt import excerpt_approach
from copygram.bench.quality.report import markdown_table, pool, write_plot
from copygram.bench.quality.scoring import (
    APPROACHES,
    AUTO,
    DEFAULT_APPROACHES,
    EXCERPT,
    LOOKUP,
    PROGRAM,
    QUALITY_DATASETS,
    REWRITE,
    REWRITE_MODE,
    UNCHANGED,
    Approach,
    ApproachResult,
    RowQuality,
    evaluate_row,
    floor_row,
    repeat_row,
)
from copygram.bench.testrun import DEFAULT_TIMEOUT_S, has_tests, missing_toolchain
from copygram.config import read_config
from copygram.errors import ConfigError
from copygram.host import run_record
from copygram.io import write_text_atomic

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.decode.prompt import PromptBuilder

__all__ = ["GROUP_FIELDS", "LOOKUP_TOKENS", "add_arguments", "data_path", "parse_approaches",
           "parse_group_by", "regroup", "run", "run_rows"]

LOOKUP_TOKENS = 10
"""The lookup peer's draft length (``num_pred_tokens``, ``prompt_lookup_num_tokens``): 10, the
peers' usual setting (llama-cpp-python's default, ``bench e2e --peers``' first k)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    add_data_arguments(parser, default_datasets=QUALITY_DATASETS, max_lines=False)
    parser.add_argument("--approaches", default=",".join(DEFAULT_APPROACHES),
                        help=f"comma-separated, from {', '.join(APPROACHES)} (default: "
                             f"{','.join(DEFAULT_APPROACHES)}; {LOOKUP} loads a second model "
                             f"and decodes every row once more; {EXCERPT}: the redo of a "
                             "missed program alone, an excerpt of a long file rewritten; "
                             "'none': only the --program-config routes)")
    parser.add_argument("--program-config", action="append", default=[], metavar="TOML",
                        help="also run program mode with this session config (a TOML file of "
                             "session keys; the model is shared), as approach "
                             "'program:<file stem>'; repeatable: the routes of one run")
    parser.add_argument("--repeats", type=int, default=1,
                        help="run every approach this many times on each row, interleaved "
                             "(A B C A B C ...); each row's times are its fastest run's, its "
                             "tests the first run's, and every later run must write the first "
                             "run's output (reported as 'reproduced'); default 1")
    parser.add_argument("--test-timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds a row's tests may run (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--json", default=None, help="write the pooled results here")
    parser.add_argument("--rows", default=None,
                        help="write one JSON line per row and approach here (with the output)")
    parser.add_argument("--plot", default=None, help="write quality_pass_rate.png into this folder")
    parser.add_argument("--group-by", action="append", default=[], metavar="FIELDS",
                        help="also pool the rows by these fields, a comma list from "
                             f"{', '.join(GROUP_FIELDS)} (kind, size: the row's meta, as "
                             "`copygram bench kinds` writes it; language: meta's, else the "
                             "row's lang): one more table each, and 'groups' in --json; "
                             "repeatable, e.g. --group-by kind --group-by size "
                             "--group-by language --group-by dataset,kind,size")


GROUP_FIELDS = ("dataset", "kind", "size", "language")
"""What ``--group-by`` pools rows by (issue 40: per kind, size bucket and language)."""


def parse_group_by(spec: str) -> list[str]:
    """The fields of one ``--group-by`` value, in order."""
    fields = [name.strip() for name in spec.split(",") if name.strip()]
    if not fields or any(name not in GROUP_FIELDS for name in fields):
        raise ConfigError(f"--group-by takes a comma list from {', '.join(GROUP_FIELDS)}; "
                          f"got {spec!r}")
    return fields


def regroup(results: Sequence[RowQuality], rows: Sequence[EditRow],
            fields: Sequence[str]) -> list[RowQuality]:
    """``results`` with each one's ``dataset`` re-keyed to its row's ``fields`` joined by ``/``
    (``kinds_python/bugfix/medium`` for ``dataset,kind,size``; ``-`` where a row has none), so
    that :func:`pool` pools them by those fields."""
    by_id = {(row.dataset, row.id): row for row in rows}

    def value(quality: RowQuality, name: str) -> str:
        row = by_id.get((quality.dataset, quality.row_id))
        if name == "dataset" or row is None:
            return quality.dataset if name == "dataset" else "-"
        found = row.meta.get(name) or (row.lang if name == "language" else None)
        return str(found or "-")

    return [dataclasses.replace(q, dataset="/".join(value(q, name) for name in fields))
            for q in results]


def data_path(value: str | None) -> Path:
    """The data folder: ``--data``, else ``$COPYGRAM_DATA``; a :class:`ConfigError` naming both
    when neither is given (or the folder does not exist)."""
    return data_dir(value or None)


def parse_approaches(spec: str) -> list[str]:
    """The approaches ``spec`` names, in order, once each; ``"none"`` for none (a run of
    ``--program-config`` routes alone)."""
    if spec.strip() == "none":
        return []
    names = [name.strip() for name in spec.split(",") if name.strip()]
    unknown = [name for name in names if name not in APPROACHES]
    if not names or unknown:
        raise ConfigError(f"--approaches takes a comma-separated list from "
                          f"{', '.join(APPROACHES)}; got {spec!r}")
    return list(dict.fromkeys(names))


def _progress(elapsed: float, row: EditRow, results: Sequence[RowQuality]) -> None:
    parts = []
    for quality in results:
        if quality.crashed:
            state = "CRASH"
        elif not quality.valid:
            state = "invalid"
        elif quality.passed is None:
            state = "exact" if quality.exact else f"sim={quality.similarity:.2f}"
        else:
            state = quality.test_status or ("pass" if quality.passed else "fail")
        wall = f" {quality.wall_s:.1f}s" if quality.approach != UNCHANGED else ""
        parts.append(f"{quality.approach}={state}{wall}")
    print(f"[{elapsed:6.0f}s] {row.dataset} {row.id}: " + " ".join(parts), file=sys.stderr,
          flush=True)
    for quality in results:
        if quality.error:
            print(f"          {quality.approach}: {quality.error[:300]}", file=sys.stderr,
                  flush=True)


def rows_sink(path: Path) -> TextIO:
    """``path`` emptied and opened for a run's rows, held under an exclusive lock until it is
    closed: a second run given the same file is refused (a :class:`ConfigError`) rather than
    writing its lines into this one's (two runs that shared a rows file left lines cut in the
    middle by the other's, and shared the cores too)."""
    sink = path.open("a", encoding="utf-8")
    try:
        fcntl.flock(sink.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sink.close()
        raise ConfigError(f"--rows {path}: another run is writing it; wait for that run or "
                          "give this one another file") from None
    sink.truncate(0)
    return sink


def run_rows(rows: Sequence[EditRow], runners: Mapping[str, Approach], *,
             timeout_s: float = DEFAULT_TIMEOUT_S, sink: TextIO | None = None,
             progress: bool = True,
             primers: Mapping[str, Callable[[EditRow], None]] | None = None,
             repeats: int = 1) -> list[RowQuality]:
    """Every approach on every row, interleaved row by row (the order rotated by one each row),
    then the copy-unchanged floor. ``primers[name](row)``, where given, runs untimed before that
    approach on each row (:class:`PrefixPrimer`: the approach's own fixed prompt prefix cached,
    the row's document not), before every run of it.

    ``repeats``: runs of every approach per row, in rounds (A B C, A B C, ...); the first run is
    scored, the others are timed and compared with it (:func:`repeat_row`: the fastest run's
    times, ``reproduced``).

    ``sink`` gets one JSON line per row and approach (the metrics, the document and the
    approach's scalar stats); ``progress`` prints a line per row on stderr.
    """
    if repeats < 1:
        raise ConfigError(f"repeats must be >= 1, got {repeats}")
    results: list[RowQuality] = []
    started = time.perf_counter()
    names = list(runners)
    for index, row in enumerate(rows):
        shift = index % len(names) if names else 0
        order = names[shift:] + names[:shift]
        by_name: dict[str, RowQuality] = {}
        firsts: dict[str, ApproachResult] = {}
        for round_ in range(repeats):
            for name in order:
                if primers and name in primers:
                    primers[name](row)
                if round_:
                    by_name[name] = repeat_row(by_name[name], firsts[name], row, runners[name])
                    continue
                by_name[name], firsts[name] = evaluate_row(row, name, runners[name],
                                                           timeout_s=timeout_s)
        outputs = {name: (text, {k: v for k, v in stats.items()
                                 if isinstance(v, (str, int, float, bool))})
                   for name, (text, stats, _) in firsts.items()}
        for name in (REWRITE_MODE, LOOKUP):
            if REWRITE in outputs and name in outputs:
                # Rewrite mode must write what the baseline writes, token for token, under
                # greedy; the lookup peer reads batched rows without re-deciding near-ties, so
                # this counts how often that leaves its output equal.
                base, other = outputs[REWRITE][1].get("raw"), outputs[name][1].get("raw")
                by_name[name] = dataclasses.replace(
                    by_name[name], same_as_rewrite=base is not None and base == other)
        for name in names:
            if sink is not None:
                text, scalars = outputs[name]
                sink.write(json.dumps({**by_name[name].as_json(), "text": text,
                                       "stats": scalars}) + "\n")
        floor = floor_row(row, timeout_s=timeout_s)
        if sink is not None:
            sink.write(json.dumps(floor.as_json()) + "\n")
            sink.flush()
        in_order = [by_name[name] for name in names] + [floor]
        results += in_order
        if progress:
            _progress(time.perf_counter() - started, row, in_order)
    return results


def _lookup_peer(backend: Backend, config: Mapping[str, object],
                 prompt_builder: PromptBuilder) -> LookupPeer:
    """The lookup peer of ``config``'s stack, loaded once for the whole run; its prompt is
    rewrite mode's (``prompt_builder``)."""
    from copygram.bench.peers import lookup_generator
    from copygram.config import parse_config

    return LookupPeer(backend, lookup_generator(backend, parse_config(config).backend,
                                                k=LOOKUP_TOKENS), prompt_builder)


def run(args: argparse.Namespace) -> int:
    from copygram.bench.data import load_rows, parse_datasets

    path = data_path(args.data)
    names = parse_datasets(args.datasets or ",".join(QUALITY_DATASETS), path)
    approaches = parse_approaches(args.approaches)
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {args.limit}")
    if not approaches and not args.program_config:
        raise ConfigError("--approaches none runs only the --program-config routes, and none "
                          "was given")
    if args.test_timeout <= 0:
        raise ConfigError(f"--test-timeout must be > 0, got {args.test_timeout}")
    if args.repeats < 1:
        raise ConfigError(f"--repeats must be >= 1, got {args.repeats}")
    groupings = {spec: parse_group_by(spec) for spec in args.group_by}
    rows = load_rows(names, path, limit=args.limit)
    for name in names:
        # By its rows: a set built by `copygram bench kinds` carries each row's tests.
        tested = next((row for row in rows.get(name, ()) if has_tests(row)), None)
        if tested is None and not has_tests(name):
            print(f"{name} carries no tests: pass is reported as '-'", file=sys.stderr)
        elif tested is not None and (missing := missing_toolchain(tested)) is not None:
            raise ConfigError(f"{name}: {missing}; install it or leave {name} out of "
                              "--datasets")
    from copygram.session import EditSession

    config = session_config(args)
    # Read before the model loads: the load average says whether the machine was quiet.
    record = run_record(sys.argv, config)
    started = time.monotonic()
    # Approach "program" is program mode whatever the config says; "auto" is mode "auto".
    session = EditSession.from_config({**config, "mode": "program"})
    # What the model is and what a forward's cost depends on (llama.cpp: the build's kernels).
    described = session.backend.describe()
    invariant = bool(described.get("batch_invariant"))
    record.update(batch_invariant=invariant, build=described.get("build"), backend=described,
                  datasets=list(names),
                  arguments={key: value if isinstance(value, (int, float, list, type(None)))
                             else str(value) for key, value in vars(args).items()})
    print(f"{session.backend.name}: batch-invariant kernels {'on' if invariant else 'off'}",
          file=sys.stderr)
    rewriting, auto = session.derive(mode="rewrite"), session.derive(mode="auto")

    auto_prompt = AutoPrompt(auto.mode_for, session.prompt, rewriting.prompt)
    runners: dict[str, Approach] = {}
    # Every approach on the shared backend starts a row with its own fixed prompt prefix cached
    # and no other; the lookup peer, on a model of its own, keeps no more of its cache.
    primers: dict[str, Callable[[EditRow], None]] = {}
    variants = [Path(file) for file in args.program_config]
    routes = [session]
    for file in variants:  # every file checked before the run starts
        name = f"{PROGRAM}:{file.stem}"
        if name in runners:
            raise ConfigError(f"--program-config: two files named {file.stem!r}; rename one")
        # A route is a program-mode variant unless its file names a mode.
        routes.append(EditSession.from_config({"mode": "program", **read_config(file)},
                                              backend=session.backend))
        runners[name] = program_approach(routes[-1])
        primers[name] = PrefixPrimer(session.backend, routes[-1].prompt)
    # What the first edit of a model builds once (the constraint's vocabulary view, a tag
    # syntax's guard sets): untimed, as the model's load is, not charged to the first row.
    for route in routes:
        route.prepare()
    record["routes"] = {f"{PROGRAM}:{file.stem}": file.read_text(encoding="utf-8")
                        for file in variants}
    # What approach "program" wrote: program mode's default has changed (issue 18).
    options = session.options
    record["program"] = {"syntax": options.syntax, "search_scope": options.search_scope,
                         "retry_unchanged": options.retry_unchanged}
    for name in approaches:
        if name == LOOKUP:
            peer = _lookup_peer(session.backend, config, rewriting.prompt_builder)
            runners[name], primers[name] = peer, peer.prime
            continue
        runners[name] = (program_approach(session) if name == PROGRAM
                         else program_approach(auto) if name == AUTO
                         else rewrite_mode_approach(rewriting) if name == REWRITE_MODE
                         else excerpt_approach(rewriting) if name == EXCERPT
                         else RewriteBaseline(session.backend, rewriting.prompt_builder))
        # The baseline's prompt is rewrite mode's (rewrite_request); auto's, the prompt of the
        # mode it picks for the row.
        primers[name] = PrefixPrimer(session.backend, session.prompt if name == PROGRAM
                                     else auto_prompt if name == AUTO else rewriting.prompt)
    # The standard approaches first, then the routes, in the order given.
    runners = {**{n: runners[n] for n in approaches},
               **{n: r for n, r in runners.items() if n not in approaches}}
    every_row = [row for dataset_rows in rows.values() for row in dataset_rows]
    with contextlib.ExitStack() as stack:
        sink = stack.enter_context(rows_sink(Path(args.rows))) if args.rows else None
        results = run_rows(every_row, runners, timeout_s=args.test_timeout, sink=sink,
                           primers=primers, repeats=args.repeats)
    pooled = pool(results)
    print(markdown_table(pooled), end="")
    groups = {spec: pool(regroup(results, every_row, fields))
              for spec, fields in groupings.items()}
    for spec, grouped in groups.items():
        print(f"\nby {spec}:\n\n{markdown_table(grouped)}", end="")
    if args.json:
        record["seconds"] = round(time.monotonic() - started, 1)
        output: dict[str, object] = {"run": record, "results": pooled}
        if groups:
            output["groups"] = groups
        write_text_atomic(Path(args.json), json.dumps(output, indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    if args.plot:
        print(f"wrote {write_plot(args.plot, pooled)}", file=sys.stderr)
    return 0
