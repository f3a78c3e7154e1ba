"""The body of OpenAI's legacy ``POST /v1/completions``: one prompt string, continued as it is.
Every key it shares with chat completions is checked as there (:func:`parse_chat`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Final

from copygram.serve.schemas import Generation, JSONObject, invalid, parse_chat, unsupported

LEGACY_MAX_TOKENS: Final = 16
"""OpenAI's default ``max_tokens`` for ``/v1/completions`` (a chat completion's is unbounded)."""


@dataclass(frozen=True)
class CompletionRequest:
    """A checked ``POST /v1/completions`` body (OpenAI's legacy completions: one prompt string,
    continued as it is)."""

    model: str
    prompt: str
    stream: bool = False
    include_usage: bool = False
    generation: Generation = field(
        default_factory=lambda: Generation(max_tokens=LEGACY_MAX_TOKENS))
    stop: tuple[str, ...] = ()
    prediction: str | None = None


# Accepted only at the value that means "off", beside the chat ones.
_COMPLETION_OFF: Final[dict[str, tuple[object, ...]]] = {
    "echo": (False,), "best_of": (1,), "suffix": ("",), "logprobs": (0, False),
}


def parse_completion(body: JSONObject) -> CompletionRequest:
    """A :class:`CompletionRequest` from a parsed body, or the :class:`ApiError` of its first
    fault. ``prompt``: a string, or an array holding one string."""
    for key, off in _COMPLETION_OFF.items():
        if body.get(key) is not None and body[key] not in off:
            raise unsupported(key, f" (only {off[0]!r})")
    if "messages" in body:
        raise invalid("messages", "'messages' belongs to /v1/chat/completions; "
                      "/v1/completions takes a 'prompt' string", code="unknown_parameter")
    raw = body.get("prompt")
    if isinstance(raw, list) and len(raw) == 1:
        raw = raw[0]
    if not isinstance(raw, str):
        raise invalid("prompt", "'prompt' must be a string (or an array of one string; token "
                      "ids and batches of prompts are not supported)",
                      code="missing_required_parameter" if raw is None else "invalid_type")
    # Every other key is a chat completion's, checked as there.
    chat = parse_chat({**{k: v for k, v in body.items() if k not in ("prompt", *_COMPLETION_OFF)},
                       "messages": [{"role": "user", "content": "-"}]})
    generation = chat.generation
    if generation.max_tokens is None:
        generation = dataclasses.replace(generation, max_tokens=LEGACY_MAX_TOKENS)
    return CompletionRequest(model=chat.model, prompt=raw, stream=chat.stream,
                             include_usage=chat.include_usage, generation=generation,
                             stop=chat.stop, prediction=chat.prediction)


__all__ = ["LEGACY_MAX_TOKENS", "CompletionRequest", "parse_completion"]
