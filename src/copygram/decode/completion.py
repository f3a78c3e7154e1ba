"""What plain-text generation (:mod:`copygram.decode.plain_text`) reports: a token the model chose,
a drafted span it accepted, and the finished :class:`Completion`.

Every event carries ``text``, the output text it makes final: concatenating the ``text`` of every
event of one run, the done event's included, gives exactly ``Completion.text``. Text is held back
while it could still become a stop string (it is cut there) or while a token ends inside a UTF-8
character, and released by a later event, at the latest by the done event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from copygram.decode.stats import RunStats

StopReason = Literal["eos", "stop", "max_tokens", "context"]
"""Why a completion ended: an end-of-generation token (EOS or end of turn), a stop string, the
``max_tokens`` budget, or a full context."""


@dataclass(frozen=True)
class TokenEvent:
    """The model chose ``token_id`` itself, not taken from a draft: decoded in a step of its own,
    or read from the row after a draft's accepted tokens (the bonus token)."""

    token_id: int
    text: str


@dataclass(frozen=True)
class SpanEvent:
    """Drafted tokens the model accepted: ``token_ids`` came from the draft (the prediction) and
    were verified in the one forward that appended them. ``source`` names the draft source
    (``"line"``: aligned with a prediction line; ``"rejoin"``: the same after a line the
    prediction did not hold; ``"resync"``: the rest of a changed line; ``"lookup"``, ``"echo"``,
    ``"prompt"``: n-gram lookup in the prediction, the output, the prompt)."""

    token_ids: tuple[int, ...]
    text: str
    source: str = ""


@dataclass(frozen=True)
class Completion:
    """A finished generation.

    ``text``: the output, cut before the first stop string. ``raw``: every generated token's text
    (the stop string and anything after it in the same token included; no EOS). ``token_ids``:
    the generated tokens (no EOS). ``stop_reason``: see :data:`StopReason`; ``finish_reason`` is
    OpenAI's name for it. ``stats``: forwards, decoded and accepted/rejected prediction tokens,
    times (:class:`~copygram.decode.stats.RunStats`)."""

    text: str
    raw: str
    token_ids: tuple[int, ...]
    stop_reason: StopReason
    stats: RunStats

    @property
    def finish_reason(self) -> Literal["stop", "length"]:
        """``"stop"`` (an end-of-generation token or a stop string) or ``"length"``."""
        return "stop" if self.stop_reason in ("eos", "stop") else "length"

    @property
    def prompt_tokens(self) -> int:
        return self.stats.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def accepted_prediction_tokens(self) -> int:
        """Prediction tokens the output took (OpenAI Predicted Outputs' name)."""
        return self.stats.drafted_tokens

    @property
    def rejected_prediction_tokens(self) -> int:
        """Prediction tokens computed in a verifying forward and not taken."""
        return self.stats.rejected_tokens


@dataclass(frozen=True)
class CompletionDoneEvent:
    """The last event: the :class:`Completion`, and ``text``, the output text no earlier event
    released (a possible stop-string prefix held back until the end)."""

    result: Completion
    text: str = ""


CompletionEvent = TokenEvent | SpanEvent | CompletionDoneEvent


__all__ = ["Completion", "CompletionDoneEvent", "CompletionEvent", "SpanEvent", "StopReason",
           "TokenEvent"]
