"""``copygram edit FILE... -i INSTRUCTION``: edit files with the model.

Prints a unified diff by default; ``--in-place`` rewrites each file (a symlink's target)
atomically, keeping its mode, and only if nobody else changed it meanwhile; ``-o OUT`` writes
elsewhere (one file only; ``-o -``: the standard output). ``--model`` names the model (a catalog
name or a .gguf path) in place of the config's. Everything that can be checked (the files, the
instruction, the output paths, the config) is checked before the model loads, which happens once
for all the files. Ctrl-C or SIGTERM at any moment ends the run with the file being edited
untouched (exit 130 or 143; see :mod:`copygram.interrupts`; files edited before it stay
written); one that comes once the last file is written whole is only reported (exit 0). With
several files, one that fails (its edit refused, the model's run failed) is reported and the
rest are edited: the exit status is then 1. Progress (generated vs copied tokens) and a summary
line per file go to stderr.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Self, TextIO, cast

from copygram import interrupts, split_lines
from copygram.config import MODES
from copygram.errors import ConfigError, DamagedEditError, DocumentError, GenerationError
from copygram.io import read_document, writable_target, write_text_atomic
from copygram.language.damage import language_for_path
from copygram.language.formats import get_format

if TYPE_CHECKING:
    from copygram import EditResult, EditSession

STDOUT = "-"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", type=Path, nargs="+", metavar="FILE",
                        help="the UTF-8 text file(s) to edit, each with the same instruction")
    parser.add_argument("-i", "--instruction", required=True, help="what to change")
    parser.add_argument("--config", type=Path,
                        help="TOML config (backend, model, engine, sampling; docs/config.md); "
                             "default: the bundled SmolLM2-135M on llama.cpp")
    parser.add_argument("--model", metavar="NAME|PATH",
                        help="a catalog name (copygram models) or a .gguf path; overrides the "
                             "config's model")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--in-place", action="store_true",
                       help="rewrite FILE atomically (a symlink's target; refused if read-only)")
    where.add_argument("-o", "--output", type=Path,
                       help=f"write the edited document here ('{STDOUT}': the standard output; "
                            "one FILE only)")
    parser.add_argument("--mode", choices=MODES, default=None,
                        help="auto (the default): a program for a long file or an edit of one "
                             "function the instruction names, else a rewrite; program: the model "
                             "writes an edit program; rewrite: it rewrites the file, drafted "
                             "from the file itself, with output identical to plain greedy "
                             "decoding (docs/rewrite.md); overrides the config's mode")
    parser.add_argument("--show-program", action="store_true",
                        help="print the edit program the model wrote, or as much of it as it "
                             "wrote before an error (to stderr)")
    parser.add_argument("--compare-plain", action="store_true",
                        help="after the edit, decode its output again one token per forward "
                             "after the same prompt (plain decoding) and print both times")
    parser.add_argument("--force", action="store_true",
                        help="write an edit that would damage the file (the edit format's "
                             "markers in it, a parse it breaks, a definition duplicated, a name "
                             "left undefined) instead of refusing it")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


# Prompts longer than this (tokens to compute) get progress lines while they are read: ~10 s
# and more on a 2-core CPU (45-68 prompt tokens/s on AVX-512, 16-19 on AVX2; docs/quality.md).
LONG_PROMPT = 1024


class _Progress:
    """How far a long prompt is read, then generated vs copied tokens, on stderr.

    On a terminal: one line redrawn in place, at most 10 times a second. Elsewhere (a log, a CI
    job) a redraw would pile up, so plain lines, at most one a second: a long run still shows
    that it is alive.
    """

    def __init__(self, stream: TextIO, enabled: bool,
                 clock: Callable[[], float] | None = None) -> None:
        self.stream, self.enabled = stream, enabled
        self.clock = clock or monotonic  # looked up now, so that a test can patch it
        self.tty = stream.isatty()
        self.interval = 0.1 if self.tty else 1.0
        self.generated = self.copied = 0
        self._last = self.clock()
        self._width = 0  # of the line on the terminal now; 0: nothing drawn
        self._prefill_start = self._last

    def status(self, text: str) -> None:
        if self.enabled:
            self._show(f"copygram: {text}")

    def prefill(self, done: int, total: int, cached: int) -> None:
        """How far the prompt is read: shown for a prompt of more than :data:`LONG_PROMPT`
        tokens to compute (minutes on a CPU), with the rate so far and the time left at it."""
        now = self.clock()
        if done == cached:
            self._prefill_start = now
        todo = total - cached
        if (not self.enabled or todo <= LONG_PROMPT or done == total
                or (done > cached and now - self._last < self.interval)):
            return
        line = f"copygram: reading the prompt: {done} of {total} tokens"
        elapsed = now - self._prefill_start
        if done > cached and elapsed > 0:
            rate = (done - cached) / elapsed
            left = (total - done) / rate
            line += (f" ({rate:.0f} tokens/s, ~{left:.0f} s left)" if left < 90
                     else f" ({rate:.0f} tokens/s, ~{left / 60:.0f} min left)")
        elif cached:
            line += f" ({cached} found in the cache)"
        self._last = now
        self._show(line)

    def update(self, *, generated: int = 0, copied: int = 0) -> None:
        self.generated += generated
        self.copied += copied
        now = self.clock()
        if self.enabled and now - self._last >= self.interval:
            self._last = now
            self._show(f"copygram: {self.generated} generated, {self.copied} copied tokens")

    def _show(self, line: str) -> None:
        if self.tty:
            # Padded so that a shorter line covers all of the longer one before it.
            self.stream.write("\r" + line.ljust(self._width))
            self._width = max(self._width, len(line))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the terminal line, so that what is printed next (an error, say) starts afresh."""
        if self.enabled and self.tty and self._width:
            self.stream.write("\n")
            self._width = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def run(args: argparse.Namespace) -> int:
    from copygram import EditSession
    from copygram.config import command_config

    if not args.instruction.strip():
        raise ConfigError('the instruction (-i) is empty; say what to change, e.g. '
                          '-i "Rename x to count"')
    files: list[Path] = args.files
    if len(files) > 1 and args.output is not None:
        raise ConfigError(f"-o names one output and {len(files)} files were given: use "
                          "--in-place to write each, or neither to print a diff of each")
    real = [os.path.realpath(path) for path in files]
    if len(set(real)) < len(real):
        raise ConfigError("a file is named twice: edit each file once per call")
    # Every file read and every output checked before the model loads.
    jobs = []
    for path in files:
        document = read_document(path)
        jobs.append((path, document, _writer(args, path, document)))
    config = command_config(args.config, model=args.model, mode=args.mode)  # checked once
    with _Progress(sys.stderr, not args.quiet) as progress:
        progress.status("loading the model")
        session = EditSession.from_config(config)
    # A Ctrl-C during the load may have been dropped inside native code (see
    # copygram.interrupts): act on it before the first token.
    interrupts.check()
    failed = 0
    for path, document, write in jobs:
        try:
            _edit(args, session, path, document, write)
        except (GenerationError, DocumentError) as exc:
            if len(jobs) == 1:
                raise
            failed += 1
            print(f"copygram: {path}: error: {exc}", file=sys.stderr)
    if failed:
        print(f"copygram: {failed} of {len(jobs)} files not edited", file=sys.stderr)
    return 1 if failed else 0


