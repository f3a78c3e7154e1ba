"""What the decode loop asks of a draft source (:class:`~copygram.decode.drafting.Drafter` for
copy tags, :class:`~copygram.decode.drafting.blocks.BlockDrafter` for blocks, or a test's own)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from copygram.decode.drafting.drafter import Draft

__all__ = ["DraftSource"]


class DraftSource(Protocol):
    """Where drafts come from (:class:`~copygram.decode.drafting.Drafter`, or a mode's own)."""

    def propose(self, program: str, context: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing ``program``; ``context`` is every token after the prompt, the
        ``feed`` tokens the verifying forward appends before the draft included."""
        ...

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        """Whether to splice the copy ``draft`` closes in the forward that verifies it."""
        ...

    def feedback(self, draft: Draft, accepted: int) -> None: ...
