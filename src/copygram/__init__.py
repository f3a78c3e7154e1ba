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
    DocumentError,
    GenerationError,
    MissingDependencyError,
    ProgramSyntaxError,
    RangeError,
)
from copygram.lines import split_lines
from copygram.oracle import oracle
from copygram.program import Copy, Gen, Op, Program
from copygram.resolve import resolve
from copygram.syntaxes import parse
from copygram.types import LineRange, TokenId

if TYPE_CHECKING:
    from copygram.constraints import Constraint, compile_constraint
    from copygram.session import EditResult, EditSession

__version__ = "0.1.0"

_LAZY = {
    "EditSession": "copygram.session",
    "EditResult": "copygram.session",
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
    "CopygramError",
    "DocumentError",
    "EditResult",
    "EditSession",
    "Gen",
    "GenerationError",
    "LineRange",
    "MissingDependencyError",
    "Op",
    "Program",
    "ProgramSyntaxError",
    "RangeError",
    "TokenId",
    "compile_constraint",
    "oracle",
    "parse",
    "resolve",
    "split_lines",
]
