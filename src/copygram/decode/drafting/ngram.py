"""N-gram indexes for lookup drafts (prompt-lookup decoding): what followed an n-gram before.

:class:`DocumentIndex` indexes the (escaped) document being edited, once per edit, and prefers the
match nearest the line being rewritten; :class:`NgramIndex` grows with what the edit writes (and
indexes the instruction), keeping the first start of each n-gram.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Sequence


class NgramIndex:
    """Tokens with the first start of each n-gram that has a continuation (the longest follow,
    as prompt lookup takes it), extended in place: a lookup costs ``O(n + k)`` however long the
    text grows."""

    def __init__(self, max_ngram: int) -> None:
        self.tokens: list[int] = []
        self._first: dict[tuple[int, ...], int] = {}
        self._max_ngram = max_ngram

    def extend(self, tokens: Sequence[int]) -> None:
        for token in tokens:
            # The n-grams ending at the current last token gain a continuation now.
            end = len(self.tokens)
            for size in range(1, min(self._max_ngram, end) + 1):
                self._first.setdefault(tuple(self.tokens[end - size : end]), end - size)
            self.tokens.append(token)

    def has(self, key: tuple[int, ...]) -> bool:
        return key in self._first

    def follow(self, key: tuple[int, ...], limit: int) -> list[int]:
        start = self._first.get(key)
        if start is None:
            return []
        return self.tokens[start + len(key) : start + len(key) + limit]


class DocumentIndex:
    """The escaped document's ``tokens`` (tokenized as one text, as a model writes it in a gen
    and as a copy splices it: line by line would split a newline from the next line's indent
    where the tokenizer merges them, and such drafts would fail at every line end), the token
    where each line starts, and every start of each n-gram (built once: O(tokens * max_ngram))."""

    def __init__(self, tokens: Sequence[int], escaped_lines: Sequence[str],
                 token_bytes: Sequence[bytes], max_ngram: int) -> None:
        self.tokens = list(tokens)
        token_end = list(itertools.accumulate(len(token_bytes[t]) for t in self.tokens))
        self.line_start: list[int] = []  # index of the token holding each line's first byte
        line_byte = 0
        for line in escaped_lines:
            self.line_start.append(bisect_right(token_end, line_byte))
            line_byte += len(line.encode("utf-8"))
        self.line_start.append(len(self.tokens))
        # n-gram -> every position it starts at, ascending.
        self._starts: dict[tuple[int, ...], list[int]] = {}
        for size in range(1, max_ngram + 1):
            for start in range(len(self.tokens) - size):
                self._starts.setdefault(tuple(self.tokens[start : start + size]), []).append(start)

    def has(self, key: tuple[int, ...]) -> bool:
        return bool(self._starts.get(key))

    def follow(self, key: tuple[int, ...], preferred: int, limit: int) -> list[int]:
        """Up to ``limit`` tokens after ``key`` where it occurs at or after the token
        ``preferred`` (less the key's length), else after its first occurrence."""
        starts = self._starts.get(key)
        if not starts:
            return []
        at = bisect_left(starts, preferred - len(key))
        start = starts[at] if at < len(starts) else starts[0]
        return self.tokens[start + len(key) : start + len(key) + limit]


__all__ = ["DocumentIndex", "NgramIndex"]
