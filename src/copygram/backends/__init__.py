"""Inference backends. Each adapter module imports its own stack; this package imports none."""

from __future__ import annotations

from copygram.backends.base import Backend, Logits

__all__ = ["Backend", "Logits"]