def _edit(args: argparse.Namespace, session: EditSession, path: Path, document: str,
          write: Callable[[str], None]) -> None:
    """Edit one file with the loaded model: generate, check, summarise, write."""
    try:
        with _Progress(sys.stderr, not args.quiet) as progress:
            result = _generate(session, document, args.instruction, progress,
                               language_for_path(path))
    except DamagedEditError as exc:
        if args.show_program:
            _print_program("program (its edit would damage the file)", exc.partial_program)
        if not args.force:
            raise
        result = cast("EditResult", exc.result)  # decode.checked attaches the damaged edit
        print(f"copygram: writing a damaged edit (--force): {exc}", file=sys.stderr)
    except GenerationError as exc:
        if args.show_program:
            _print_program("partial program (the run failed)", exc.partial_program)
        raise
    if result.damage and not args.force:  # on_damage = "keep": returned marked, not written
        raise DamagedEditError(
            "the edit would damage the file, so it was not written: "
            + "; ".join(map(str, result.damage)) + " (--force writes it anyway)",
            result=result, damage=result.damage)
    if args.show_program:
        _print_program("program", result.program_text)
    _summarise(args, session, result, path if len(args.files) > 1 else None)
    if args.compare_plain:
        _compare_plain(session, result)
    interrupts.check()
    write(result.text)


