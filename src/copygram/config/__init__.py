"""The configuration, read and checked once: a mapping (a dict, or a TOML file) becomes a frozen,
typed :class:`Config`: :class:`SessionConfig` (how to edit: the edit options) and
:class:`BackendConfig` (which model, where).

A config holds the keys a user sets at its top level (``backend``, ``model``, ``device``,
``dtype``, ``n_ctx``, ``n_threads``, ``rpc_servers``, ``mode``, ``temperature``, ``top_p``,
``seed``, ``max_new_tokens``, ``on_damage``) and the research routes in a ``[route]`` table
(:data:`ROUTE_KEYS`: how program mode decodes, each default measured in docs/quality.md).

Every value is checked before any model loads: the types (a bool is not a number, ``1.5`` is not
an integer), finite numbers, ranges, the names of engines, syntaxes, backends, devices, dtypes
and models. A bad value is a :class:`~copygram.errors.ConfigError` that names the key, the value
and what is allowed; an unknown key is one that lists the valid keys; a route key at the top
level is one that says to move it into ``[route]``. The checks run in ``__post_init__``, so a
config built in code is checked the same way as one read from a file. What only a loaded model
can tell (a model file missing, a GPU absent, the model's trained context) is the backend
adapter's to check (:func:`copygram.backends.load`).

This package reads no model and imports no inference stack (layer "config" in
docs/architecture.md: it may import core, language, constraints and the catalog).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from copygram.config.backend import (
    BACKENDS,
    DEVICES,
    DTYPES,
    BackendConfig,
    BackendName,
    BatchInvariance,
    Device,
    DType,
)
from copygram.config.checks import (
    LINE_VIEWS,
    MODES,
    ON_DAMAGE,
    PROMPT_ORDERS,
    SEARCH_SCOPES,
    check_choice,
    check_engine,
    check_flag,
    check_int,
    check_mode,
    check_number,
    check_on_damage,
    check_syntax,
    check_tie_tolerance,
    close_match,
)
from copygram.config.options import (
    AUTO_PROGRAM_TOKENS,
    AUTO_REWRITE_LANGUAGES,
    AUTO_REWRITE_TOKENS,
    FOCUS_TOKENS,
    SessionConfig,
    check_syntax_options,
    program_retry_unchanged,
    program_search_scope,
    program_syntax,
    program_touch_named,
    route_keys,
    session_keys,
)
from copygram.errors import ConfigError

__all__ = [
    "AUTO_PROGRAM_TOKENS",
    "AUTO_REWRITE_LANGUAGES",
    "AUTO_REWRITE_TOKENS",
    "BACKENDS",
    "BACKEND_KEYS",
    "CONFIG_KEYS",
    "DEVICES",
    "DTYPES",
    "FOCUS_TOKENS",
    "LINE_VIEWS",
    "MODES",
    "ON_DAMAGE",
    "PROMPT_ORDERS",
    "ROUTE_KEYS",
    "SEARCH_SCOPES",
    "SESSION_KEYS",
    "TOP_KEYS",
    "BackendConfig",
    "BackendName",
    "BatchInvariance",
    "Config",
    "DType",
    "Device",
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
    "command_config",
    "flat_keys",
    "parse_backend_config",
    "parse_config",
    "program_retry_unchanged",
    "program_search_scope",
    "program_syntax",
    "program_touch_named",
    "read_config",
    "route_arguments",
]

_C = TypeVar("_C", "SessionConfig", "BackendConfig")

SESSION_KEYS: Final = session_keys()
BACKEND_KEYS: Final = tuple(f.name for f in dataclasses.fields(BackendConfig))
CONFIG_KEYS: Final = SESSION_KEYS + BACKEND_KEYS
ROUTE_KEYS: Final = route_keys(SessionConfig) + route_keys(BackendConfig)
"""The keys of a config's ``[route]`` table: research routes, each measured (docs/config.md)."""
TOP_KEYS: Final = tuple(key for key in CONFIG_KEYS if key not in ROUTE_KEYS)
"""The keys a user sets, at a config's top level."""


@dataclass(frozen=True)
class Config:
    """Both halves of one config."""

    session: SessionConfig = dataclasses.field(default_factory=SessionConfig)
    backend: BackendConfig = dataclasses.field(default_factory=BackendConfig)

    def to_dict(self) -> dict[str, object]:
        """The mapping this config reads back from: the top-level keys and a ``route`` table,
        as set (``None`` values and defaults that follow other keys left out: TOML has no null,
        and a syntax's own scope follows the syntax); ``parse_config(c.to_dict()) == c``."""
        flat = {**self.session.given(), **dataclasses.asdict(self.backend)}
        top = {key: flat[key] for key in TOP_KEYS if flat.get(key) is not None}
        route = {key: flat[key] for key in ROUTE_KEYS if flat.get(key) is not None}
        return {**top, "route": route} if route else top


# ------------------------------------------------------------------------------------- reading


