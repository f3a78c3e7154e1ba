"""Shared test configuration: Hypothesis profiles and auto-skips for optional stacks."""

from __future__ import annotations

import importlib.util
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

_MARKER_NEEDS = {
    "llamacpp": ("llama_cpp",),
    "transformers": ("torch", "transformers"),
    "outlines": ("outlines_core",),
    "serve": ("starlette", "uvicorn", "openai"),
}
_EXTRAS = {"serve": "serve,dev"}  # the marker's modules come from more than one extra


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _have_cuda() -> bool:
    if not _have("torch"):
        return False
    import torch

    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for marker, modules in _MARKER_NEEDS.items():
            if marker in item.keywords:
                missing = [m for m in modules if not _have(m)]
                if missing:
                    item.add_marker(pytest.mark.skip(
                        reason=f"needs {', '.join(missing)}: "
                               f"pip install 'copygram[{_EXTRAS.get(marker, marker)}]'"))
        if "cuda" in item.keywords and not _have_cuda():
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))
