"""Plain-text generation with verified drafts: the loop under rewrite mode and chat completions.

No grammar: the model writes text, token by token, as plain decoding would. A draft source (a
:class:`~copygram.decode.drafting.prediction.PredictionDrafter` over the text the caller expects:
the document being rewritten, or a ``prediction`` as in OpenAI's Predicted Outputs) guesses the
next tokens; the guess is appended in the same forward as the token just chosen
(``splice_all``), the longest prefix the policy would have chosen anyway is kept, plus the
policy's own next token from the row after it (the bonus token), and the rest is cut from the
cache. Under greedy decoding the output is token-identical to a plain step-by-step greedy decode
of the same prompt through the same backend; sampled, each drafted token is accepted with its
probability ``p(x)`` and otherwise replaced by a draw from ``p`` without ``x`` (speculative
sampling for a deterministic draft), so the output is distributed as the model's.

The rules of the program-mode loop hold here too, by the same code
(:class:`~copygram.decode.forwards.Forwards`): a greedy choice read from a row of a multi-token
forward (the prompt, a verification) whose top-2 margin is within the tie tolerance is re-decided
with a one-token step at that position; draft sizes come from the backend's fixed
``BatchProfile`` and the tokens, never from a clock; so the same input gives the same output on
every run.

Cost: one forward per accepted draft (however long) or per token decoded alone, each costing
what the backend's ``BatchProfile`` says for its size, plus one forward per near-tie.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from copygram.decode.completion import (
    Completion,
    CompletionDoneEvent,
    CompletionEvent,
    SpanEvent,
    StopReason,
    TokenEvent,
)
from copygram.decode.drafting import Draft
from copygram.decode.drafting.prediction import PredictionDrafter
from copygram.decode.forwards import Forwards
from copygram.decode.policies import Policy
from copygram.decode.setup import EditSetup
from copygram.errors import DocumentError

if TYPE_CHECKING:
    from copygram.backends.base import Backend, Logits


class TextDraftSource(Protocol):
    """Where plain-text drafts come from."""

    def propose(self, output: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing ``output`` (every token generated so far, the one the verifying
        forward appends first included; it only grows between calls)."""
        ...

    def feedback(self, draft: Draft, accepted: int) -> None: ...


class TextPolicy(Policy, Protocol):
    """A :class:`~copygram.decode.policies.Policy` that can also verify a drafted token."""

    def verify(self, logits: Logits, allowed: npt.NDArray[np.bool_], drafted: int) -> int: ...


class _Text:
    """The output text, released as it becomes final: held back while a token ends inside a
    UTF-8 character or while the end of the text could still begin a stop string."""

    def __init__(self, token_bytes: Sequence[bytes], stop: Sequence[str]) -> None:
        self._token_bytes = token_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stop = [s for s in stop if s]
        self._raw: list[str] = []
        self._released: list[str] = []
        self._pending = ""  # decoded, not released: a possible stop-string prefix
        self._new = ""  # released, not yet taken by an event
        self.stopped = False

    def push(self, token: int) -> bool:
        """Take the next token; whether it completes a stop string."""
        piece = self._decoder.decode(self._token_bytes[token])
        self._raw.append(piece)
        self._settle(piece)
        return self.stopped

    def _settle(self, piece: str, final: bool = False) -> None:
        text = self._pending + piece
        # A stop string never starts in released text: the longest suffix that could begin
        # one is always held back, so searching the pending text finds the first occurrence.
        hits = [at for s in self._stop if (at := text.find(s)) >= 0]
        if hits:
            self._release(text[: min(hits)])
            self._pending, self.stopped = "", True
            return
        hold = 0
        if not final:
            for size in range(min(len(text), max(map(len, self._stop), default=1) - 1), 0, -1):
                if any(s.startswith(text[-size:]) for s in self._stop):
                    hold = size
                    break
        self._release(text[: len(text) - hold])
        self._pending = text[len(text) - hold :]

    def _release(self, text: str) -> None:
        self._released.append(text)
        self._new += text

    def take(self) -> str:
        new, self._new = self._new, ""
        return new

    def finish(self) -> tuple[str, str]:
        """The raw text and the output text, all pending text released (for :meth:`take`)."""
        piece = self._decoder.decode(b"", final=True)
        self._raw.append(piece)
        if not self.stopped:
            self._settle(piece, final=True)
        return "".join(self._raw), "".join(self._released)


