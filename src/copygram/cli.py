"""The ``copygram`` command line: ``edit``, ``ceiling``, ``models``, ``serve``, ``rpc-server``
and ``bench ...``.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``;
the module is imported only when its subcommand runs, so ``copygram --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from copygram import interrupts
from copygram.errors import CopygramError

# subcommand -> (module, one-line help)
_COMMANDS: dict[str, tuple[str, str]] = {
    "edit": ("copygram.edit_cli", "edit a file with the model: prints a diff, or writes it"),
    "ceiling": ("copygram.ceiling", "oracle round trip and copy ceiling of edit-pair JSONL files"),
    "models": ("copygram.models_cli", "list the model catalog; models fetch NAME fetches one"),
    "serve": ("copygram.serve.cli", "an OpenAI-compatible local server (docs/serve.md)"),
    "rpc-server": ("copygram.rpc_cli",
                   "hold part of a model's layers for a copygram elsewhere (docs/scale.md)"),
}
_BENCHMARKS: dict[str, tuple[str, str]] = {
    "kernel": ("copygram.bench.kernel", "N decode steps vs one splice of N tokens"),
    "constraint": ("copygram.bench.constraint", "constraint compile time and per-token cost"),
    "e2e": ("copygram.bench.e2e", "end to end on real edits vs full regeneration and lookup"),
    "formats": ("copygram.bench.formats", "edit formats: tokens spent and exact-apply rate"),
    "quality": ("copygram.bench.quality", "the model's own edits judged by the rows' tests"),
    "drafts": ("copygram.bench.drafts",
               "rewrite mode's drafts vs prompt lookup, replayed on recorded outputs"),
    "serve": ("copygram.bench.serve", "copygram serve under concurrent edits: TTFT, latency"),
    "kinds": ("copygram.bench.kinds",
              "build edit rows of many kinds and sizes, judged by whole-file tests (issue 40)"),
    "repeat": ("copygram.bench.repeat",
               "several edits in a row on one file: cold and warm time per edit (issue 42)"),
    "rpc": ("copygram.bench.rpc",
            "a model's layers on rpc-server processes: cost per forward and per edit (issue 45)"),
    "units": ("copygram.bench.units",
              "where units found by a parser and by layout end differently, on real files"),
    "device": ("copygram.bench.device",
               "the Transformers backend checked and timed on a GPU, random weights (issue 44)"),
}


def _add(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, module: str,
         help_text: str) -> None:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(_module=module)
    try:
        importlib.import_module(module).add_arguments(parser)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        parser.set_defaults(_missing=f"'copygram {name}' is not available in this build")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="copygram", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in _COMMANDS.items():
        _add(sub, name, module, help_text)
    bench = sub.add_parser("bench", help="benchmarks (speed lives here, not in tests)")
    bench_sub = bench.add_subparsers(dest="benchmark", required=True)
    for name, (module, help_text) in _BENCHMARKS.items():
        _add(bench_sub, name, module, help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        # Installed first: building the parser imports every subcommand (a tenth of a second or
        # more), and a signal then must end the run as cleanly as one during the model load.
        with interrupts.handle_signals():
            args = build_parser().parse_args(argv)
            if getattr(args, "_missing", None):
                print(f"copygram: {args._missing}", file=sys.stderr)
                return 2
            result: int = importlib.import_module(args._module).run(args)
            return result
    except CopygramError as exc:
        print(f"copygram: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        # Ctrl-C: 130, SIGTERM: 143, as a shell reports a process killed by the signal.
        print("copygram: interrupted", file=sys.stderr)
        return exc.exit_code if isinstance(exc, interrupts.Interrupted) else 130


if __name__ == "__main__":
    raise SystemExit(main())
