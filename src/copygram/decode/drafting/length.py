"""How many tokens to draft: a cost model of forwards by size, learned from the backend's own
forwards, against each draft source's acceptance rate."""

from __future__ import annotations

import itertools


class DraftLength:
    """Chooses how many tokens to draft, from what forwards have cost and drafts have earned.

    Drafting ``k`` tokens after a feed of ``f`` tokens (what the forward must append anyway)
    costs ``cost(f + k) - cost(f)`` and, with ``p`` the source's per-token acceptance rate,
    saves ``p + p**2 + ... + p**k`` decode steps; the best ``k`` maximises the difference.
    ``cost`` is learned from this stack's own forwards (mean time per size class, 1, 2, 3-4,
    5-8, ... tokens, piecewise linear between them), because its shape decides everything:
    llama.cpp's Q4_1 on a CPU costs ~0.5-1 decode steps per extra token, so it drafts only
    what is usually right; transformers on a CPU (with the small-batch matmul) pays almost
    nothing for 2-4 tokens and ~+40% at 8, so it drafts a few tokens nearly always, and always
    drafts fully where the feed already holds several tokens (a copy being spliced). Acceptance rates are
    running means with a weak prior; until costs are known the first drafts are full probes.
    """

    PROBE_EVERY = 8

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self._sizes: dict[int, list[float]] = {}  # size class -> [seconds, tokens, forwards]
        self._accepted: dict[str, list[int]] = {}  # source -> [accepted, rejected]
        self._skipped: dict[str, int] = {}
        self._whole: dict[str, list[int]] = {}  # source -> [fully accepted, drafts]
        self._points: list[tuple[float, float]] | None = None  # the cost curve, until a forward

    def observe_forward(self, n_tokens: int, seconds: float) -> None:
        if n_tokens < 1:
            return
        totals = self._sizes.setdefault((n_tokens - 1).bit_length(), [0.0, 0.0, 0.0])
        totals[0] += seconds
        totals[1] += n_tokens
        totals[2] += 1
        self._points = None

    def observe_draft(self, source: str, proposed: int, accepted: int) -> None:
        counts = self._accepted.setdefault(source, [1, 1])
        counts[0] += accepted
        counts[1] += accepted < proposed
        whole = self._whole.setdefault(source, [1, 2])
        whole[0] += accepted == proposed
        whole[1] += 1

    def acceptance(self, source: str, misses: int = 0) -> float:
        """Per-token probability that a draft from ``source`` goes on being accepted, halved
        for each of the ``misses`` drafts in a row that it just got wrong from the start."""
        accepted, rejected = self._accepted.get(source, [1, 1])
        return accepted / (accepted + rejected) * 0.5**misses

    def cost(self, n_tokens: int) -> float | None:
        """Modelled seconds of a forward over ``n_tokens``; None until a decode step and one
        longer forward have been seen."""
        if 0 not in self._sizes or len(self._sizes) < 2:
            return None
        if self._points is None:  # called ~20 times a draft, rebuilt only after a forward
            self._points = []
            for size in sorted(self._sizes):
                seconds, tokens, count = self._sizes[size]
                # Noise must not make a longer forward look cheaper than a shorter one.
                floor = self._points[-1][1] if self._points else 0.0
                self._points.append((tokens / count, max(seconds / count, floor)))
        points = self._points
        for (n0, t0), (n1, t1) in itertools.pairwise(points):
            if n_tokens <= n1:
                return t0 + (t1 - t0) * (max(n_tokens, n0) - n0) / (n1 - n0)
        (n0, t0), (n1, t1) = points[-2:]
        return t1 + (t1 - t0) / (n1 - n0) * (n_tokens - n1)

    def length(self, source: str, feed: int = 1, misses: int = 0) -> int:
        """Tokens to draft from ``source`` in a forward that appends ``feed`` tokens anyway,
        after ``misses`` drafts in a row from it were wrong from their first token."""
        if 0 not in self._sizes and feed == 1 and self._sizes:
            return 0  # drafts always on: measure one plain decode step, the unit of savings
        decode, base = self.cost(1), self.cost(feed)
        if decode is None or base is None:
            return self.max_tokens  # no timings yet: draft fully to measure
        p = self.acceptance(source, misses)
        best_k, best_gain, expected, chance = 0, 0.0, 0.0, 1.0
        for k in range(1, self.max_tokens + 1):
            chance *= p
            expected += chance
            extra = self.cost(feed + k)
            assert extra is not None
            gain = expected * decode - (extra - base)
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
        if verify is None or merged is None or alone is None:
            return False
        full, drafts = self._whole.get(source, [1, 2])
        return merged < verify + full / drafts * alone


__all__ = ["DraftLength"]
