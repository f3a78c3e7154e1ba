"""The :class:`Constraint` protocol (a cheap stateful matcher over one edit's program tokens) and
:class:`GuardedConstraint`, the state every engine's constraint shares: guards, text, EOS."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from copygram.constraints.guard import INITIAL, GuardSets, State, Tracker
from copygram.constraints.vocab import Mask, Vocab
from copygram.errors import ConstraintError
from copygram.language.types import LineRange


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


class Vocabulary(Protocol):
    """What :class:`ProgramState` reads of a vocabulary (a :class:`Vocab` has it)."""

    @property
    def token_bytes(self) -> Sequence[bytes]: ...

    @property
    def eos_token_id(self) -> int: ...

    @property
    def vocab_size(self) -> int: ...


class ProgramState:
    """What every :class:`Constraint` keeps besides its grammar: the vocabulary, the program's
    bytes and tokens consumed so far, and whether EOS ended it. Subclasses consume tokens
    (:meth:`_append`), roll them back (:meth:`_drop`) and write masks (:meth:`fill_allowed`)."""

    def __init__(self, vocab: Vocabulary) -> None:
        self._vocab = vocab
        self._tokens = vocab.token_bytes
        self._text = bytearray()
        self._lengths: list[int] = []
        self._finished = False
        # The decode loop reads the text several times a step; copy and decode it once per
        # change (a copy per token is O(program) each: ~1 ms for 20 kB, far below the step).
        self._decoded: str | None = ""
        self._bytes: bytes | None = b""

    @property
    def vocab_size(self) -> int:
        return self._vocab.vocab_size

    @property
    def eos_token_id(self) -> int:
        return self._vocab.eos_token_id

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def n_consumed(self) -> int:
        return len(self._lengths) + self._finished

    @property
    def program_bytes(self) -> bytes:
        if self._bytes is None:
            self._bytes = bytes(self._text)
        return self._bytes

    @property
    def program_text(self) -> str:
        if self._decoded is None:
            self._decoded = self._text.decode("utf-8", errors="replace")
        return self._decoded

    def fill_allowed(self, out: Mask) -> None:
        raise NotImplementedError

    def consume(self, token_id: int) -> LineRange | None:
        raise NotImplementedError

    def rollback(self, n_tokens: int) -> None:
        raise NotImplementedError

    def allowed(self) -> Mask:
        out = np.empty(self._vocab.vocab_size, dtype=np.bool_)
        self.fill_allowed(out)
        return out

    def consume_many(self, token_ids: Sequence[int]) -> list[LineRange | None]:
        closed: list[LineRange | None] = []
        try:
            for token_id in token_ids:
                closed.append(self.consume(token_id))
        except ConstraintError:
            self.rollback(len(closed))
            raise
        return closed

    def _check_mask(self, out: Mask) -> None:
        if out.shape != (self._vocab.vocab_size,) or out.dtype != np.bool_:
            raise ConstraintError(
                f"fill_allowed needs a bool array of shape ({self._vocab.vocab_size},)"
            )

    def _check_consumable(self, token_id: int) -> None:
        """Raise for a token after EOS, or one that is special or unknown (EOS is the caller's)."""
        if self._finished:
            raise ConstraintError("the program is finished (EOS consumed); roll back first")
        if not 0 <= token_id < len(self._tokens) or not self._tokens[token_id]:
            raise ConstraintError(f"token {token_id} is special or unknown; not allowed here")

    def _append(self, token_id: int) -> None:
        data = self._tokens[token_id]
        self._text += data
        self._decoded = self._bytes = None
        self._lengths.append(len(data))

    def _check_rollback(self, n_tokens: int) -> int:
        """Check ``n_tokens`` and undo EOS if it is among them; the real tokens left to undo."""
        if not 0 <= n_tokens <= self.n_consumed:
            raise ConstraintError(
                f"cannot roll back {n_tokens} tokens: {self.n_consumed} were consumed"
            )
        if n_tokens and self._finished:
            self._finished = False
            n_tokens -= 1
        return n_tokens

    def _drop(self, n_tokens: int) -> None:
        """Take the last ``n_tokens`` (not EOS) out of the text."""
        drop = sum(self._lengths[len(self._lengths) - n_tokens:])
        del self._lengths[len(self._lengths) - n_tokens:]
        del self._text[len(self._text) - drop :]
        self._decoded = self._bytes = None


class GuardedConstraint(ProgramState, ABC):
    """Shared state of a :class:`~copygram.constraints.base.Constraint`: guards, text, EOS.

    Engines supply the base grammar: a mask, a try-advance, a rollback and acceptance.
    """

    def __init__(self, vocab: Vocab, tracker: Tracker, sets: GuardSets) -> None:
        super().__init__(vocab)
        self._tracker = tracker
        self._sets = sets
        self._states: list[State] = [INITIAL]

    # -- engine hooks -------------------------------------------------------------------------
    @abstractmethod
    def _fill_base(self, out: Mask) -> None:
        """Write the base grammar's mask (EOS bit irrelevant) into ``out``."""

    @abstractmethod
    def _try_advance(self, token_id: int) -> bool:
        """Advance the base grammar by one token; False (state unchanged) if it rejects it."""

    @abstractmethod
    def _rollback_base(self, n_tokens: int) -> None: ...

    @abstractmethod
    def _accepting(self) -> bool: ...

    @abstractmethod
    def _forced_candidates(self) -> list[int]:
        """Tokens the base grammar forces next (before the guards check them)."""

    # -- Constraint API -----------------------------------------------------------------------
    @property
    def n_lines(self) -> int:
        return self._tracker.n_lines

    @property
    def done(self) -> bool:
        return (not self._finished and self._tracker.may_end(self._states[-1])
                and self._accepting())

    def fill_allowed(self, out: Mask) -> None:
        self._check_mask(out)
        if self._finished:
            out[:] = False
            return
        self._fill_base(out)
        out[self._vocab.eos_token_id] = self.done
        state = self._states[-1]
        risky = self._sets.by_phase[state[0]]
        if risky.size:
            advance, tokens = self._tracker.advance, self._tokens
            for token_id in risky[out[risky]].tolist():
                if advance(state, tokens[token_id]) is None:
                    out[token_id] = False

    def consume(self, token_id: int) -> LineRange | None:
        if token_id == self._vocab.eos_token_id and not self._finished:
            if not self.done:
                raise ConstraintError(
                    f"EOS is not allowed here: the program is incomplete ({self._tail()})"
                )
            self._finished = True
            return None
        self._check_consumable(token_id)
        data = self._tokens[token_id]
        result = self._tracker.advance(self._states[-1], data)
        if result is None:
            raise ConstraintError(
                f"token {token_id} {data!r} is not allowed after {self._tail()} "
                f"(copy ranges need 1 <= start <= end <= {self.n_lines}, and a copy tag must "
                "end at a token boundary)"
            )
        if not self._try_advance(token_id):
            raise ConstraintError(
                f"token {token_id} {data!r} is not allowed after {self._tail()}: not in the "
                "edit-program grammar"
            )
        state, closed = result
        self._states.append(state)
        self._append(token_id)
        return closed

    def rollback(self, n_tokens: int) -> None:
        n_tokens = self._check_rollback(n_tokens)
        if not n_tokens:
            return
        self._rollback_base(n_tokens)
        del self._states[-n_tokens:]
        self._drop(n_tokens)

    def forced(self) -> list[int]:
        if self._finished or self.done:
            return []
        forced: list[int] = []
        state = self._states[-1]
        for token_id in self._forced_candidates():
            result = self._tracker.advance(state, self._tokens[token_id])
            if result is None:
                break
            state = result[0]
            forced.append(token_id)
        if not forced:
            # Engines hold back bytes whose tokenization the next bytes could change (``"/>``
            # after an end line, lest ``"/><`` follow), but the tag-end guard rules such tokens
            # out, so the longest allowed token spelling the forced bytes is the canonical one.
            # Forcing it lets the close share the forward that splices the copy.
            rest = self._tracker.forced_bytes(state)
            if rest:
                mask = self.allowed()
                for size in range(len(rest), 0, -1):
                    piece = self._sets.literal_tokens.get(rest[:size])
                    if piece is not None and mask[piece]:
                        forced.append(piece)
                        break
        return forced

    def _tail(self) -> str:
        text = self.program_text
        return repr(text[-40:]) if text else "the start"
