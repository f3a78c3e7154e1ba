"""Speculative drafts for the decode loop: guesses of the next program tokens, verified by the
model in the same forward pass that appends them.

Two sources, both free of model calls:

* **Tag hypotheses.** At an op boundary and inside a copy tag, assume that the rest of the
  document is unchanged except for what was just generated: the next copy starts after the lines
  the gens since the last copy replaced (``cursor + 1 + generated lines``) and runs to the end.
  After a copy, assume the next op is a gen rewriting the following line of the document. The
  drafted tag is followed by the lines it would copy, so an accepted copy costs no extra forward.
* **Lookup in gen text.** Inside a gen op, draft the tokens that follow the longest recent n-gram
  of the context in the (escaped) document, as prompt-lookup decoding does: the old version of a
  changed line is usually there.

A draft is only a guess: the loop accepts the longest prefix that equals what the model (masked by
the constraint) would have chosen anyway, so the output is exactly that of step-by-step decoding.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from copygram.errors import ConfigError
from copygram.lines import split_lines
from copygram.program import escape_gen_text
from copygram.syntaxes import get_syntax
from copygram.types import LineRange


@dataclass(frozen=True)
class DraftConfig:
    """``max_tokens`` program tokens per draft (0 disables drafting); n-grams up to ``max_ngram``
    for lookup in gen text; ``tags`` / ``gen`` switch the two sources."""

    max_tokens: int = 10
    max_ngram: int = 3
    tags: bool = True
    gen: bool = True

    def __post_init__(self) -> None:
        if self.max_tokens < 0 or self.max_ngram < 1:
            raise ConfigError("draft max_tokens must be >= 0 and max_ngram >= 1")


@dataclass(frozen=True)
class Draft:
    """Program tokens to verify; if the last one closes a copy, ``closes`` names its lines."""

    tokens: list[int]
    closes: LineRange | None = None


class Drafter:
    """Drafts for one edit of one document, in ``syntax``."""

    def __init__(self, document_lines: Sequence[str], tokenize: Callable[[str], list[int]],
                 config: DraftConfig, syntax: str = "lines") -> None:
        self.config = config
        self._syntax = s = get_syntax(syntax)
        copy_open, sep = re.escape(s.copy_open), re.escape(s.copy_sep)
        self._op = re.compile(
            f"{copy_open}([0-9]+){sep}([0-9]+){re.escape(s.copy_close)}"
            f"|{re.escape(s.gen_open)}((?:[^<&]|&lt;|&amp;)*){re.escape(s.gen_close)}"
        )
        self._partial_copy = re.compile(f"{copy_open}([0-9]+){sep}([0-9]*)\\Z")
        self._lines = document_lines
        self._n = len(document_lines)
        self._tokenize = tokenize
        # Escaped document tokens, tokenized line by line so that line starts are token starts.
        self._doc_tokens: list[int] = []
        self._line_start: list[int] = []
        if config.gen:
            for line in document_lines:
                self._line_start.append(len(self._doc_tokens))
                self._doc_tokens.extend(tokenize(escape_gen_text(line)))
        self._line_start.append(len(self._doc_tokens))
        # n-gram -> every position it starts at, ascending (built once: O(tokens * max_ngram)).
        self._ngrams: dict[tuple[int, ...], list[int]] = {}
        for size in range(1, config.max_ngram + 1):
            for start in range(len(self._doc_tokens) - size):
                key = tuple(self._doc_tokens[start : start + size])
                self._ngrams.setdefault(key, []).append(start)
        self._text_cache: dict[str, list[int]] = {}
        # Parsed complete ops: (end offset in program text, cursor, generated lines since copy).
        self._parsed_upto = 0
        self._cursor = 0
        self._generated = 0
        self._last_was_copy = False

    def _tokens(self, text: str) -> list[int]:
        if text not in self._text_cache:
            self._text_cache[text] = self._tokenize(text)
        return self._text_cache[text]

    def _advance(self, program: str) -> str:
        """Parse complete ops past the last call; returns the partial op at the end."""
        while True:
            match = self._op.match(program, self._parsed_upto)
            if match is None:
                return program[self._parsed_upto :]
            self._last_was_copy = match.group(1) is not None
            if self._last_was_copy:
                self._cursor, self._generated = int(match.group(2)), 0
            else:
                self._generated += len(split_lines(match.group(3))) if match.group(3) else 0
                if match.group(3) and not match.group(3).endswith(("\n", "\r")):
                    self._generated -= 1  # a partial line replaces nothing by itself
            self._parsed_upto = match.end()

    def rollback_to(self, program: str) -> None:
        """The program text shrank (rejected tokens were rolled back): re-parse from scratch."""
        if len(program) < self._parsed_upto:
            self._parsed_upto, self._cursor, self._generated = 0, 0, 0
            self._last_was_copy = False

    def propose(self, program: str, context: Sequence[int]) -> Draft | None:
        """A draft continuing ``program`` (the text so far); ``context`` is every token after the
        prompt (program tokens and spliced copies), for n-gram lookup."""
        if self.config.max_tokens == 0:
            return None
        self.rollback_to(program)
        partial = self._advance(program)
        if partial.startswith(self._syntax.gen_open):
            return self._lookup(context) if self.config.gen else None
        if not self.config.tags or self._cursor >= self._n:
            return None
        start = min(self._cursor + 1 + max(self._generated, 0), self._n)
        if partial == "" and self._last_was_copy:
            # After a copy the next op is most likely a gen rewriting the next line.
            if not self.config.gen:
                return None
            text = self._syntax.gen_open + escape_gen_text(self._lines[self._cursor])
            return Draft(self._tokens(text)[: self.config.max_tokens])
        hypothesis = self._syntax.render_copy(start, self._n)
        closes = LineRange(start, self._n)
        if not hypothesis.startswith(partial):
            match = self._partial_copy.match(partial)
            if match is None or not str(self._n).startswith(match.group(2)):
                return None
            begin = int(match.group(1))
            if begin > self._n:
                return None
            hypothesis = self._syntax.render_copy(begin, self._n)
            closes = LineRange(begin, self._n)
        tokens = self._tokens(hypothesis[len(partial) :])
        if not tokens:
            return None
        if len(tokens) > self.config.max_tokens:
            return Draft(tokens[: self.config.max_tokens])
        return Draft(tokens, closes)

    def _lookup(self, context: Sequence[int]) -> Draft | None:
        # Prefer the match nearest after the line the gen is most likely rewriting.
        preferred = self._line_start[min(self._cursor + max(self._generated, 0), self._n)]
        for size in range(min(self.config.max_ngram, len(context)), 0, -1):
            starts = self._ngrams.get(tuple(context[-size:]))
            if not starts:
                continue
            at = bisect_left(starts, preferred - size)
            start = starts[at] if at < len(starts) else starts[0]
            follow = self._doc_tokens[start + size : start + size + self.config.max_tokens]
            if follow:
                return Draft(list(follow))
        return None
