"""``copygram edit FILE -i INSTRUCTION``: edit a file with the model.

Prints a unified diff by default; ``--in-place`` writes the file atomically (temp file + rename),
so on any error or Ctrl-C the file is byte-identical to before; ``-o OUT`` writes elsewhere.
Progress (generated vs copied tokens) goes to stderr.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import time
from pathlib import Path
from typing import TextIO

from copygram.errors import ConfigError
from copygram.io import read_document, write_text_atomic
from copygram.lines import split_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the UTF-8 text file to edit")
    parser.add_argument("-i", "--instruction", required=True, help="what to change")
    parser.add_argument("--config", type=Path,
                        help="TOML config (backend, model, engine, sampling; docs/config.md); "
                             "default: the bundled SmolLM2-135M on llama.cpp")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--in-place", action="store_true", help="rewrite FILE atomically")
    where.add_argument("-o", "--output", type=Path, help="write the edited document here")
    parser.add_argument("--show-program", action="store_true",
                        help="print the edit program the model wrote (to stderr)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


class _Progress:
    """A live counter of generated vs copied tokens, redrawn at most 10 times a second."""

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream, self.enabled = stream, enabled and stream.isatty()
        self.generated = self.copied = 0
        self._last = 0.0

    def update(self, *, generated: int = 0, copied: int = 0) -> None:
        self.generated += generated
        self.copied += copied
        now = time.monotonic()
        if self.enabled and now - self._last > 0.1:
            self._last = now
            self.stream.write(f"\rcopygram: {self.generated} generated, {self.copied} copied tokens")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")


def run(args: argparse.Namespace) -> int:
    from copygram.session import CopyEvent, DoneEvent, EditResult, EditSession, GenTokenEvent

    document = read_document(args.file)
    config: dict[str, object] | Path = args.config if args.config else {}
    if args.config and not args.config.is_file():
        raise ConfigError(f"--config {args.config}: no such file")
    session = EditSession.from_config(config)
    progress = _Progress(sys.stderr, not args.quiet)
    result: EditResult | None = None
    try:
        for event in session.stream(document, args.instruction):
            if isinstance(event, GenTokenEvent):
                progress.update(generated=1)
            elif isinstance(event, CopyEvent):
                progress.update(copied=event.n_tokens)
            elif isinstance(event, DoneEvent):
                result = event.result
    finally:
        progress.close()
    assert result is not None
    if args.show_program:
        print(f"--- program ---\n{result.program_text}\n--- end of program ---", file=sys.stderr)
    stats = result.stats
    if not args.quiet:
        print(
            f"copygram: {stats.decoded_tokens} decoded + {stats.forced_tokens} forced program "
            f"tokens, {stats.spliced_tokens} copied tokens in {stats.copy_ops} splices, "
            f"{stats.forwards} forwards, {stats.wall_s:.2f} s "
            f"(~{result.speedup:.1f}x vs decoding all {stats.output_tokens} output tokens)",
            file=sys.stderr,
        )
    if args.in_place:
        write_text_atomic(args.file, result.text)
    elif args.output:
        write_text_atomic(args.output, result.text)
    else:
        diff = difflib.unified_diff(
            split_lines(document), split_lines(result.text),
            fromfile=f"a/{args.file}", tofile=f"b/{args.file}",
        )
        sys.stdout.writelines(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                              for line in diff)
    return 0
