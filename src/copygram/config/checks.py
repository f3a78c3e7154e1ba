"""The value checks every configuration key goes through, whether it comes from a TOML file, a
dict, a dataclass built in code or a keyword of :class:`~copygram.session.EditSession`: a bad
value is a :class:`~copygram.errors.ConfigError` that names the key, the value and what is
allowed (with a "did you mean" where a name is close)."""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Sequence
from typing import Final, TypeVar

from copygram.errors import ConfigError
from copygram.language.formats import format_names

__all__ = [
    "LINE_VIEWS",
    "MODES",
    "ON_DAMAGE",
    "PROMPT_ORDERS",
    "SEARCH_SCOPES",
    "check_choice",
    "check_engine",
    "check_flag",
    "check_int",
    "check_mode",
    "check_number",
    "check_on_damage",
    "check_syntax",
    "check_tie_tolerance",
    "close_match",
    "invalid",
]

_T = TypeVar("_T", bound=str)

MODES: Final = ("program", "rewrite", "auto")
ON_DAMAGE: Final = ("rewrite", "error", "keep")
"""What a session does with an edit that would damage the file (copygram.decode.checked)."""
SEARCH_SCOPES: Final = ("lines", "unit", "head")
"""How much a search/replace block takes in: ``"lines"``, just the lines that change; ``"unit"``,
the whole function (or paragraph) that holds the change, searched and written again (both set by
the prompt's worked block); ``"head"``, a search part of one line, the first line of the function
or paragraph, and the block replaces all of it (:mod:`copygram.language.units` finds its end),
which the model writes once."""
LINE_VIEWS: Final = ("pipe", "tab")
"""How the program-mode prompt numbers the document's lines: ``pipe`` writes ``12| text``
(numbers right-aligned), ``tab`` writes ``12<TAB>text`` as ``cat -n`` does: nothing between the
tab and the text, so a model does not take the separator's space for indentation."""
PROMPT_ORDERS: Final = ("instruction_first", "document_first")
"""Where the user's turn puts the instruction: before the document, or after it. With the
document first, a new instruction on a document the cache already holds (an editor's next edit of
the same file) reuses the document's KV instead of computing it again."""


def invalid(key: str, value: object, allowed: str) -> ConfigError:
    """The error of a bad value: the key, the value and what is allowed."""
    return ConfigError(f"config key {key!r} = {value!r} is not valid: use {allowed}")


def close_match(name: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(key: str, value: object, choices: Sequence[_T]) -> _T:
    """``value`` if it is one of ``choices``, else a :class:`ConfigError` listing them."""
    for choice in choices:
        if isinstance(value, str) and value == choice:
            return choice
    hint = close_match(value, choices) if isinstance(value, str) else ""
    raise invalid(key, value, "one of " + ", ".join(map(repr, choices)) + hint)


def check_languages(key: str, value: object) -> tuple[str, ...]:
    """``value``, a list of the language names the damage checks know (or one comma-separated
    string of them), as a tuple without repeats."""
    from copygram.language.parsers import LANGUAGES

    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(x, str) for x in items):
        raise invalid(key, value, f"a list of language names from {', '.join(LANGUAGES)}")
    names = tuple(dict.fromkeys(x.strip() for x in items if x.strip()))
    unknown = [name for name in names if name not in LANGUAGES]
    if unknown:
        raise invalid(key, value, f"language names from {', '.join(LANGUAGES)}"
                      + close_match(unknown[0], LANGUAGES))
    return names


def check_flag(key: str, value: object) -> bool:
    """``value`` if it is a bool (``"false"``, 0 and 1 are refused: they would read as flags)."""
    if not isinstance(value, bool):
        raise invalid(key, value, "true or false")
    return value


def check_int(key: str, value: object, *, minimum: int, note: str = "") -> int:
    """``value`` if it is an integer (not a bool, not ``1.5`` nor ``2.0``) ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise invalid(key, value, f"an integer >= {minimum}{note}")
    return int(value)


def check_number(key: str, value: object, *, minimum: float, above: bool = False,
                 maximum: float | None = None, note: str = "") -> float:
    """``value`` as a float if it is a finite real number (not a bool, not inf or nan) that is
    ``>= minimum`` (``> minimum`` when ``above``) and ``<= maximum`` when one is given."""
    low = f"> {minimum:g}" if above else f">= {minimum:g}"
    allowed = (f"a number in ({minimum:g}, {maximum:g}]" if above and maximum is not None
               else f"a finite number {low}" + (f" and <= {maximum:g}" if maximum is not None
                                                  else ""))
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid(key, value, allowed + note)
    number = float(value)
    if (not math.isfinite(number) or number < minimum or (above and number == minimum)
            or (maximum is not None and number > maximum)):
        raise invalid(key, value, allowed + note)
    return number


def check_tie_tolerance(value: object) -> float | None:
    """None (the backend's own) or a finite number >= 0 (0: never re-decide a near-tie)."""
    if value is None:
        return None
    return check_number("tie_tolerance", value, minimum=0.0,
                        note=" (0 never re-decides a near-tie; omit it for the backend's own)")


def check_engine(value: object) -> str:
    """A constraint engine name (``"llguidance"`` or ``"outlines"``)."""
    # Imported here: the constraints package pulls numpy and llguidance, which reading a config
    # alone does not need.
    from copygram.constraints import ENGINES

    return check_choice("engine", value, ENGINES)


def check_on_damage(value: object) -> str:
    """``on_damage``: ``"rewrite"`` redoes a damaged program-mode edit in rewrite mode,
    ``"error"`` refuses it, ``"keep"`` returns it marked (:mod:`copygram.decode.checked`)."""
    return check_choice("on_damage", value, ON_DAMAGE)


def check_mode(value: object) -> str:
    """An edit mode: ``"program"`` (the model writes an edit program), ``"rewrite"`` (it
    rewrites the document, which drafts its own rewrite; docs/rewrite.md) or ``"auto"`` (one of
    the two per edit: :func:`copygram.decode.modes.choose_mode`)."""
    return check_choice("mode", value, MODES)


def check_syntax(value: object) -> str:
    """An edit-program syntax name: ``"lines"`` or ``"compact"`` (copy tags with line numbers)
    or ``"search_replace"`` (blocks anchored by content, copies implicit)."""
    return check_choice("syntax", value, format_names())
