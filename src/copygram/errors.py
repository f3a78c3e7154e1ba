"""The exception hierarchy: every error copygram raises derives from :class:`CopygramError`.

Each message says what went wrong *and* what to do about it.
"""

from __future__ import annotations


class CopygramError(Exception):
    """Root of every error raised by copygram."""


class ProgramSyntaxError(CopygramError, ValueError):
    """Edit-program text that is not in the language; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, *, line: int, column: int, text: str | None = None) -> None:
        super().__init__(f"{message} (program line {line}, column {column})")
        self.line = line
        self.column = column
        self.text = text


class RangeError(CopygramError, ValueError):
    """A copy op whose line range is not 1 <= start <= end <= n for the document at hand
    (``n_lines`` is ``None`` where no document is at hand: a line number below 1)."""

    def __init__(self, message: str, *, op: object, n_lines: int | None) -> None:
        super().__init__(message)
        self.op = op
        self.n_lines = n_lines


class DocumentError(CopygramError, ValueError):
    """A document copygram cannot edit (empty, binary, not UTF-8, too large for the limits)."""


class ConstraintError(CopygramError):
    """The grammar could not be compiled into a token-level constraint, or was driven wrongly."""


class ConfigError(CopygramError, ValueError):
    """A configuration key or value that is unknown or invalid."""


class BackendError(CopygramError):
    """An inference backend could not be loaded or failed while running."""


class MissingDependencyError(BackendError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


class GenerationError(CopygramError):
    """Decoding did not produce a complete program; ``partial_program`` holds what was emitted
    and ``stats``, where the decode loop raised it, the run's
    :class:`~copygram.decode.stats.RunStats` so far (forwards, tokens, times)."""

    def __init__(self, message: str, *, partial_program: str, stats: object | None = None) -> None:
        super().__init__(message)
        self.partial_program = partial_program
        self.stats = stats


class LengthError(GenerationError):
    """The program reached its length limit before it was complete: the caller's
    ``max_new_tokens``, or the room left in the model's context. Not a failure of the model
    (a chat reply cut there ends with ``finish_reason: "length"``); a run that exhausts the
    *default* budget raises a plain :class:`GenerationError`, since that budget leaves room to
    rewrite the document twice and only a looping model reaches it."""


class RunawayError(GenerationError):
    """A head block's replacement ran on past its unit and typed the units after it again
    (:class:`~copygram.decode.budgets.RunawayGuard`). The session closes the block where the
    next unit began (:func:`~copygram.language.runaway.close_runaway`) and raises this only
    where that does not read as the document's lines; redone in rewrite mode like any
    unfinished program."""


class DamagedEditError(GenerationError):
    """The edit would damage the file (:mod:`copygram.language.damage`: the format's markers in
    it, a file that parsed and no longer does, a definition duplicated, a name left undefined)
    and was not redone, or was redone and still does. ``result`` is the damaged edit (its
    ``text`` is what would have been written), ``damage`` what is wrong with it;
    ``partial_program`` is its program."""

    def __init__(self, message: str, *, result: object, damage: tuple[object, ...]) -> None:
        super().__init__(message, partial_program=str(getattr(result, "program_text", "")),
                         stats=getattr(result, "stats", None))
        self.result = result
        self.damage = damage


def missing_dependency(module: str, extra: str) -> MissingDependencyError:
    """The error to raise when ``import module`` failed inside an adapter needing ``extra``."""
    return MissingDependencyError(
        f"copygram needs the optional dependency {module!r} for this; "
        f"install it with: pip install 'copygram[{extra}]'"
    )
