"""The configuration, read and checked once: a flat mapping (a dict, or a TOML file) becomes a
frozen, typed :class:`SessionConfig` (how to edit) and :class:`BackendConfig` (which model, where).

Every value is checked here, before any model loads: the types (a bool is not a number, ``1.5``
is not an integer), finite numbers, ranges, the names of engines, syntaxes, backends, devices,
dtypes and models. A bad value is a :class:`~copygram.errors.ConfigError` that names the key, the
value and what is allowed; an unknown key is one that lists the valid keys. The checks run in
``__post_init__``, so a config built in code is checked the same way as one read from a file, and
the ``check_*`` helpers are the ones :class:`~copygram.session.EditSession` uses for its keyword
arguments. What only a loaded model can tell (a model file missing, a GPU absent, the model's
trained context) is the backend adapter's to check (:func:`copygram.backends.load`).

This module reads no model and imports no inference stack (layer "config" in
docs/architecture.md: it may import core, language, constraints and the catalog).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeVar

from copygram import catalog
from copygram.errors import ConfigError
from copygram.language.search_replace import SEARCH_REPLACE
from copygram.language.syntaxes import DEFAULT_SYNTAX, syntax_names

__all__ = [
    "AUTO_REWRITE_TOKENS",
    "BACKENDS",
    "BACKEND_KEYS",
    "CONFIG_KEYS",
    "DEVICES",
    "DTYPES",
    "LINE_VIEWS",
    "MODES",
    "SEARCH_SCOPES",
    "SESSION_KEYS",
    "BackendConfig",
    "Config",
    "SessionConfig",
    "check_choice",
    "check_engine",
    "check_flag",
    "check_int",
    "check_mode",
    "check_number",
    "check_on_damage",
    "check_syntax",
    "check_syntax_options",
    "check_tie_tolerance",
    "parse_backend_config",
    "parse_config",
    "program_retry_unchanged",
    "program_search_scope",
    "program_syntax",
    "read_config",
]

BackendName = Literal["llamacpp", "transformers"]
Device = Literal["auto", "cpu", "cuda"]
DType = Literal["auto", "float32", "bfloat16", "float16"]
# True: required (a load that cannot give it fails); "auto": where it costs nothing; False: off.
BatchInvariance = bool | Literal["auto"]

BACKENDS: Final[tuple[BackendName, ...]] = ("llamacpp", "transformers")
DEVICES: Final[tuple[Device, ...]] = ("auto", "cpu", "cuda")
DTYPES: Final[tuple[DType, ...]] = ("auto", "float32", "bfloat16", "float16")

_T = TypeVar("_T", bound=str)
_C = TypeVar("_C", "SessionConfig", "BackendConfig")


# ------------------------------------------------------------------------------------ checkers


def _invalid(key: str, value: object, allowed: str) -> ConfigError:
    return ConfigError(f"config key {key!r} = {value!r} is not valid: use {allowed}")


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


def check_choice(key: str, value: object, choices: Sequence[_T]) -> _T:
    """``value`` if it is one of ``choices``, else a :class:`ConfigError` listing them."""
    for choice in choices:
        if isinstance(value, str) and value == choice:
            return choice
    hint = ""
    if isinstance(value, str):
        close = difflib.get_close_matches(value, list(choices), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise _invalid(key, value, "one of " + ", ".join(map(repr, choices)) + hint)


def check_flag(key: str, value: object) -> bool:
    """``value`` if it is a bool (``"false"``, 0 and 1 are refused: they would read as flags)."""
    if not isinstance(value, bool):
        raise _invalid(key, value, "true or false")
    return value


def check_int(key: str, value: object, *, minimum: int, note: str = "") -> int:
    """``value`` if it is an integer (not a bool, not ``1.5`` nor ``2.0``) ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise _invalid(key, value, f"an integer >= {minimum}{note}")
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
        raise _invalid(key, value, allowed + note)
    number = float(value)
    if (not math.isfinite(number) or number < minimum or (above and number == minimum)
            or (maximum is not None and number > maximum)):
        raise _invalid(key, value, allowed + note)
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


MODES: Final = ("program", "rewrite", "auto")

AUTO_REWRITE_TOKENS: Final = 3072
"""``mode = "auto"``: a document of at most this many tokens is rewritten (rewrite mode) unless
its instruction names one of its definitions; a longer one is edited by a program (program
mode). ``auto_rewrite_tokens``; docs/quality.md ("Which mode edits by default") has the
measurements behind it."""


