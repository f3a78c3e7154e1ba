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
    from copygram.constraints import Constraint, compile_constraint
    from copygram.decode.events import CopyEvent, DoneEvent, EditResult, GenTokenEvent, RedoEvent
    from copygram.language.damage import Damage, find_damage
    from copygram.session import EditSession

__version__ = "0.1.0"

_LAZY = {
    "EditSession": "copygram.session",
    "EditResult": "copygram.decode.events",
    "GenTokenEvent": "copygram.decode.events",
    "CopyEvent": "copygram.decode.events",
    "DoneEvent": "copygram.decode.events",
    "RedoEvent": "copygram.decode.events",
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
    "BackendError",
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
    "EditResult",
    "EditSession",
    "Gen",
    "GenTokenEvent",
    "GenerationError",
    "LengthError",
    "LineRange",
    "MissingDependencyError",
    "Op",
    "Program",
    "ProgramSyntaxError",
    "RangeError",
    "RedoEvent",
    "TokenId",
    "compile_constraint",
    "find_damage",
    "oracle",
    "parse",
    "render",
    "resolve",
    "split_lines",
]
