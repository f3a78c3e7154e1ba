"""One document being edited: its text, split into lines once and tokenized once per edit.

The decode loop, the constraint, the drafter and the resolver all read the same
:class:`EditDocument`, so an edit never splits or tokenizes the document twice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from copygram.language.lines import split_lines
from copygram.language.ops import escape_gen_text


class EditDocument:
    """``text`` with its ``lines`` (split now) and its tokens (tokenized on first use)."""

    def __init__(self, text: str, tokenize: Callable[[str], list[int]]) -> None:
        self.text = text
        self.lines = split_lines(text)
        self._tokenize = tokenize

    @functools.cached_property
    def tokens(self) -> list[int]:
        """The document tokenized as one text (what the room check counts)."""
        return self._tokenize(self.text)

    @functools.cached_property
    def escaped_tokens(self) -> list[int]:
        """The document as gen text writes it (``&``, ``<`` escaped), tokenized as one text: the
        drafter's old text. The same tokens as :attr:`tokens` when nothing needs escaping."""
        escaped = escape_gen_text(self.text)
        return self.tokens if escaped == self.text else self._tokenize(escaped)


__all__ = ["EditDocument"]