ON_DAMAGE: Final = ("rewrite", "error", "keep")
"""What a session does with an edit that would damage the file (copygram.decode.checked)."""


def check_on_damage(value: object) -> str:
    """``on_damage``: ``"rewrite"`` redoes a damaged program-mode edit in rewrite mode,
    ``"error"`` refuses it, ``"keep"`` returns it marked (:mod:`copygram.decode.checked`)."""
    return check_choice("on_damage", value, ON_DAMAGE)


def check_mode(value: object) -> str:
    """An edit mode: ``"program"`` (the model writes an edit program), ``"rewrite"`` (it
    rewrites the document, which drafts its own rewrite; docs/rewrite.md) or ``"auto"`` (one of
    the two per edit, by the document's length: :func:`copygram.decode.modes.choose_mode`)."""
    return check_choice("mode", value, MODES)


def check_syntax(value: object) -> str:
    """An edit-program syntax name: ``"lines"`` or ``"compact"`` (copy tags with line numbers)
    or ``"search_replace"`` (blocks anchored by content, copies implicit)."""
    return check_choice("syntax", value, [*syntax_names(), SEARCH_REPLACE])


def program_syntax(syntax: object, engine: str) -> str:
    """The edit-program syntax a session writes: ``syntax`` checked, or, when it is ``None``,
    program mode's default for ``engine``: search/replace blocks on llguidance (as head blocks,
    :func:`program_search_scope`: the route that passes the most tests, docs/quality.md), the
    ``lines`` copy tags on outlines (its engine compiles a regex, and the blocks' grammar is
    context-free)."""
    if syntax is None:
        return SEARCH_REPLACE if engine == "llguidance" else DEFAULT_SYNTAX
    return check_syntax(syntax)


def program_search_scope(search_scope: object, syntax: str) -> str:
    """``search_scope`` checked, or, when it is ``None``, the syntax's own: ``"head"`` for
    search/replace blocks (program mode's default), ``"lines"`` for copy tags (which name
    lines, and take no other scope)."""
    if search_scope is None:
        return "head" if syntax == SEARCH_REPLACE else "lines"
    return check_choice("search_scope", search_scope, SEARCH_SCOPES)


def program_retry_unchanged(retry_unchanged: object, syntax: str) -> bool:
    """``retry_unchanged`` checked, or, when it is ``None``, the syntax's own: on for
    search/replace blocks (program mode's default; docs/quality.md), off for copy tags (which
    have no blocks)."""
    if retry_unchanged is None:
        return syntax == SEARCH_REPLACE
    return check_flag("retry_unchanged", retry_unchanged)


def check_syntax_options(syntax: str, *, engine: str, copy_to_end: bool,
                         verify_copies: bool, merge_retyped: bool = False,
                         retry_unchanged: bool = False,
                         search_plan: bool = False, search_scope: str = "lines",
                         ordered_copies: bool = True, line_view: str = "pipe") -> None:
    """Raise :class:`ConfigError` for options that the syntax cannot honour, rather than run a
    route that silently ignores them: search/replace programs need the llguidance engine, have
    no copy tags to extend, verify or put out of order, and no numbered document in their
    prompt; only they have search scopes, plans, replacements whose retyped neighbours could be
    merged and blocks to write again where they change nothing."""
    if syntax != SEARCH_REPLACE:
        for key, value in (("merge_retyped", merge_retyped), ("search_plan", search_plan),
                           ("search_scope", search_scope != "lines"),
                           ("retry_unchanged", retry_unchanged)):
            if value:
                with_engine = ' with engine = "llguidance"' if engine != "llguidance" else ""
                raise ConfigError(f'{key} acts on search/replace blocks, and this session writes '
                                  f'copy tags (syntax "{syntax}"): set syntax = '
                                  f'"search_replace"{with_engine}, or leave {key} out')
        return
    if engine != "llguidance":
        raise ConfigError('syntax "search_replace" needs engine = "llguidance" (its grammar is '
                          'context-free, not one regex); with engine "outlines" write copy tags: '
                          'syntax = "lines" (its default there) or "compact"')
    for key, value in (("copy_to_end", copy_to_end), ("verify_copies", verify_copies),
                       ("ordered_copies", not ordered_copies),
                       ("line_view", line_view != "pipe")):
        if value:
            raise ConfigError(f'{key} acts on copy tags, and syntax "search_replace" (program '
                              "mode's default) has none: its copies are implicit, in document "
                              f'order. Set syntax = "lines" for copy tags, or leave {key} out')


