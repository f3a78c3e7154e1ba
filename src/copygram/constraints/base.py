"""The :class:`Constraint` protocol: a cheap stateful matcher over one edit's program tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from copygram.types import LineRange

Mask = npt.NDArray[np.bool_]
"""Allowed-token mask, shape ``(vocab_size,)``."""


@runtime_checkable
class Constraint(Protocol):
    """Which tokens may come next in an edit program for one document.

    Built by :func:`copygram.compile_constraint` from a compiled grammar that is shared and
    immutable; the constraint itself is per edit and cheap (~microseconds to create).
    Every program it lets through parses and resolves against its document, and it never
    dead-ends: until :attr:`finished`, at least one token is allowed.
    """

    @property
    def vocab_size(self) -> int: ...

    @property
    def eos_token_id(self) -> int: ...

    @property
    def n_lines(self) -> int:
        """Lines of the document the constraint was compiled for."""
        ...

    @property
    def done(self) -> bool:
        """A complete program may end here: EOS is allowed (and only EOS ends it)."""
        ...

    @property
    def finished(self) -> bool:
        """EOS has been consumed; nothing more is allowed."""
        ...

    @property
    def n_consumed(self) -> int:
        """Tokens consumed so far, EOS included; the most :meth:`rollback` can undo."""
        ...

    @property
    def program_bytes(self) -> bytes:
        """The program text consumed so far, as bytes (EOS adds nothing)."""
        ...

    @property
    def program_text(self) -> str:
        """:attr:`program_bytes` decoded; a token split inside a character shows as U+FFFD."""
        ...

    def allowed(self) -> Mask:
        """A new bool array: ``True`` for each token that may come next."""
        ...

    def fill_allowed(self, out: Mask) -> None:
        """Write :meth:`allowed` into ``out`` (bool, shape ``(vocab_size,)``) without allocating."""
        ...

    def consume(self, token_id: int) -> LineRange | None:
        """Append one token; returns the copy range it CLOSED (else ``None``).

        A token may close at most one copy, and then the tag ends exactly at the token's last
        byte, so the caller can splice the copied lines right after this token. Raises
        :class:`~copygram.errors.ConstraintError` for a disallowed token, leaving the state as
        it was.
        """
        ...

    def consume_many(self, token_ids: Sequence[int]) -> list[LineRange | None]:
        """Append tokens in order; one entry per token as :meth:`consume` returns it.

        All or nothing: on a disallowed token, raises ConstraintError and undoes the ones before.
        """
        ...

    def rollback(self, n_tokens: int) -> None:
        """Undo the last ``n_tokens`` consumed tokens (EOS included)."""
        ...

    def forced(self) -> list[int]:
        """Tokens the grammar forces next, in order (may be empty); does not consume them.

        The grammar's fast-forward tokens or, when there are none, the single token the mask
        allows (if it allows one only); call again after consuming them for more. Consuming them
        all is always allowed. ``[]`` once the program may end or has finished.
        """
        ...
