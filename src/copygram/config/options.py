"""The edit options: one frozen, checked :class:`SessionConfig` says how an
:class:`~copygram.session.EditSession` edits; its fields are the only list of the options.

A few are what a user sets (``mode``, sampling, the output budget, ``on_damage``); the rest are
research routes (:data:`ROUTE`-marked fields): how program mode decodes, each documented in
docs/config.md with the measurement that made its default. A config file writes the routes in a
``[route]`` table (:func:`copygram.config.parse_config`); in code every option is a keyword
alike (``SessionConfig(syntax="lines")``, ``EditSession(backend, mode="rewrite")``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from copygram.config.checks import (
    LINE_VIEWS,
    PROMPT_ORDERS,
    SEARCH_SCOPES,
    check_choice,
    check_engine,
    check_flag,
    check_int,
    check_languages,
    check_mode,
    check_number,
    check_on_damage,
    check_syntax,
    check_tie_tolerance,
    close_match,
)
from copygram.errors import ConfigError
from copygram.language.formats import default_syntax, get_format

__all__ = [
    "AUTO_PROGRAM_TOKENS",
    "AUTO_REWRITE_LANGUAGES",
    "AUTO_REWRITE_TOKENS",
    "FOCUS_TOKENS",
    "ROUTE",
    "SessionConfig",
    "check_syntax_options",
    "normalise",
    "program_retry_unchanged",
    "program_search_scope",
    "program_syntax",
    "program_touch_named",
    "route_keys",
]

ROUTE: Final[Mapping[str, bool]] = {"route": True}
"""The metadata of a research-route field: written in the config's ``[route]`` table."""

AUTO_REWRITE_TOKENS: Final = 3072
"""``mode = "auto"``: a document of at most this many tokens is rewritten (rewrite mode) unless
its instruction names one of its definitions and it is short (:data:`AUTO_PROGRAM_TOKENS`); a
longer one is edited by a program (program mode). ``auto_rewrite_tokens``; docs/quality.md
("Which mode edits by default") has the measurements behind it."""

AUTO_PROGRAM_TOKENS: Final = 3072
"""``mode = "auto"``: an instruction that names a document's definitions gets a program only
for a document of at most this many tokens, or one longer than :data:`AUTO_REWRITE_TOKENS`;
one in between is rewritten. The same as :data:`AUTO_REWRITE_TOKENS` since 2026-12-07: a
program for a file of 50-300 lines now reads a view of it (:data:`FOCUS_TOKENS`), and on the
medium edit-kinds rows those programs passed as many tests as the whole file's rewrite or more
in a fraction of its time; read whole, the default model's programs there had been redone more
often than not, which had set this to 640 (``auto_program_tokens``; docs/quality.md, "Files of
50-300 lines: a program from a view")."""

FOCUS_TOKENS: Final = 640
"""Program mode with search/replace blocks: a document of more than this many tokens (~50
lines) whose instruction targets some of its definitions is shown to the model as a view (those
definitions, their callers and callees, the file's head; every other run one elision line:
:mod:`copygram.language.focus`), so that its prompt's prefill does not grow with the file and
the model sees the definition it edits, not fifty others. The same length sends a missed
program's redo, and a removal inside a definition, to an excerpt of the file
(:mod:`copygram.decode.scoped`). 3,072 until 2026-12-07 (``focus_tokens``, 0: the whole
document always; docs/quality.md, "Files of 50-300 lines: a program from a view" and "Files of
300-1,500 lines: a view of the file")."""

AUTO_REWRITE_LANGUAGES: Final = ("java",)
"""``mode = "auto"``: documents in these languages are always rewritten. In Java the default
model heads its blocks with statement lines inside a method and writes on past their unit: on
the dev split's HumanEvalFix Java rows program mode passed 2/10 against the rewrite's 4/10, in
1.6x its time, and 14 of 16 programs on the Java edit-kinds rows were redone
(``auto_rewrite_languages``; docs/quality.md, "C++ and Java")."""