# ------------------------------------------------------------------------------------- configs


@dataclass(frozen=True)
class SessionConfig:
    """How an :class:`~copygram.session.EditSession` edits (docs/config.md, "Session keys")."""

    engine: str = "llguidance"
    # None: program mode's default, head blocks on llguidance (program_syntax); a built config
    # holds the resolved name.
    syntax: str | None = None
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    max_new_tokens: int | None = None  # None: derived from each document (decode.guards)
    splice_forced: bool = True
    draft_tokens: int | None = None  # None: the mode's (16 in program mode, 64 in rewrite)
    draft_ngram: int = 3
    prompt_example: bool = True
    line_view: str = "pipe"  # how the prompt numbers lines: "pipe" (12| text) or "tab"
    search_scope: str | None = None  # syntax "search_replace": SEARCH_SCOPES (None: "head")
    ordered_copies: bool = True
    copy_to_end: bool = False
    verify_copies: bool = False
    merge_retyped: bool = False  # syntax "search_replace": see language.search_replace
    search_plan: bool = False  # syntax "search_replace": a "Plan:" line before the blocks
    # syntax "search_replace": a block that changes nothing is written again from the model's
    # most likely change (None: on for blocks; decode.unchanged)
    retry_unchanged: bool | None = None
    tie_tolerance: float | None = None  # None: the backend's measured step tolerance
    mode: str = "auto"
    # mode "auto": a document of at most this many tokens is rewritten unless its instruction
    # names one of its definitions (decode.modes); a longer one always gets a program
    auto_rewrite_tokens: int = AUTO_REWRITE_TOKENS
    # An edit that would damage the file (format markers in it, a parse it breaks, a definition
    # duplicated) is redone in rewrite mode, refused or kept marked (decode.checked).
    on_damage: str = "rewrite"

    def __post_init__(self) -> None:
        engine = check_engine(self.engine)
        syntax = program_syntax(self.syntax, engine)
        checked: dict[str, object] = {
            "engine": engine,
            "syntax": syntax,
            "temperature": check_number("temperature", self.temperature, minimum=0.0,
                                        note=" (0 is greedy)"),
            "top_p": check_number("top_p", self.top_p, minimum=0.0, above=True, maximum=1.0),
            "seed": check_int("seed", self.seed, minimum=0),
            "max_new_tokens": (None if self.max_new_tokens is None else
                               check_int("max_new_tokens", self.max_new_tokens, minimum=1)),
            "splice_forced": check_flag("splice_forced", self.splice_forced),
            "draft_tokens": (None if self.draft_tokens is None else
                             check_int("draft_tokens", self.draft_tokens, minimum=0,
                                       note=" (0 turns drafting off)")),
            "draft_ngram": check_int("draft_ngram", self.draft_ngram, minimum=1),
            "prompt_example": check_flag("prompt_example", self.prompt_example),
            "line_view": check_choice("line_view", self.line_view, LINE_VIEWS),
            "search_scope": program_search_scope(self.search_scope, syntax),
            "ordered_copies": check_flag("ordered_copies", self.ordered_copies),
            "copy_to_end": check_flag("copy_to_end", self.copy_to_end),
            "verify_copies": check_flag("verify_copies", self.verify_copies),
            "merge_retyped": check_flag("merge_retyped", self.merge_retyped),
            "search_plan": check_flag("search_plan", self.search_plan),
            "retry_unchanged": program_retry_unchanged(self.retry_unchanged, syntax),
            "tie_tolerance": check_tie_tolerance(self.tie_tolerance),
            "mode": check_mode(self.mode),
            "auto_rewrite_tokens": check_int("auto_rewrite_tokens", self.auto_rewrite_tokens,
                                             minimum=0, note=" (0: mode auto always programs)"),
            "on_damage": check_on_damage(self.on_damage),
        }
        if checked["copy_to_end"] and not checked["ordered_copies"]:
            raise ConfigError("copy_to_end needs ordered_copies = true (the end of the document "
                              "is known only when copies keep its order)")
        check_syntax_options(str(checked["syntax"]), engine=str(checked["engine"]),
                             copy_to_end=bool(checked["copy_to_end"]),
                             verify_copies=bool(checked["verify_copies"]),
                             merge_retyped=bool(checked["merge_retyped"]),
                             retry_unchanged=bool(checked["retry_unchanged"]),
                             search_plan=bool(checked["search_plan"]),
                             search_scope=str(checked["search_scope"]),
                             ordered_copies=bool(checked["ordered_copies"]),
                             line_view=str(checked["line_view"]))
        _normalise(self, checked)


