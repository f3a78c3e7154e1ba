"""Choosing the next token from masked logits: greedy, or temperature/top-p with a seed."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from copygram.errors import ConfigError


@dataclass(frozen=True)
class Sampling:
    """``temperature == 0`` is greedy (the default, and what exactness tests use)."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0

    def __post_init__(self) -> None:
        if not math.isfinite(self.temperature) or self.temperature < 0:
            raise ConfigError(
                f"temperature must be a finite number >= 0 (0 = greedy), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ConfigError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                                      or self.seed < 0):
            raise ConfigError(f"seed must be an integer >= 0 (or None), got {self.seed!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def masked_argmax(logits: npt.NDArray[np.float32], allowed: npt.NDArray[np.bool_]) -> int:
    """The highest-scoring allowed token; ties go to the lowest id, as ``np.argmax`` does."""
    return int(np.argmax(np.where(allowed, logits, -np.inf)))


def top2_margin(logits: npt.NDArray[np.float32], allowed: npt.NDArray[np.bool_]) -> float:
    """How far the best allowed token's logit is above the second's (inf with fewer than two
    allowed tokens: nothing to flip). One O(vocab) pass."""
    scores = np.where(allowed, logits, -np.inf)
    if int(np.count_nonzero(allowed)) < 2:
        return math.inf
    top2 = np.partition(scores, -2)[-2:]
    return float(top2[1] - top2[0])


class Sampler:
    """Stateful token chooser for one run (holds the random generator)."""

    def __init__(self, sampling: Sampling) -> None:
        self.sampling = sampling
        self._rng = np.random.default_rng(sampling.seed)

    def probabilities(self, logits: npt.NDArray[np.float32],
                      allowed: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
        """The distribution a sampled choice draws from: softmax at the temperature over the
        allowed tokens, cut to the top-p nucleus and renormalised (temperature > 0 only)."""
        scores = np.where(allowed, logits.astype(np.float64) / self.sampling.temperature, -np.inf)
        scores -= scores.max()
        probs = np.exp(scores)
        probs /= probs.sum()
        if self.sampling.top_p < 1:
            order = np.argsort(-probs)
            cumulative = np.cumsum(probs[order])
            keep = order[: int(np.searchsorted(cumulative, self.sampling.top_p)) + 1]
            trimmed = np.zeros_like(probs)
            trimmed[keep] = probs[keep]
            probs = trimmed / trimmed.sum()
        return probs

    def choose(self, logits: npt.NDArray[np.float32], allowed: npt.NDArray[np.bool_]) -> int:
        if self.sampling.temperature == 0:
            return masked_argmax(logits, allowed)
        probs = self.probabilities(logits, allowed)
        return int(self._rng.choice(len(probs), p=probs))

    def verify(self, logits: npt.NDArray[np.float32], allowed: npt.NDArray[np.bool_],
               drafted: int) -> int:
        """The token to take where a deterministic draft proposes ``drafted``: ``drafted`` itself
        with probability ``p(drafted)``, else a draw from ``p`` with ``drafted`` removed and
        renormalised (speculative sampling's rule for a draft that puts all its mass on one
        token), so the token taken is distributed as :meth:`choose`'s. Greedy: the argmax."""
        if self.sampling.temperature == 0:
            return masked_argmax(logits, allowed)
        probs = self.probabilities(logits, allowed)
        if self._rng.random() < probs[drafted]:
            return drafted
        residual = probs.copy()
        residual[drafted] = 0.0
        total = residual.sum()
        if total <= 0:  # p(drafted) == 1 up to rounding: nothing else can be drawn
            return drafted
        return int(self._rng.choice(len(residual), p=residual / total))