def _summarise(args: argparse.Namespace, session: EditSession, result: EditResult,
               path: Path | None = None) -> None:
    """The run's one-line summary on stderr (and why a program-mode edit was redone), its
    file's name first where several are edited."""
    stats = result.stats
    name = "copygram: " if path is None else f"copygram: {path}: "
    if not args.quiet and result.redone is not None:
        print(f"{name}program mode's edit was not usable ("
              + "; ".join(map(str, result.redone.damage)) + "); redone in rewrite mode",
              file=sys.stderr)
    if not args.quiet and stats.restored_definitions:  # not the model's text: say so
        print(f"{name}the model's reply left out {stats.restored_definitions} definition(s) "
              "the instruction does not name; kept as the file had them", file=sys.stderr)
    if not args.quiet and stats.restored_documentation:
        print(f"{name}the model's edit dropped {stats.restored_documentation} documentation "
              "block(s) of definitions it kept; kept as the file had them", file=sys.stderr)
    if not args.quiet and stats.restyled_lines:
        print(f"{name}the model wrote {stats.restyled_lines} line(s) in another indentation "
              "than the file's; written in the file's", file=sys.stderr)
    if not args.quiet and stats.tabbed_lines:
        print(f"{name}the file's tabs were shown to the model as four spaces; "
              f"{stats.tabbed_lines} indented line(s) written back in tabs", file=sys.stderr)
    if not args.quiet and result.mode == "rewrite":
        print(
            f"{name}rewrite: {stats.decoded_tokens} decoded + {stats.drafted_tokens} "
            f"accepted prediction tokens ({stats.rejected_tokens} rejected), "
            f"{stats.forwards} forwards, {stats.wall_s:.2f} s", file=sys.stderr)
    elif not args.quiet:
        # Search/replace blocks copy what lies outside them implicitly: nothing is spliced.
        copies = (f"{stats.spliced_tokens} copied tokens in {stats.copy_ops} splices"
                  if get_format(session.options.syntax).family == "tags" else "the lines outside the blocks copied "
                  "without a forward")
        if stats.unchanged_retries:
            copies += (f", {stats.unchanged_retries} block(s) that changed nothing written "
                       "again from the model's runner-up")
        if stats.doc_renames:  # not the model's text: say so (copygram.decode.renames)
            copies += (f", {stats.doc_renames} call(s) of the old name in comments or "
                       "docstrings renamed too")
        # No estimate where no one-token step was timed (it would read ~0.0x).
        speedup = result.speedup
        estimate = (f" (~{speedup:.1f}x vs decoding all {stats.output_tokens} output tokens)"
                    if math.isfinite(speedup) else "")
        print(
            f"{name}{stats.decoded_tokens} decoded + {stats.forced_tokens} forced + "
            f"{stats.drafted_tokens} drafted program tokens, {copies}, "
            f"{stats.forwards} forwards, {stats.wall_s:.2f} s{estimate}",
            file=sys.stderr,
        )