@dataclass(frozen=True)
class BackendConfig:
    """Which model, on which backend and device (docs/config.md, "Backend keys").

    ``model`` is a catalog name or alias (:mod:`copygram.catalog`), the path of a ``.gguf`` file,
    or for Transformers a Hugging Face model folder or hub name (``org/name``). ``n_ctx`` and
    ``n_threads`` are ``None`` for the backend's default (:mod:`copygram.backends`)."""

    backend: BackendName = "llamacpp"
    model: str = "default"
    device: Device = "auto"
    dtype: DType = "auto"
    n_ctx: int | None = None
    n_threads: int | None = None
    # A batched forward's rows equal one-token steps bit for bit (llama.cpp on a CPU): the
    # output of drafted decoding is then plain greedy's on every run (docs/config.md). "auto":
    # where the build and device give it at no cost, checked when the model loads.
    batch_invariant: BatchInvariance = "auto"
    # A kernel.json that `copygram bench kernel` wrote on this machine: the draft sizer prices
    # forwards on it instead of the built-in curve (backends.curves). None: the built-in one.
    cost_curve: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.backend, dict):  # a TOML [backend] table
            raise ConfigError(
                "config key 'backend' is a table; write the backend keys (backend, model, "
                "device, dtype, n_ctx, n_threads, batch_invariant, cost_curve) at the top level "
                "of the config"
            )
        backend = check_choice("backend", self.backend, BACKENDS)
        dtype = check_choice("dtype", self.dtype, DTYPES)
        if backend == "llamacpp" and dtype != "auto":
            raise _invalid("dtype", dtype, "'auto' with backend 'llamacpp' (a GGUF file fixes "
                           "llama.cpp's weight types; dtype applies to backend 'transformers')")
        invariant = _check_invariance(self.batch_invariant)
        if invariant is True and backend != "llamacpp":
            raise _invalid("batch_invariant", invariant, "false with backend 'transformers' "
                           "(batch-invariant kernels exist here for llama.cpp on a CPU; "
                           "Transformers re-decides near-ties instead, see tie_tolerance)")
        if invariant is True and self.device == "cuda":
            raise _invalid("batch_invariant", invariant, "false with device 'cuda' (llama.cpp's "
                           "CUDA kernels change with the batch size; use device 'cpu')")
        if invariant == "auto" and (backend != "llamacpp" or self.device == "cuda"):
            invariant = False  # no batch-invariant kernels there: say so in the parsed config
        checked: dict[str, object] = {
            "backend": backend,
            "model": _check_model(self.model, backend),
            "device": check_choice("device", self.device, DEVICES),
            "dtype": dtype,
            "n_ctx": None if self.n_ctx is None else check_int("n_ctx", self.n_ctx, minimum=1),
            "n_threads": (None if self.n_threads is None
                          else check_int("n_threads", self.n_threads, minimum=1)),
            "batch_invariant": invariant,
            "cost_curve": None if self.cost_curve is None else _check_cost_curve(self.cost_curve),
        }
        _normalise(self, checked)

    @property
    def is_catalog_model(self) -> bool:
        """Whether ``model`` names a catalog entry (or alias) rather than a path or hub name."""
        return _is_catalog_name(self.model)


