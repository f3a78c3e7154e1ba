"""What every decode run needs from a session: :class:`EditSetup`, the backend, the vocabulary's
bytes, the prompt builder and the options whole (a :class:`~copygram.config.SessionConfig`).
The loops read the options from it; nothing here is decided per edit."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from copygram.config import SessionConfig
from copygram.decode.drafting import DraftConfig
from copygram.decode.prompt import PromptBuilder
from copygram.decode.sampling import Sampling

if TYPE_CHECKING:
    from copygram.backends.base import Backend

__all__ = ["EditSetup", "draft_config", "sampling"]


def draft_config(options: SessionConfig) -> DraftConfig:
    """The drafts ``options`` ask for: ``draft_tokens`` (``None``: the mode's default, 16 tokens
    in program mode and 64 in rewrite mode: :meth:`DraftConfig.for_mode`), ``draft_ngram`` and
    ``draft_adaptive``."""
    default = DraftConfig.for_mode(options.mode)
    return DraftConfig(max_tokens=(default.max_tokens if options.draft_tokens is None
                                   else options.draft_tokens),
                       max_ngram=options.draft_ngram, adaptive=options.draft_adaptive)


def sampling(options: SessionConfig) -> Sampling:
    """The sampling ``options`` ask for (``temperature`` 0 is greedy)."""
    return Sampling(temperature=options.temperature, top_p=options.top_p, seed=options.seed)


@dataclass(frozen=True)
class EditSetup:
    """What a decode run needs from a session, for every edit."""

    backend: Backend
    token_bytes: Sequence[bytes]
    prompt_builder: PromptBuilder
    options: SessionConfig = field(default_factory=SessionConfig)

    @functools.cached_property
    def draft(self) -> DraftConfig:
        """The drafts of this setup's mode (:func:`draft_config`)."""
        return draft_config(self.options)

    @property
    def heads(self) -> bool:
        """Search/replace blocks name a unit by its first line (``search_scope = "head"``)."""
        return self.options.search_scope == "head"