# The options whose default depends on others (the syntax on the engine, the scope and the
# retries on the syntax): "" or None until resolved, and resolved afresh by
# SessionConfig.replace.
_RESOLVED: Final = ("syntax", "search_scope", "retry_unchanged", "touch_named")


def program_syntax(syntax: object, engine: str) -> str:
    """The edit-program syntax a session writes: ``syntax`` checked, or, when it is ``""`` or
    ``None``, program mode's default for ``engine``
    (:func:`~copygram.language.formats.default_syntax`: head blocks on llguidance, the route
    that passes the most tests, docs/quality.md; copy tags on outlines)."""
    if syntax in (None, ""):
        return default_syntax(engine)
    return check_syntax(syntax)


def program_search_scope(search_scope: object, syntax: str) -> str:
    """``search_scope`` checked, or, when it is ``""`` or ``None``, the syntax's own
    (``ProgramFormat.default_scope``: ``"head"`` for blocks, ``"lines"`` for copy tags, which
    name lines and take no other scope)."""
    if search_scope in (None, ""):
        return get_format(syntax).default_scope
    return check_choice("search_scope", search_scope, SEARCH_SCOPES)


def program_retry_unchanged(retry_unchanged: object, syntax: str) -> bool:
    """``retry_unchanged`` checked, or, when it is ``None``, the syntax's own
    (``ProgramFormat.retries_unchanged``: on for blocks, program mode's default, docs/quality.md;
    off for copy tags, which have no blocks)."""
    return _format_flag("retry_unchanged", retry_unchanged,
                        get_format(syntax).retries_unchanged)


def program_touch_named(touch_named: object, syntax: str) -> bool:
    """``touch_named`` checked, or, when it is ``None``, the syntax's own
    (``ProgramFormat.touches_named``: on for blocks, docs/quality.md; off for copy tags, whose
    grammar names line numbers, not runs)."""
    return _format_flag("touch_named", touch_named, get_format(syntax).touches_named)


def _format_flag(key: str, value: object, default: bool) -> bool:
    return default if value is None else check_flag(key, value)


def check_syntax_options(options: SessionConfig) -> None:
    """Raise :class:`ConfigError` for options that the syntax cannot honour, rather than run a
    route that silently ignores them (each format's :meth:`~ProgramFormat.check`)."""
    get_format(options.syntax).check(options)


def normalise(config: object, values: Mapping[str, object]) -> None:
    """Store the checked (converted) values on a frozen dataclass: ``1`` -> ``1.0`` for a float
    key, a ``Path`` -> its string for ``model``."""
    for name, value in values.items():
        object.__setattr__(config, name, value)