def _check_cost_curve(value: object) -> str:
    """A ``cost_curve`` setting as the path of an existing file (``~`` expanded)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise _invalid("cost_curve", value, "the path of a kernel.json that `copygram bench "
                       "kernel --out DIR` wrote")
    path = Path(value).expanduser()
    if not path.is_file():
        raise ConfigError(f"cost_curve {value!r}: no such file; write one with `copygram bench "
                          "kernel --backend BACKEND --model MODEL --out DIR` on this machine and "
                          "pass DIR/kernel.json")
    return str(path)


def _check_invariance(value: object) -> BatchInvariance:
    if value == "auto" and isinstance(value, str):
        return "auto"
    if not isinstance(value, bool):
        raise _invalid("batch_invariant", value, "true, false or \"auto\"")
    return value


_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def _is_catalog_name(model: str) -> bool:
    return model in catalog.ALIASES or model in catalog.model_names()


def _check_model(value: object, backend: str) -> str:
    """A model setting as a string: a catalog name or alias, a ``.gguf`` path (``os.PathLike``
    values are paths), or for Transformers an existing folder or a hub name."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)  # type: ignore[no-any-return]
    allowed = (f"a catalog name ({', '.join(catalog.model_names())}; 'default' = "
               f"{catalog.ALIASES['default']}) or the path of a .gguf file")
    if backend == "transformers":
        allowed += ", or a Hugging Face model folder or hub name (org/name)"
    if not isinstance(value, str) or not value.strip():
        raise _invalid("model", value, allowed)
    if _is_catalog_name(value) or value.lower().endswith(".gguf"):
        return value
    if backend == "transformers" and (Path(value).expanduser().is_dir()
                                      or _HUB_NAME.fullmatch(value)):
        return value
    close = difflib.get_close_matches(value, [*catalog.model_names(), *catalog.ALIASES], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise _invalid("model", value, allowed + hint)


def _normalise(config: object, values: Mapping[str, object]) -> None:
    """Store the checked (converted) values on a frozen dataclass: ``1`` -> ``1.0`` for a float
    key, a ``Path`` -> its string for ``model``."""
    for name, value in values.items():
        object.__setattr__(config, name, value)


SESSION_KEYS: Final = tuple(f.name for f in dataclasses.fields(SessionConfig))
BACKEND_KEYS: Final = tuple(f.name for f in dataclasses.fields(BackendConfig))
CONFIG_KEYS: Final = SESSION_KEYS + BACKEND_KEYS


@dataclass(frozen=True)
class Config:
    """Both halves of one flat config."""

    session: SessionConfig = dataclasses.field(default_factory=SessionConfig)
    backend: BackendConfig = dataclasses.field(default_factory=BackendConfig)

    def to_dict(self) -> dict[str, object]:
        """The flat mapping this config reads back from (``None`` values left out: TOML has no
        null); ``parse_config(c.to_dict()) == c``."""
        flat = {**dataclasses.asdict(self.session), **dataclasses.asdict(self.backend)}
        return {key: value for key, value in flat.items() if value is not None}


# ------------------------------------------------------------------------------------- reading


def read_config(source: Mapping[str, object] | str | os.PathLike[str]) -> dict[str, object]:
    """The flat mapping of a dict (copied) or of a TOML file (a ``str`` is a path)."""
    if isinstance(source, Mapping):
        return dict(source)
    path = Path(source)
    try:
        with path.open("rb") as f:
            data: dict[str, object] = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a directory; pass a TOML file") from None
    except PermissionError:
        raise ConfigError(f"config file {path} cannot be read (permission denied)") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    return data


def _check_keys(keys: Sequence[str], valid: Sequence[str]) -> None:
    unknown = sorted(set(keys) - set(valid), key=str)
    if not unknown:
        return
    described = []
    for key in unknown:
        close = difflib.get_close_matches(str(key), list(valid), n=1)
        described.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise ConfigError(
        f"unknown config key(s) {', '.join(described)}; valid keys: {', '.join(valid)} "
        "(see docs/config.md)"
    )


def _build(cls: type[_C], values: Mapping[str, object]) -> _C:
    # The dataclass checks every value in __post_init__; the type annotations are what it
    # produces, not what it accepts.
    return cls(**values)  # type: ignore[arg-type]


def parse_backend_config(source: Mapping[str, object]) -> BackendConfig:
    """A :class:`BackendConfig` from a mapping of backend keys only."""
    values = dict(source)
    _check_keys(list(values), BACKEND_KEYS)
    return _build(BackendConfig, values)


def parse_config(source: Mapping[str, object] | str | os.PathLike[str]) -> Config:
    """Read (a dict, or a TOML file's path) and check a whole flat config, loading nothing.

    Raises :class:`ConfigError` for a file that is missing or not TOML, an unknown key (the
    message lists the valid ones) or a bad value (it names the key, the value and what is
    allowed). Cost: microseconds for a dict, plus the file read for TOML."""
    values = read_config(source)
    _check_keys(list(values), CONFIG_KEYS)
    session = {k: v for k, v in values.items() if k in SESSION_KEYS}
    backend = {k: v for k, v in values.items() if k in BACKEND_KEYS}
    # The backend first: a wrong backend or model is the likelier mistake and changes the most.
    backend_config = _build(BackendConfig, backend)
    return Config(session=_build(SessionConfig, session), backend=backend_config)
