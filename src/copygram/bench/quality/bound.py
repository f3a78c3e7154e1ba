"""What rewrite mode could gain at best on one output, from the backend's kernel curve: the bound
that ``bench quality`` sets beside the measured speedup (issue 17's measured / bound).

The output's lines that the document holds unchanged (difflib's matching lines, in order) are what
a perfect drafter would have verified in batches, each token at the price a 128-token forward
pays per token on the backend's :class:`~copygram.backends.base.BatchProfile`; every other token
is decoded alone (one step). Plain greedy decoding pays one step a token, so the bound on the
generation speedup is ``tokens / steps``. The forwards' own fixed cost, rejected drafts and
near-tie steps are what separate a real run from it. Cost: one line diff and one tokenization of
the output (O(lines^2) worst case, milliseconds for a source file).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copygram.language.lines import split_lines

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile

BATCH_TOKENS = 128  # the forward size whose per-token price the bound charges copied lines


@dataclass(frozen=True)
class CopyBound:
    """``tokens`` of an output, ``copied`` of them in lines the document holds, and ``steps``:
    the decode steps a perfect drafter would spend on them (module doc)."""

    tokens: int
    copied: int
    steps: float

    @property
    def speedup(self) -> float:
        """The bound on generation time against plain greedy decoding (1.0 for no tokens)."""
        return self.tokens / self.steps if self.steps > 0 else 1.0


def copy_bound(output: str, document: str, tokenize: Callable[[str], list[int]],
               profile: BatchProfile) -> CopyBound:
    """:class:`CopyBound` of ``output`` (a rewrite of ``document``) on ``profile``."""
    tokens = len(tokenize(output)) if output else 0
    out_lines = split_lines(output)
    matcher = difflib.SequenceMatcher(None, out_lines, split_lines(document), autojunk=False)
    copied = sum(len(tokenize("".join(out_lines[start : start + size])))
                 for start, _, size in matcher.get_matching_blocks() if size)
    copied = min(copied, tokens)  # a block tokenized alone may split a token the output merged
    per_token = profile.cost(BATCH_TOKENS) / BATCH_TOKENS
    return CopyBound(tokens, copied, (tokens - copied) + copied * per_token)


__all__ = ["BATCH_TOKENS", "CopyBound", "copy_bound"]
