"""The real models the exactness tests run on (a second tokenizer included), loaded only when
they are on this machine: a test never downloads a model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from copygram.backends.base import Backend
from copygram.catalog import get_entry, model_status
from copygram.errors import BackendError

MODELS = [
    pytest.param(("llamacpp", "smollm2-135m"), marks=pytest.mark.llamacpp, id="llamacpp-smollm2"),
    pytest.param(("llamacpp", "qwen2.5-coder-0.5b"), marks=pytest.mark.llamacpp,
                 id="llamacpp-qwen0.5b"),
    pytest.param(("transformers", "smollm2-135m"), marks=pytest.mark.transformers,
                 id="transformers-smollm2"),
]
"""``(backend, catalog name)`` parameters for a module-scoped fixture."""


def real_backend(param: tuple[str, str], n_ctx: int) -> Iterator[Backend]:
    """Load ``param``'s model (skip the test when it is absent), yield it, close it."""
    from copygram.backends import load

    kind, model = param
    if not model_status(get_entry(model)).present:
        pytest.skip(f"{model} is not on this machine (copygram models fetch {model})")
    try:
        backend = load({"backend": kind, "model": model, "n_ctx": n_ctx})
    except BackendError as exc:
        pytest.skip(str(exc))
    yield backend
    close = getattr(backend, "close", None)
    if close is not None:
        close()
