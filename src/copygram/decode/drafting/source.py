"""What the decode loop asks of a draft source: :class:`~copygram.decode.drafting.Drafter` for
copy tags, :class:`~copygram.decode.drafting.blocks.BlockDrafter` for blocks,
:class:`~copygram.decode.drafting.prediction.PredictionDrafter` for plain text (a rewrite's
document, a chat completion's prediction), or a test's own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from copygram.decode.drafting.drafter import Draft

__all__ = ["DraftSource"]


class DraftSource(Protocol):
    """Where drafts come from, in every mode."""

    def propose(self, context: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing the output; ``context`` is every token after the prompt (the
        output's, and in program mode the copies spliced), the ``feed`` tokens the verifying
        forward appends before the draft included. It only grows between calls, but where the
        loop takes tokens back (a :class:`~copygram.decode.events.RetractEvent`)."""
        ...

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        """Whether to splice the copy ``draft`` closes in the forward that verifies it."""
        ...

    def feedback(self, draft: Draft, accepted: int) -> None:
        """How many of ``draft``'s tokens the output took."""
        ...
