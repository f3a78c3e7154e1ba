"""What a request's work yields (:mod:`copygram.serve.engine`), in order: :class:`Started` once,
then :class:`Delta` s of output text or :class:`Progress` events, then one :class:`Finished`;
the endpoints (:mod:`copygram.serve.app`) render them as responses or server-sent events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from copygram.serve.schemas import JSONObject

if TYPE_CHECKING:
    from copygram.decode.events import PrefillEvent


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    accepted_prediction_tokens: int = 0
    rejected_prediction_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose KV cache an earlier request left

    def as_dict(self) -> JSONObject:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            "completion_tokens_details": {
                "accepted_prediction_tokens": self.accepted_prediction_tokens,
                "rejected_prediction_tokens": self.rejected_prediction_tokens,
                "reasoning_tokens": 0,
            },
        }


@dataclass(frozen=True)
class Started:
    """The request fits and the model has computed the first batch of its prompt."""


@dataclass(frozen=True)
class Delta:
    """Output text, in order (never a broken UTF-8 sequence)."""

    text: str


@dataclass(frozen=True)
class Progress:
    """An event of a streamed response: a ``/v1/edits`` event (``{"type": "token" | "copy",
    ...}``), or how far a prompt is read (``"prefill"``: :func:`prefill_progress`), which an
    OpenAI-shaped stream sends as a comment line."""

    event: JSONObject


def computed(event: object) -> bool:
    """Whether the model has computed anything by ``event``: every event but a prefill's first,
    which comes before its first batch. A request is :class:`Started` on the first that has, so
    that a backend that fails on its first batch is still answered with its status code."""
    from copygram.decode.events import PrefillEvent

    return not isinstance(event, PrefillEvent) or event.done > event.cached


def prefill_progress(event: PrefillEvent) -> Progress:
    """A streamed edit's ``{"type": "prefill", "done", "total", "cached"}``: ``done`` of the
    prompt's ``total`` tokens are in the cache, ``cached`` of them found there (a long document's
    prompt is minutes on a CPU; the stream says it is alive)."""
    return Progress({"type": "prefill", "done": event.done, "total": event.total,
                     "cached": event.cached})


@dataclass(frozen=True)
class Finished:
    text: str | None  # None: a program-mode edit cut by max_tokens (no complete program)
    usage: Usage
    finish_reason: str = "stop"  # or "length": max_tokens (or the context) reached
    program: str | None = None
    stats: JSONObject = field(default_factory=dict)
    mode: str | None = None  # an edit's: the mode that wrote its text ("program", "rewrite")


Item = Started | Delta | Progress | Finished


__all__ = ["Delta", "Finished", "Item", "Progress", "Started", "Usage", "computed",
           "prefill_progress"]