@dataclass(frozen=True, kw_only=True)
class SessionConfig:
    """How an :class:`~copygram.session.EditSession` edits: the options, checked when built
    (docs/config.md, "Session keys" and "Route keys"). :meth:`replace` is the one way to change
    some: every value is checked again, and the defaults that depend on others resolved again."""

    # -- what a user sets
    mode: str = "auto"
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    max_new_tokens: int | None = None  # None: derived from each document (decode.budgets)
    # An edit that would damage the file (format markers in it, a parse it breaks, a definition
    # duplicated) is redone in rewrite mode, refused or kept marked (decode.checked).
    on_damage: str = "rewrite"
    # -- research routes ([route] in a config file)
    engine: str = field(default="llguidance", metadata=ROUTE)
    # "" (or None): program mode's default, head blocks on llguidance (program_syntax); a built
    # config holds the resolved name.
    syntax: str = field(default="", metadata=ROUTE)
    splice_forced: bool = field(default=True, metadata=ROUTE)
    # None: the mode's (16 in program mode, 64 in rewrite mode)
    draft_tokens: int | None = field(default=None, metadata=ROUTE)
    draft_ngram: int = field(default=3, metadata=ROUTE)
    # Drafts sized for speed on the backend's measured forward costs (False: draft_tokens, shrunk
    # after rejections; decode.drafting.length)
    draft_adaptive: bool = field(default=True, metadata=ROUTE)
    prompt_example: bool = field(default=True, metadata=ROUTE)
    # How the prompt numbers lines: "pipe" (12| text) or "tab"
    line_view: str = field(default="pipe", metadata=ROUTE)
    # Where the user's turn puts the instruction (PROMPT_ORDERS): "document_first" lets a new
    # instruction on a cached document reuse the document's KV
    prompt_order: str = field(default="instruction_first", metadata=ROUTE)
    # Syntax "search_replace": SEARCH_SCOPES ("" or None: "head" for blocks, "lines" for tags)
    search_scope: str = field(default="", metadata=ROUTE)
    # Copies in document order bound every program by the document (docs/constraints.md)
    ordered_copies: bool = field(default=True, metadata=ROUTE)
    # A program may end only after a copy of the last line (needs ordered copies)
    copy_to_end: bool = field(default=False, metadata=ROUTE)
    # A copy keeps only the lines the model, reading them, would have written itself
    verify_copies: bool = field(default=False, metadata=ROUTE)
    # Head blocks: a head may be a line inside a function's body (false: a function is named by
    # its first line and written whole; language.units.body_lines)
    body_heads: bool = field(default=True, metadata=ROUTE)
    # Syntax "search_replace": a replacement's retyped neighbours join its run
    merge_retyped: bool = field(default=False, metadata=ROUTE)
    # Syntax "search_replace": a "Plan:" line before the blocks
    search_plan: bool = field(default=False, metadata=ROUTE)
    # Syntax "search_replace": a block that changes nothing is written again from the model's
    # most likely change (None: on for blocks; decode.unchanged)
    retry_unchanged: bool | None = field(default=None, metadata=ROUTE)
    # Syntax "search_replace": where the instruction targets definitions of the document, some
    # block must reach one, each of those it lists (None: on for blocks; targets.named_reach)
    touch_named: bool | None = field(default=None, metadata=ROUTE)
    # Greedy choices read from batched rows within this margin are re-decided with a one-token
    # step (None: the backend's measured BatchProfile.step_tolerance)
    tie_tolerance: float | None = field(default=None, metadata=ROUTE)
    # Mode "auto": a document of at most this many tokens is rewritten unless its instruction
    # names one of its definitions and it is short (decode.modes); a longer one always gets a
    # program
    auto_rewrite_tokens: int = field(default=AUTO_REWRITE_TOKENS, metadata=ROUTE)
    # Mode "auto": an instruction naming definitions gets a program only up to this many
    # tokens (or past auto_rewrite_tokens); in between, a rewrite (default: no such band)
    auto_program_tokens: int = field(default=AUTO_PROGRAM_TOKENS, metadata=ROUTE)
    # Program mode, blocks: a document of more than this many tokens whose instruction targets
    # its definitions is shown as a view of them (language.focus; 0: the whole document)
    focus_tokens: int = field(default=FOCUS_TOKENS, metadata=ROUTE)
    # A code file indented by tabs is shown to the model in four spaces a depth and its edit
    # written back in tabs (decode.tab_view; not in mode "rewrite", which is plain greedy's
    # output, nor with a prediction)
    tabs_as_spaces: bool = field(default=True, metadata=ROUTE)
    # Mode "auto": documents in these languages (copygram.language.parsers.LANGUAGES) are
    # always rewritten, whatever their length
    auto_rewrite_languages: tuple[str, ...] = field(default=AUTO_REWRITE_LANGUAGES,
                                                    metadata=ROUTE)
    # The options left to their resolved defaults (_RESOLVED), which replace() resolves again.
    unset: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        engine = check_engine(self.engine)
        syntax = program_syntax(self.syntax, engine)
        checked: dict[str, object] = {
            "mode": check_mode(self.mode),
            "temperature": check_number("temperature", self.temperature, minimum=0.0,
                                        note=" (0 is greedy)"),
            "top_p": check_number("top_p", self.top_p, minimum=0.0, above=True, maximum=1.0),
            "seed": check_int("seed", self.seed, minimum=0),
            "max_new_tokens": (None if self.max_new_tokens is None else
                               check_int("max_new_tokens", self.max_new_tokens, minimum=1)),
            "on_damage": check_on_damage(self.on_damage),
            "engine": engine,
            "syntax": syntax,
            "splice_forced": check_flag("splice_forced", self.splice_forced),
            "draft_tokens": (None if self.draft_tokens is None else
                             check_int("draft_tokens", self.draft_tokens, minimum=0,
                                       note=" (0 turns drafting off)")),
            "draft_ngram": check_int("draft_ngram", self.draft_ngram, minimum=1),
            "draft_adaptive": check_flag("draft_adaptive", self.draft_adaptive),
            "prompt_example": check_flag("prompt_example", self.prompt_example),
            "line_view": check_choice("line_view", self.line_view, LINE_VIEWS),
            "prompt_order": check_choice("prompt_order", self.prompt_order, PROMPT_ORDERS),
            "search_scope": program_search_scope(self.search_scope, syntax),
            "ordered_copies": check_flag("ordered_copies", self.ordered_copies),
            "copy_to_end": check_flag("copy_to_end", self.copy_to_end),
            "verify_copies": check_flag("verify_copies", self.verify_copies),
            "merge_retyped": check_flag("merge_retyped", self.merge_retyped),
            "body_heads": check_flag("body_heads", self.body_heads),
            "search_plan": check_flag("search_plan", self.search_plan),
            "retry_unchanged": program_retry_unchanged(self.retry_unchanged, syntax),
            "touch_named": program_touch_named(self.touch_named, syntax),
            "tie_tolerance": check_tie_tolerance(self.tie_tolerance),
            "auto_rewrite_tokens": check_int("auto_rewrite_tokens", self.auto_rewrite_tokens,
                                             minimum=0, note=" (0: mode auto always programs)"),
            "auto_program_tokens": check_int("auto_program_tokens", self.auto_program_tokens,
                                             minimum=0, note=" (0: only past "
                                             "auto_rewrite_tokens)"),
            "focus_tokens": check_int("focus_tokens", self.focus_tokens, minimum=0,
                                      note=" (0: the whole document always)"),
            "tabs_as_spaces": check_flag("tabs_as_spaces", self.tabs_as_spaces),
            "auto_rewrite_languages": check_languages("auto_rewrite_languages",
                                                      self.auto_rewrite_languages),
            "unset": self.unset | {key for key in _RESOLVED if getattr(self, key) in ("", None)},
        }
        if checked["copy_to_end"] and not checked["ordered_copies"]:
            raise ConfigError("copy_to_end needs ordered_copies = true (the end of the document "
                              "is known only when copies keep its order)")
        normalise(self, checked)
        check_syntax_options(self)

    def replace(self, **changes: object) -> SessionConfig:
        """These options with ``changes`` (option names as keywords), checked. An option left to
        its default that depends on others (``syntax`` on ``engine``; ``search_scope`` and
        ``retry_unchanged`` and ``touch_named`` on ``syntax``) takes the default of the new
        values. Microseconds."""
        names = session_keys()
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise ConfigError(f"unknown option(s) {', '.join(map(repr, unknown))}"
                              f"{close_match(unknown[0], names)}; the options: "
                              f"{', '.join(names)} (docs/config.md)")
        values = {name: getattr(self, name) for name in names if name not in self.unset}
        values.update(changes)
        # Every value is checked in __post_init__; the annotations are what it produces.
        return SessionConfig(**values)

    def given(self) -> dict[str, object]:
        """The options as set: every one but those left to a resolved default (and ``None``
        ones): ``SessionConfig(**c.given()) == c``."""
        return {name: value for name in session_keys()
                if name not in self.unset and (value := getattr(self, name)) is not None}


def session_keys() -> tuple[str, ...]:
    """Every option's name, in field order (the user's first, then the routes)."""
    return tuple(f.name for f in dataclasses.fields(SessionConfig) if f.init)


def route_keys(cls: type) -> tuple[str, ...]:
    """The names of ``cls``'s route fields (a config's ``[route]`` table)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("route"))