def _compare_plain(session: EditSession, result: EditResult) -> None:
    """Measure plain decoding of the same output after the same prompt (still cached): one
    forward per token, what generating the output without copygram costs."""
    from copygram.bench.replay import plain_cost

    output = result.raw if result.mode == "rewrite" else result.text
    plain = plain_cost(session.backend, output, result.stats.prompt_tokens)
    copied = result.stats.wall_s
    print(f"copygram: measured against plain decoding of the same {plain.output_tokens} output "
          f"tokens after the same prompt: {plain.wall_s:.2f} s plain vs {copied:.2f} s copygram "
          f"({plain.wall_s / copied if copied else float('nan'):.2f}x)", file=sys.stderr)


def _generate(session: EditSession, document: str, instruction: str,
              progress: _Progress, language: str | None) -> EditResult:
    from copygram import CopyEvent, DoneEvent, PrefillEvent, SpanEvent, TokenEvent
    from copygram.decode.events import RedoEvent

    for event in session.stream(document, instruction, language=language):
        interrupts.check()
        if isinstance(event, PrefillEvent):
            progress.prefill(event.done, event.total, event.cached)
        elif isinstance(event, TokenEvent):
            progress.update(generated=1)
        elif isinstance(event, SpanEvent):
            # A verified draft of the document's own text (a rewrite's, a head block's function
            # written again, a copy tag): taken from the file.
            progress.update(copied=len(event.token_ids))
        elif isinstance(event, CopyEvent):
            progress.update(copied=event.n_tokens)
        elif isinstance(event, RedoEvent):
            progress.status("the program's edit was not usable ("
                            + "; ".join(map(str, event.result.damage))
                            + "); redoing it in rewrite mode")
        elif isinstance(event, DoneEvent):
            return event.result
    raise AssertionError("the decode loop ended without a result")  # pragma: no cover


def _writer(args: argparse.Namespace, source: Path, document: str) -> Callable[[str], None]:
    """What to do with the edited text of ``source``, every path checked now (before the model
    loads)."""
    if args.output is not None and str(args.output) == STDOUT:
        return _write_stdout
    if not args.in_place and args.output is None:
        return lambda text: sys.stdout.writelines(diff_lines(document, text, source))
    path: Path = source if args.in_place else args.output
    target = writable_target(path)
    # Writing over the file being edited (--in-place, or -o naming it): refuse if it changed
    # since it was read, rather than silently undo someone else's change.
    same = target == Path(os.path.realpath(source))
    expected = document.encode("utf-8") if same else None

    def write(text: str) -> None:
        # Deferred: a signal lands before the check (nothing written) or after the rename
        # (written whole), never after the check and before the rename.
        with interrupts.deferred():
            write_text_atomic(path, text, expected=expected, before_commit=interrupts.check)
        if interrupts.received() is not None:
            print(f"copygram: the interrupt came after {path} was written; the edit is complete",
                  file=sys.stderr)

    return write


def _write_stdout(text: str) -> None:
    # Bytes, not text: exactly the document (its line endings, UTF-8 whatever the locale says).
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def _print_program(title: str, program_text: str) -> None:
    print(f"--- {title} ---\n{program_text}\n--- end of program ---", file=sys.stderr)


def diff_lines(before: str, after: str, path: Path) -> Iterator[str]:
    """A unified diff of two documents, every diff line ending in ``\\n``.

    A line keeps its own terminator (``\\r\\n`` shows as such); after a bare ``\\r`` (old Mac
    files) a ``\\n`` is added, since ``\\r`` ends the line too; only a last line with no
    terminator at all gets the "No newline at end of file" marker.
    """
    for line in difflib.unified_diff(split_lines(before), split_lines(after),
                                     fromfile=f"a/{path}", tofile=f"b/{path}"):
        if line.endswith("\n"):
            yield line
        elif line.endswith("\r"):
            yield line + "\n"
        else:
            yield line + "\n\\ No newline at end of file\n"
