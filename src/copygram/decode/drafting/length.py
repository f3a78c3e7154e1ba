"""How many tokens to draft: the backend's fixed cost curve of forwards by size, against each
draft source's acceptance rate in this edit."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile


class DraftLength:
    """Chooses how many tokens to draft, from what forwards cost and drafts have earned.

    Drafting ``k`` tokens after a feed of ``f`` tokens (what the forward must append anyway)
    costs ``cost(f + k) - cost(f)`` decode steps and saves the expected number of drafted tokens
    accepted; the best ``k`` maximises the difference. ``cost`` is the backend's
    :class:`~copygram.backends.base.BatchProfile`, fixed per backend and device: llama.cpp on a
    CPU pays ~0.3-0.5 decode steps per extra token, so it drafts only what is usually right;
    transformers on a CPU pays almost nothing for a few tokens, so it drafts nearly always.
    Nothing here reads a clock: every draft's size depends only on the tokens, so batch shapes,
    and with them the output, are the same on every run.

    Two models of a source's drafts, running means over one edit (a fresh ``DraftLength`` per
    edit) from a weak prior (``priors[source]`` as ``(accepted, rejected)`` pseudo-counts,
    ``(1, 1)`` for a source without one):

    * by default, each drafted token is kept with the source's per-token rate ``p`` (tokens kept
      against drafts cut short), so ``k`` tokens save ``p + p**2 + ... + p**k``;
    * for the sources named in ``runs`` (n-gram lookups), a draft is right from its first token
      with one rate and, once right, goes on with another: the output either repeats the matched
      text or does not. Replayed on the 30 dev rows' Transformers outputs (``copygram bench
      drafts``), the lookups' first tokens were kept 18-41% of the time and, after a kept one,
      61-94% (by source); one rate for both sized their drafts too short where the text
      repeats. (The line drafts show the same shape, but sized that way they ran longer than
      they paid on the same replay: they stay with one rate.)

    After drafts from a source rejected from their first token (``misses`` in a row), its first
    token is believed right half as often, and never less than 0.4 as often (the same replay:
    after one miss a source's first token was kept ~0.5 as often as a fresh draft's, after 2-8
    misses ~0.4, not halving again with each: a source gone wrong is not wrong ever after).
    """

    PROBE_EVERY = 8
    DEFAULT_PRIOR = (1, 1)
    MISS_DISCOUNT = 0.5
    MISS_FLOOR = 0.4

    def __init__(self, max_tokens: int, profile: BatchProfile,
                 priors: Mapping[str, tuple[int, int]] | None = None,
                 runs: Collection[str] = ()) -> None:
        self.max_tokens = max_tokens
        self.profile = profile
        self._priors = dict(priors or {})
        if any(a < 1 or b < 1 for a, b in self._priors.values()):
            raise ValueError("a draft source's prior needs pseudo-counts >= 1")
        self._runs = frozenset(runs)
        self._accepted: dict[str, list[int]] = {}  # source -> [accepted, rejected]
        # Sources in ``runs`` only: source -> [first token kept, first rejected] and
        # [kept after the first, cut after it].
        self._first: dict[str, list[int]] = {}
        self._more: dict[str, list[int]] = {}
        self._skipped: dict[str, int] = {}
        self._whole: dict[str, list[int]] = {}  # source -> [fully accepted, drafts]

    def _prior(self, source: str) -> list[int]:
        return list(self._priors.get(source, self.DEFAULT_PRIOR))

    def observe_draft(self, source: str, proposed: int, accepted: int) -> None:
        if source in self._runs:
            first = self._first.setdefault(source, self._prior(source))
            first[0 if accepted else 1] += 1
            if accepted:
                more = self._more.setdefault(source, self._prior(source))
                more[0] += accepted - 1
                more[1] += accepted < proposed
        else:
            counts = self._accepted.setdefault(source, self._prior(source))
            counts[0] += accepted
            counts[1] += accepted < proposed
        whole = self._whole.setdefault(source, [1, 2])
        whole[0] += accepted == proposed
        whole[1] += 1

    def _rate(self, table: dict[str, list[int]], source: str) -> float:
        kept, lost = table.get(source) or self._prior(source)
        return kept / (kept + lost)

    def _rates(self, source: str, misses: int) -> tuple[float, float]:
        """The chance that a draft's first token is kept, its recent ``misses`` discounted, and
        that a token after a kept one is."""
        discount = max(self.MISS_DISCOUNT**misses, self.MISS_FLOOR) if misses else 1.0
        if source in self._runs:
            return self._rate(self._first, source) * discount, self._rate(self._more, source)
        p = self._rate(self._accepted, source)
        return p * discount, p

    def acceptance(self, source: str, misses: int = 0) -> float:
        """The chance that a draft from ``source`` starts right (for a source not in ``runs``:
        its per-token rate), after ``misses`` drafts in a row that it got wrong from the start."""
        return self._rates(source, misses)[0]

    def cost(self, n_tokens: int) -> float:
        """Modelled cost of a forward over ``n_tokens``, in decode steps."""
        return self.profile.cost(n_tokens)

    def length(self, source: str, feed: int = 1, misses: int = 0) -> int:
        """Tokens to draft from ``source`` in a forward that appends ``feed`` tokens anyway,
        after ``misses`` drafts in a row from it were wrong from their first token."""
        base = self.cost(feed)
        first, then = self._rates(source, misses)
        best_k, best_gain, expected, chance = 0, 0.0, 0.0, first
        for k in range(1, self.max_tokens + 1):
            expected += chance
            chance *= then
            gain = expected - (self.cost(feed + k) - base)
            if gain > best_gain:
                best_k, best_gain = k, gain
        if best_k == 0:
            # Not worth it now; still probe with one token now and then, so that a source whose
            # drafts start to match (a long unchanged stretch of a rewritten line) is noticed.
            self._skipped[source] = self._skipped.get(source, 0) + 1
            best_k = 1 if self._skipped[source] % self.PROBE_EVERY == 0 else 0
        return best_k

    def content_pays(self, source: str, feed: int, draft_tokens: int,
                     content_tokens: int) -> bool:
        """Whether to splice a drafted copy's lines in the forward that verifies its tag: that
        saves the separate forward if the whole tag is accepted (as often as drafts from
        ``source`` were accepted whole) and wastes the lines if not."""
        verify = self.cost(feed + draft_tokens)
        merged = self.cost(feed + draft_tokens + content_tokens)
        alone = self.cost(content_tokens)
        full, drafts = self._whole.get(source, [1, 2])
        return merged < verify + full / drafts * alone


class DraftSizer:
    """How long each source's next draft is, over one run: :class:`DraftLength` over the
    backend's ``profile`` (with the sources' ``priors``) when ``adaptive`` (and a profile is
    given; ``runs``: the sources whose drafts are modelled as runs, see there), else
    ``max_tokens`` shrunk after rejections as transformers' assisted generation does (+2 tokens
    after a draft accepted whole, -1 otherwise). Counts each source's drafts rejected from their
    first token in a row (:attr:`misses`): a source can be right in general and lost here."""

    def __init__(self, max_tokens: int, profile: BatchProfile | None,
                 adaptive: bool = True,
                 priors: Mapping[str, tuple[int, int]] | None = None,
                 runs: Collection[str] = ()) -> None:
        self.max_tokens = max_tokens
        self.lengths = (DraftLength(max_tokens, profile, priors, runs)
                        if adaptive and profile is not None else None)
        self.misses: dict[str, int] = {}
        self.feed = 1  # tokens the next verifying forward appends before the draft
        self._k: dict[str, int] = {}

    def limit(self, source: str) -> int:
        """Tokens to draft from ``source`` now (0: none)."""
        if self.lengths is not None:
            return self.lengths.length(source, self.feed, self.misses.get(source, 0))
        return self._k.get(source, self.max_tokens)

    def acceptance(self, source: str) -> float:
        """How often a draft from ``source`` starts right in this run (:meth:`DraftLength.
        acceptance`; its prior before any verdict; one half without a cost model), its recent
        misses discounted."""
        misses = self.misses.get(source, 0)
        if self.lengths is not None:
            return self.lengths.acceptance(source, misses)
        return 0.5**(misses + 1)

    def feedback(self, source: str, proposed: int, accepted: int) -> None:
        """Learn from a verified draft of ``proposed`` tokens, ``accepted`` of them taken."""
        self.misses[source] = self.misses.get(source, 0) + 1 if accepted == 0 else 0
        if self.lengths is not None:
            self.lengths.observe_draft(source, proposed, accepted)
            return
        k = self.limit(source)
        k = k + 2 if accepted == proposed else k - 1
        self._k[source] = max(1, min(self.max_tokens, k))


__all__ = ["DraftLength", "DraftSizer"]