def generate(setup: EditSetup, prompt: list[int], policy: TextPolicy, *, max_tokens: int,
             source: TextDraftSource | None = None,
             stop: Sequence[str] = ()) -> Iterator[CompletionEvent]:
    """Generate after ``prompt`` until an end-of-generation token, a stop string, ``max_tokens``
    generated tokens or a full context; drafts from ``source`` are verified as they go. Yields a
    :class:`TokenEvent` per token chosen alone, a :class:`SpanEvent` per accepted draft and last a
    :class:`CompletionDoneEvent` (module :mod:`copygram.decode.completion`)."""
    backend = setup.backend
    forwards = Forwards(backend, policy, setup.options.tie_tolerance)
    stats = forwards.stats
    stats.prompt_tokens = len(prompt)
    text = _Text(setup.token_bytes, stop)
    logits = forwards.prefill(prompt)
    started = time.perf_counter()
    allowed = np.ones(len(logits), dtype=np.bool_)  # no grammar: every token may follow
    eos = backend.eos_token_ids
    out: list[int] = []
    pending: int | None = None  # a token already chosen from a verification forward
    reason: StopReason | None = None
    while reason is None:
        if pending is not None:
            token, pending = pending, None
        elif forwards.last_batched:
            token, logits = forwards.decide(logits, allowed, forwards.restep_last)
        else:
            token = policy.choose(logits, allowed)
        if token in eos:
            reason = "eos"
            break
        out.append(token)
        stats.decoded_tokens += 1
        text.push(token)
        yield TokenEvent(token, text.take())
        reason = _ended(text, len(out), max_tokens, backend)
        if reason is not None:
            break
        room = min(max_tokens - len(out), backend.context_length - backend.n_tokens - 1)
        draft = source.propose(out, 1) if source is not None and room > 0 else None
        if source is None or draft is None or not draft.tokens:
            logits = forwards.forward([token])
            continue
        if len(draft.tokens) > room:
            draft = Draft(draft.tokens[:room], source=draft.source)
        logits, pending = yield from _verify(forwards, policy, allowed, token, draft, source,
                                             out, text)
        if pending is None:
            reason = _ended(text, len(out), max_tokens, backend, fed=True)
    raw, final = text.finish()
    stats.output_tokens = len(out)
    stats.wall_s = time.perf_counter() - started
    result = Completion(text=final, raw=raw, token_ids=tuple(out), stop_reason=reason,
                        stats=stats)
    yield CompletionDoneEvent(result, text.take())


def _ended(text: _Text, generated: int, max_tokens: int, backend: Backend,
           fed: bool = False) -> StopReason | None:
    """Why generation ends here, if it does: ``fed`` when the last token is in the cache."""
    if text.stopped:
        return "stop"
    if generated >= max_tokens:
        return "max_tokens"
    if not fed and backend.n_tokens + 1 > backend.context_length:
        return "context"
    return None


def _verify(forwards: Forwards, policy: TextPolicy, allowed: npt.NDArray[np.bool_], token: int,
            draft: Draft, source: TextDraftSource, out: list[int],
            text: _Text) -> Generator[CompletionEvent, None, tuple[Logits, int | None]]:
    """Append ``token`` and ``draft`` in one forward and take the draft's tokens while the policy
    takes them too (each row re-decided where it is a near-tie). Extends ``out``; yields a
    :class:`SpanEvent` for the accepted tokens; returns the logits for the next choice and the
    next token where it is already chosen (``None`` when every drafted token was accepted, or a
    stop string ended the output inside the draft). The cache keeps ``token`` and the accepted
    tokens only."""
    backend, stats = forwards.backend, forwards.stats
    ids = [token, *draft.tokens]
    base = backend.n_tokens
    verified = forwards.forward_rows(ids, list(range(len(ids))))
    span: list[int] = []
    choice: int | None = None
    re_decided = False
    for t, drafted in enumerate(draft.tokens):
        row = verified[t]
        if policy.greedy:
            def restep(t: int = t) -> Logits:
                return forwards.restep_at(base, ids, t)

            choice, logits = forwards.decide(row, allowed, restep)
            # Re-decided in a one-token step: the cache now ends at ids[t] and the choice is
            # the next token, drafted or not.
            re_decided = logits is not row
        else:
            choice = policy.verify(row, allowed, drafted)
        if re_decided or choice != drafted:
            break
        choice = None
        span.append(drafted)
        if text.push(drafted):
            break
    source.feedback(draft, len(span))
    stats.drafted_tokens += len(span)
    stats.rejected_tokens += len(draft.tokens) - len(span)
    out += span
    if span:
        yield SpanEvent(tuple(span), text.take(), draft.source)
    if choice is None:
        return verified[-1], None
    if not re_decided:
        backend.truncate(base + 1 + len(span))
    return verified[len(span)], choice


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


def stream_completion(setup: EditSetup, messages: Sequence[dict[str, str]],
                      policy: TextPolicy, *, prediction: str | None = None,
                      max_tokens: int | None = None,
                      stop: Sequence[str] = ()) -> Iterator[CompletionEvent]:
    """A chat completion: the chat template over ``messages``, tokenized with special tokens,
    checked against the context, then :func:`generate` with ``prediction`` as the draft source.
    ``max_tokens`` ``None``: as many as the context holds."""
    backend = setup.backend
    prompt = backend.tokenize(backend.chat_prompt(messages), special=True)
    check_prompt_fits(backend, len(prompt), "the chat prompt")
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


__all__ = ["TextDraftSource", "TextPolicy", "check_prompt_fits", "generate", "prediction_source",
           "stream_completion"]
