"""Plain-text generation with verified drafts: rewrite mode and chat completions, on the one loop.

No grammar: the model writes text, token by token, as plain decoding would. It is the decode
loop (:func:`copygram.decode.loop.run`) with an all-allowing constraint
(:class:`~copygram.constraints.free.FreeText`), no copies, no repeat guard, stop strings, and a
budget that ends it (stop reason ``"max_tokens"``) rather than failing it. A draft source (a
:class:`~copygram.decode.drafting.prediction.PredictionDrafter` over the text the caller expects:
the document being rewritten, or a ``prediction`` as in OpenAI's Predicted Outputs) guesses the
next tokens; the guess is appended in the same forward as the token just chosen, the longest
prefix the policy would have chosen anyway is kept, plus the policy's own next token from the
row after it (the bonus token), and the rest is cut from the cache. Under greedy decoding the
output is token-identical to a plain step-by-step greedy decode of the same prompt through the
same backend; sampled, each drafted token is accepted with its probability ``p(x)`` and
otherwise replaced by a draw from ``p`` without ``x`` (speculative sampling for a deterministic
draft), so the output is distributed as the model's.

Cost: one forward per accepted draft (however long) or per token decoded alone, each costing
what the backend's ``BatchProfile`` says for its size, plus one forward per near-tie.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, cast

from copygram.constraints.free import FreeText
from copygram.decode.budgets import Budget
from copygram.decode.drafting import DraftSource
from copygram.decode.drafting.prediction import PredictionDrafter
from copygram.decode.events import (
    Completion,
    CompletionEvent,
    DoneEvent,
    PrefillEvent,
    SpanEvent,
    TokenEvent,
)
from copygram.decode.loop import Job, Output, run
from copygram.decode.policies import Policy
from copygram.decode.setup import EditSetup
from copygram.errors import DocumentError

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.decode.text import LineEnd


def plain_job(setup: EditSetup, max_tokens: int, source: DraftSource | None = None,
              stop: Sequence[str] = (), ends: Callable[[], LineEnd] | None = None) -> Job:
    """The loop's job for plain text: at most ``max_tokens`` tokens, drafted by ``source``,
    cut at the first ``stop`` string, ended after the line ``ends``' rule ends it on."""
    backend = setup.backend
    constraint = FreeText(backend.vocab_size, setup.token_bytes,
                          min(backend.eos_token_ids, default=-1))
    return Job(constraint, Budget(max_tokens, "max_new_tokens"), drafter=source, stop=stop,
               ends=ends, guard_repeats=False)


def generate(setup: EditSetup, prompt: list[int], policy: Policy, *, max_tokens: int,
             source: DraftSource | None = None, stop: Sequence[str] = (),
             ends: Callable[[], LineEnd] | None = None) -> Iterator[CompletionEvent]:
    """Generate after ``prompt`` until an end-of-generation token, a stop string, the line an
    end rule (made by ``ends``) ends on (stop reason ``"stop"``), ``max_tokens`` generated
    tokens or a full context; drafts from ``source`` are verified as they go. Yields
    :class:`PrefillEvent` s while the prompt is read, a :class:`TokenEvent` per token chosen
    alone, a :class:`SpanEvent` per accepted draft and last a :class:`DoneEvent` with the
    :class:`Completion`."""
    events = cast("Generator[PrefillEvent | TokenEvent | SpanEvent, None, Output]",
                  run(setup, prompt, policy, plain_job(setup, max_tokens, source, stop, ends)))
    output = yield from events
    output.stats.output_tokens = len(output.token_ids)
    yield DoneEvent(Completion(text=output.text, raw=output.raw, token_ids=output.token_ids,
                               stop_reason=output.stop_reason, stats=output.stats), output.tail)


def check_prompt_fits(backend: Backend, prompt_tokens: int, what: str = "the prompt") -> None:
    """A :class:`DocumentError` unless ``prompt_tokens`` leave room for one generated token."""
    over = prompt_tokens + 1 - backend.context_length
    if over > 0:
        raise DocumentError(
            f"{what} does not fit the model's context by {over} token{'s' if over > 1 else ''}: "
            f"it takes {prompt_tokens} tokens, and n_ctx={backend.context_length} must also hold "
            f"one token to generate; shorten it by {over} tokens or more. A config that sets "
            "n_ctx below the model's trained context may raise it; unset, n_ctx is the trained "
            "context (at most 32768) and never goes past it")


def stream_completion(setup: EditSetup, messages: Sequence[dict[str, str]] | str,
                      policy: Policy, *, prediction: str | None = None,
                      max_tokens: int | None = None,
                      stop: Sequence[str] = ()) -> Iterator[CompletionEvent]:
    """A completion: the chat template over ``messages`` (or ``messages`` as the prompt text
    itself, a legacy completion's), tokenized with special tokens, checked against the context,
    then :func:`generate` with ``prediction`` as the draft source. ``max_tokens`` ``None``: as
    many as the context holds."""
    backend = setup.backend
    chat = not isinstance(messages, str)
    prompt = backend.tokenize(messages if isinstance(messages, str)
                              else backend.chat_prompt(messages), special=True)
    if not prompt:
        raise DocumentError("the prompt is empty: send some text to continue")
    check_prompt_fits(backend, len(prompt), "the chat prompt" if chat else "the prompt")
    # Without max_tokens, the context ends the completion (stop_reason "context").
    budget = backend.context_length if max_tokens is None else max_tokens
    source = prediction_source(setup, prediction, prompt)
    return generate(setup, prompt, policy, max_tokens=budget, source=source, stop=stop)


def prediction_source(setup: EditSetup, prediction: str | None,
                      prompt: Sequence[int] = ()) -> PredictionDrafter | None:
    """The drafter over ``prediction`` (tokenized once, now) and, after it, ``prompt`` (the
    prompt's ids, searched as prompt lookup searches them: indexed once, O(len(prompt))), or
    ``None`` without a prediction or with drafting off (``draft.max_tokens == 0``)."""
    if not prediction or not setup.draft.max_tokens:
        return None
    return PredictionDrafter(prediction, setup.backend.tokenize, setup.token_bytes, setup.draft,
                             setup.backend.batch_profile, context=prompt)


__all__ = ["check_prompt_fits", "generate", "plain_job", "prediction_source", "stream_completion"]
