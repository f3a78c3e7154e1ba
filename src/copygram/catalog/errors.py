"""The catalog's errors: all :class:`~copygram.errors.BackendError`, so a caller that handles
backend failures handles these too."""

from __future__ import annotations

from pathlib import Path

from copygram.errors import BackendError

__all__ = ["ModelFetchError", "ModelIntegrityError", "ModelNotFoundError"]


class ModelNotFoundError(BackendError):
    """A model file, or the package that should carry it, is not on this machine."""


class ModelFetchError(BackendError):
    """Downloading a model's parts failed; the message says how to get the model by hand."""


class ModelIntegrityError(BackendError):
    """A model file whose size or sha256 is not the pinned one; nothing is left under its name.

    ``actual_sha256`` is None when the size was wrong before the hash could be computed.
    """

    def __init__(self, message: str, *, path: Path, expected_size: int, actual_size: int,
                 expected_sha256: str, actual_sha256: str | None) -> None:
        super().__init__(message)
        self.path = path
        self.expected_size = expected_size
        self.actual_size = actual_size
        self.expected_sha256 = expected_sha256
        self.actual_sha256 = actual_sha256