def read_config(source: Mapping[str, object] | str | os.PathLike[str]) -> dict[str, object]:
    """The mapping of a dict (copied) or of a TOML file (a ``str`` is a path), as written: the
    top-level keys, and the ``[route]`` table as the value of ``"route"``."""
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


def _check_keys(keys: Sequence[str], valid: Sequence[str], where: str = "") -> None:
    unknown = sorted(set(keys) - set(valid), key=str)
    if not unknown:
        return
    described = [f"{key!r}{close_match(str(key), valid)}" for key in unknown]
    raise ConfigError(
        f"unknown config key(s) {', '.join(described)}{where}; valid keys: {', '.join(valid)} "
        "(see docs/config.md)"
    )


def flat_keys(values: Mapping[str, object]) -> dict[str, object]:
    """A config as written (top-level keys and a ``route`` table) as one flat mapping of
    option names, its keys checked: a route key belongs in ``[route]``, a user key above it."""
    top = dict(values)
    route = top.pop("route", {})
    if not isinstance(route, Mapping):
        raise ConfigError(f"config key 'route' = {route!r} is not valid: it is the table of "
                          "route keys (a [route] section in TOML; a dict in code)")
    for key, value in top.items():
        if key in ROUTE_KEYS:
            toml = json.dumps(value) if isinstance(value, str | bool | int | float) else "..."
            raise ConfigError(
                f"config key {key!r} is a research route: write it in the config's [route] "
                f"table (the line [route], then {key} = {toml} under it; in a dict, "
                f"{{'route': {{{key!r}: {value!r}}}}}); docs/config.md, \"Route keys\"")
    _check_keys(list(top), [*TOP_KEYS, "route"])
    for key in route:
        if key in TOP_KEYS:
            raise ConfigError(f"config key {key!r} belongs at the top level of a config, above "
                              "[route] (in TOML, every line after [route] is in the table, which "
                              "holds the research routes only)")
    _check_keys(list(route), ROUTE_KEYS, " in [route]")
    return {**top, **route}


def _build(cls: type[_C], values: Mapping[str, object]) -> _C:
    # The dataclass checks every value in __post_init__; the type annotations are what it
    # produces, not what it accepts.
    return cls(**values)  # type: ignore[arg-type]


def parse_backend_config(source: Mapping[str, object]) -> BackendConfig:
    """A :class:`BackendConfig` from a mapping of backend keys only (flat, as the dataclass's
    keywords; a ``route`` table is read too)."""
    values = dict(source)
    route = values.pop("route", {})
    if not isinstance(route, Mapping):
        raise ConfigError(f"config key 'route' = {route!r} is not valid: it is the table of "
                          "route keys")
    values.update(route)
    _check_keys(list(values), BACKEND_KEYS)
    return _build(BackendConfig, values)


def parse_config(source: Mapping[str, object] | str | os.PathLike[str] | Config) -> Config:
    """Read (a dict, or a TOML file's path) and check a whole config, loading nothing; a
    :class:`Config` is returned as it is (already checked).

    Raises :class:`ConfigError` for a file that is missing or not TOML, an unknown key (the
    message lists the valid ones), a route key outside ``[route]`` or a bad value (it names the
    key, the value and what is allowed). Cost: microseconds for a dict, plus the file read for
    TOML."""
    if isinstance(source, Config):
        return source
    values = flat_keys(read_config(source))
    session = {k: v for k, v in values.items() if k in SESSION_KEYS}
    backend = {k: v for k, v in values.items() if k in BACKEND_KEYS}
    # The backend first: a wrong backend or model is the likelier mistake and changes the most.
    backend_config = _build(BackendConfig, backend)
    return Config(session=_build(SessionConfig, session), backend=backend_config)


def command_config(path: str | os.PathLike[str] | None, *, model: str | None = None,
                   mode: str | None = None) -> Config:
    """A command's configuration, parsed and checked once: the TOML file at ``path`` (``None``:
    the defaults) with the command line's ``--model`` (a catalog name or a .gguf path) and
    ``--mode`` in place of the file's. Where neither names a model, the commands edit with the
    catalog's best editor for this machine (:func:`~copygram.catalog.default_editor`: fetched
    on first use), not the library's tiny default. Raises :class:`ConfigError` as
    :func:`parse_config` does, and for a ``path`` that is not a file, naming the flag."""
    from copygram.catalog import default_editor

    if path is not None and not Path(path).is_file():
        raise ConfigError(f"--config {path}: no such file")
    values = read_config(path) if path is not None else {}
    if model is not None:
        values["model"] = model
    elif "model" not in values:
        values["model"] = default_editor()[0]
    if mode is not None:
        values["mode"] = mode
    return parse_config(values)


def route_arguments(specs: Sequence[str]) -> dict[str, object]:
    """``--route KEY=VALUE`` arguments as a [route] table: each value read as a TOML value, a bare
    word as a string (the keys are checked where the config is parsed)."""
    table: dict[str, object] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--route takes KEY=VALUE, got {spec!r}")
        try:
            table[key.strip()] = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            table[key.strip()] = value.strip()
    return table
