"""One document being edited: its text, split into lines once and tokenized once per edit.

The decode loop, the constraint, the drafter and the resolver all read the same
:class:`EditDocument`, so an edit never splits or tokenizes the document twice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from copygram.language.lines import split_lines


class EditDocument:
    """``text`` with its ``lines`` (split now) and its tokens (tokenized on first use)."""

    def __init__(self, text: str, tokenize: Callable[[str], list[int]]) -> None:
        self.text = text
        self.lines = split_lines(text)
        self._tokenize = tokenize
        self._gen_tokens: dict[str, list[int]] = {}

    @functools.cached_property
    def tokens(self) -> list[int]:
        """The document tokenized as one text (what the room check counts)."""
        return self._tokenize(self.text)

    def gen_tokens(self, escape: Callable[[str], str]) -> list[int]:
        """The document as gen text writes it (``escape``: the syntax's, which changes only a
        closing tag in the text), tokenized as one text: the drafter's old text. The same
        tokens as :attr:`tokens` when nothing needs escaping."""
        escaped = escape(self.text)
        if escaped == self.text:
            return self.tokens
        if escaped not in self._gen_tokens:
            self._gen_tokens[escaped] = self._tokenize(escaped)
        return self._gen_tokens[escaped]


__all__ = ["EditDocument"]
