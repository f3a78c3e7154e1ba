"""Teacher-forced baselines: what producing ``after`` costs without copygram.

Every runner starts from a backend whose cache already holds the prompt (the caller prefills it,
so prefill is outside ``wall_s``) and produces the target tokens ``t_0 .. t_{N-1}`` exactly, as a
model that always picks the teacher token would:

* ``t_0`` comes from the prompt's last logits (computed by the prefill, no forward here);
* every target token is fed to the cache, as a real rewrite must, and the logits after the last
  one are where the model decides to stop (EOS is never fed). Plain decoding therefore costs
  exactly ``N`` forwards for ``N`` tokens (0 for an empty target).

Prompt lookup decoding (HF ``prompt_lookup_num_tokens``, vLLM ``ngram``) drafts up to ``k`` tokens
copied from an earlier occurrence of the latest n-gram, verifies ``[pending token] + draft`` in one
forward, keeps the longest draft prefix equal to the teacher tokens, takes one bonus token from the
verification logits, and truncates the rejected draft from the cache.

The counters follow :class:`~copygram.decode.stats.RunStats`: ``decoded_tokens`` counts tokens chosen from
the logits of a forward (including ``t_0``), ``drafted_tokens`` accepted draft tokens; their sum is
``output_tokens``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence

from copygram.backends.base import Backend
from copygram.decode.drafting import NgramIndex
from copygram.decode.prompt import RewritePromptBuilder
from copygram.decode.stats import RunStats

__all__ = [
    "PromptLookup",
    "baseline_prompt",
    "find_candidate_pred_tokens",
    "full_regeneration",
    "prompt_lookup",
]


def baseline_prompt(backend: Backend, document: str, instruction: str) -> list[int]:
    """Token ids of the prompt the baselines start from: the library's plain-rewrite prompt
    (:class:`~copygram.decode.prompt.RewritePromptBuilder`) in the model's chat template."""
    text = RewritePromptBuilder().build(document, instruction, backend)
    return backend.tokenize(text, special=True)


def find_candidate_pred_tokens(ids: Sequence[int], *, k: int = 10, max_ngram: int = 3,
                               eos_token_ids: Collection[int] = ()) -> list[int]:
    """The draft HF's ``PromptLookupCandidateGenerator.get_candidates`` proposes after ``ids``.

    A direct transcription (longest n-gram first, its leftmost earlier occurrence whose
    continuation is non-empty, continuation capped at ``k`` tokens and cut at the first EOS).
    ``O(len(ids) * max_ngram)`` per call: the reference for :class:`PromptLookup`, not for loops.
    """
    length = len(ids)
    for size in range(min(max_ngram, length - 1), 0, -1):
        ngram = list(ids[length - size:])
        for idx in range(length - size + 1):
            if list(ids[idx:idx + size]) != ngram:
                continue
            start = idx + size
            end = min(start + k, length)
            if start < end:
                chosen = list(ids[start:end])
                for cut, token in enumerate(chosen):
                    if token in eos_token_ids:
                        chosen = chosen[:cut]
                        break
                # HF stops at the first usable match even when the EOS cut emptied it.
                return chosen
    return []


class PromptLookup:
    """Incremental prompt-lookup drafter: same drafts as :func:`find_candidate_pred_tokens`.

    Keeps, for every n-gram up to ``max_ngram``, its leftmost occurrence that has a
    continuation (:class:`~copygram.decode.drafting.NgramIndex`), so a proposal costs
    ``O(max_ngram + k)`` instead of a scan of the whole context.
    """

    def __init__(self, context: Sequence[int], *, k: int = 10, max_ngram: int = 3,
                 eos_token_ids: Collection[int] = ()) -> None:
        if k <= 0 or max_ngram <= 0:
            raise ValueError("prompt lookup needs k >= 1 and max_ngram >= 1")
        self.k = k
        self.max_ngram = max_ngram
        self._eos = frozenset(eos_token_ids)
        self._index = NgramIndex(max_ngram)
        self.extend(context)

    @property
    def ids(self) -> list[int]:
        return self._index.tokens

    def extend(self, ids: Sequence[int]) -> None:
        self._index.extend(ids)

    def propose(self) -> list[int]:
        ids = self._index.tokens
        for size in range(min(self.max_ngram, len(ids) - 1), 0, -1):
            chosen = self._index.follow(tuple(ids[len(ids) - size :]), self.k)
            if not chosen:
                continue
            for cut, token in enumerate(chosen):
                if token in self._eos:
                    return chosen[:cut]
            return chosen
        return []


class _Feeder:
    """Feeds tokens to the backend, one forward per call, counting and timing it."""

    def __init__(self, backend: Backend, stats: RunStats) -> None:
        self.backend = backend
        self.stats = stats

    def feed(self, ids: Sequence[int]) -> None:
        start = time.perf_counter()
        if len(ids) == 1:
            self.backend.decode(ids[0])
            self.stats.decode_s += time.perf_counter() - start
        else:
            # One logits row per position: what verifying a draft costs.
            self.backend.splice_all(ids)
            self.stats.splice_s += time.perf_counter() - start
        self.stats.forwards += 1
        self.stats.forward_tokens.append(len(ids))


def _teacher_forced(backend: Backend, target_ids: Sequence[int],
                    drafter: PromptLookup | None) -> RunStats:
    """The shared loop: plain decoding when ``drafter`` is None, prompt lookup otherwise."""
    target = list(target_ids)
    n = len(target)
    stats = RunStats(prompt_tokens=backend.n_tokens, output_tokens=n)
    if n == 0:
        return stats
    feeder = _Feeder(backend, stats)
    start = time.perf_counter()
    stats.decoded_tokens = 1  # t_0, read off the prompt's logits
    chosen = 1  # target[:chosen] is decided; target[chosen - 1] is not in the cache yet
    if drafter is not None:
        drafter.extend(target[:1])
    while True:
        draft = drafter.propose() if drafter is not None else []
        base = backend.n_tokens
        feeder.feed([target[chosen - 1], *draft])
        accepted = 0
        while (accepted < len(draft) and chosen + accepted < n
               and draft[accepted] == target[chosen + accepted]):
            accepted += 1
        if accepted < len(draft):
            backend.truncate(base + 1 + accepted)
        stats.drafted_tokens += accepted
        done = chosen + accepted
        if done >= n:
            break  # the logits after the last target token are where EOS is chosen
        stats.decoded_tokens += 1  # the bonus token from the last kept position's logits
        if drafter is not None:
            drafter.extend(target[chosen:done + 1])
        chosen = done + 1
    stats.wall_s = time.perf_counter() - start
    return stats


def full_regeneration(backend: Backend, target_ids: Sequence[int]) -> RunStats:
    """Decode the target one token per forward: ``len(target_ids)`` forwards.

    The cache must hold the prompt; on return it holds prompt + target.
    """
    return _teacher_forced(backend, target_ids, None)


def prompt_lookup(backend: Backend, prompt_ids: Sequence[int], target_ids: Sequence[int], *,
                  k: int = 10, max_ngram: int = 3) -> RunStats:
    """Prompt lookup decoding of the target (drafts searched in prompt + output so far).

    ``prompt_ids`` must be the tokens the cache holds. Never more forwards than
    :func:`full_regeneration`; a target copied from the prompt needs about ``N / (k + 1)``.
    """
    drafter = PromptLookup(prompt_ids, k=k, max_ngram=max_ngram,
                           eos_token_ids=backend.eos_token_ids)
    return _teacher_forced(backend, target_ids, drafter)
