"""copygram: fast, exact LLM editing by Copy-as-Decode.

``import copygram`` is cheap: it imports no inference stack (torch, llama_cpp, transformers).
Those load when a backend is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from copygram.errors import (
    BackendError,
    ConfigError,
    ConstraintError,
    CopygramError,
    DamagedEditError,
    DocumentError,
    GenerationError,
    LengthError,
    MissingDependencyError,
    ProgramSyntaxError,
    RangeError,
    RunawayError,
)
from copygram.language import (
    Copy,
    Gen,
    LineRange,
    Op,
    Program,
    TokenId,
    oracle,
    parse,
    render,
    resolve,
    split_lines,
)

if TYPE_CHECKING:
    from copygram.backends import Backend, load
    from copygram.config import Config, SessionConfig, parse_config
    from copygram.constraints import Constraint, compile_constraint
    from copygram.decode.drafting import DraftConfig
    from copygram.decode.events import (
        Completion,
        CompletionEvent,
        CopyEvent,
        DoneEvent,
        EditResult,
        Event,
        PrefillEvent,
        RedoEvent,
        RetractEvent,
        SpanEvent,
        StopReason,
        TokenEvent,
    )
    from copygram.decode.sampling import Sampling
    from copygram.language.damage import Damage, find_damage
    from copygram.session import EditSession


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("copygram")
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        return "0+unknown"


__version__ = _version()

_LAZY = {
    "EditSession": "copygram.session",
    **dict.fromkeys(("EditResult", "Event", "CopyEvent", "DoneEvent", "PrefillEvent",
                     "RedoEvent", "RetractEvent", "Completion", "CompletionEvent", "SpanEvent",
                     "StopReason", "TokenEvent"), "copygram.decode.events"),
    "Sampling": "copygram.decode.sampling",
    "DraftConfig": "copygram.decode.drafting",
    **dict.fromkeys(("SessionConfig", "Config", "parse_config"), "copygram.config"),
    **dict.fromkeys(("Backend", "load"), "copygram.backends"),
    "Damage": "copygram.language.damage",
    "find_damage": "copygram.language.damage",
    "compile_constraint": "copygram.constraints",
    "Constraint": "copygram.constraints",
}


def __getattr__(name: str) -> Any:
    # The session and constraint modules pull numpy and llguidance; load them on first use.
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'copygram' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)


__all__ = [
    "Backend",
    "BackendError",
    "Completion",
    "CompletionEvent",
    "Config",
    "ConfigError",
    "Constraint",
    "ConstraintError",
    "Copy",
    "CopyEvent",
    "CopygramError",
    "Damage",
    "DamagedEditError",
    "DocumentError",
    "DoneEvent",
    "DraftConfig",
    "EditResult",
    "EditSession",
    "Event",
    "Gen",
    "GenerationError",
    "LengthError",
    "LineRange",
    "MissingDependencyError",
    "Op",
    "PrefillEvent",
    "Program",
    "ProgramSyntaxError",
    "RangeError",
    "RedoEvent",
    "RetractEvent",
    "RunawayError",
    "Sampling",
    "SessionConfig",
    "SpanEvent",
    "StopReason",
    "TokenEvent",
    "TokenId",
    "compile_constraint",
    "find_damage",
    "load",
    "oracle",
    "parse",
    "parse_config",
    "render",
    "resolve",
    "split_lines",
]
