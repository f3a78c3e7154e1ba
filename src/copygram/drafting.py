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
    for lookup in gen text; ``tags`` / ``gen`` switch the two sources.

    ``adaptive``: size each draft for speed (see :class:`DraftLength`); otherwise use
    ``max_tokens``, shrunk after rejections as transformers' assisted generation does."""

    max_tokens: int = 10
    max_ngram: int = 3
    tags: bool = True
    gen: bool = True
    adaptive: bool = True

    def __post_init__(self) -> None:
        if self.max_tokens < 0 or self.max_ngram < 1:
            raise ConfigError("draft max_tokens must be >= 0 and max_ngram >= 1")


@dataclass(frozen=True)
class Draft:
    """Program tokens to verify; if the last one closes a copy, ``closes`` names its lines.

    ``with_content``: append the copied lines to the same forward (worth it only when the model
    has already agreed with part of the end line: a rejected draft wastes the whole copy).
    ``source`` names the hypothesis, for the adaptive draft length."""

    tokens: list[int]
    closes: LineRange | None = None
    with_content: bool = False
    source: str = "tag"


class DraftLength:
    """Chooses how many tokens to draft, from what drafting has cost and earned so far.

    A draft token is worth verifying when the decode step it saves, times the chance that it is
    accepted, exceeds what one more token adds to the verifying forward. With ``t`` the time of a
    one-token decode, ``c`` the marginal time per extra token of a batched forward and ``p`` a
    source's per-token acceptance rate, the ``k``-th token pays while ``t * p**k > c``: on a stack
    whose small batches are barely cheaper per token than decoding (llama.cpp Q4_1 on a CPU,
    ``c/t`` about 0.8) drafts are made only when they are usually right; where batching is nearly
    free (transformers, ``c/t`` about 0.05) they grow to ``max_tokens``. Estimates are running
    means with a weak prior, so the first drafts are probes.
    """

    PROBE_EVERY = 8

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self._decode = [0.0, 0]  # total seconds, count of one-token forwards
        self._extra = [0.0, 0]  # total seconds over a decode, count of extra tokens
        self._accepted: dict[str, list[int]] = {}  # source -> [accepted, rejected]
        self._skipped: dict[str, int] = {}

    def observe_forward(self, n_tokens: int, seconds: float) -> None:
        if n_tokens == 1:
            self._decode[0] += seconds
            self._decode[1] += 1
        elif self._decode[1] and n_tokens <= self.max_tokens + 4:
            # Only forwards the size of a verification: per token, a long copy splice is far
            # cheaper than a short batch on stacks whose small batches barely beat decoding
            # (llama.cpp: 2 tokens cost ~1.8 decodes, 128 tokens ~40).
            self._extra[0] += max(seconds - self._decode[0] / self._decode[1], 0.0)
            self._extra[1] += n_tokens - 1

    def observe_draft(self, source: str, proposed: int, accepted: int) -> None:
        counts = self._accepted.setdefault(source, [1, 1])
        counts[0] += accepted
        counts[1] += accepted < proposed

    def length(self, source: str) -> int:
        if not self._decode[1] or not self._extra[1]:
            return self.max_tokens  # no timings yet: draft fully once to measure
        decode = self._decode[0] / self._decode[1]
        extra = self._extra[0] / self._extra[1]
        accepted, rejected = self._accepted.get(source, [1, 1])
        p = accepted / (accepted + rejected)
        k = 0
        while k < self.max_tokens and decode * p ** (k + 1) > extra:
            k += 1
        if k == 0:
            # Not worth it now; still probe with one token now and then, so that a source whose
            # drafts start to match (a long unchanged stretch of a rewritten line) is noticed.
            self._skipped[source] = self._skipped.get(source, 0) + 1
            k = 1 if self._skipped[source] % self.PROBE_EVERY == 0 else 0
        return k


class Drafter:
    """Drafts for one edit of one document, in ``syntax``."""

    def __init__(self, document_lines: Sequence[str], tokenize: Callable[[str], list[int]],
                 config: DraftConfig, syntax: str = "lines",
                 lengths: DraftLength | None = None) -> None:
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
        self._k: dict[str, int] = {}  # draft length per source, without ``adaptive``
        # Shared across the edits of a session: the backend's costs do not change between them.
        self.lengths = (lengths or DraftLength(config.max_tokens)) if config.adaptive else None
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
            limit = self._limit("next")
            return Draft(self._tokens(text)[:limit], source="next") if limit else None
        hypothesis = self._syntax.render_copy(start, self._n)
        closes = LineRange(start, self._n)
        match = self._partial_copy.match(partial)
        if not hypothesis.startswith(partial):
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
        limit = self._limit("tag")
        if limit == 0:
            return None
        if len(tokens) > limit:
            return Draft(tokens[:limit])
        return Draft(tokens, closes, with_content=bool(match and match.group(2)))

    def _limit(self, source: str) -> int:
        if self.lengths is not None:
            return self.lengths.length(source)
        return self._k.get(source, self.config.max_tokens)

    def feedback(self, draft: Draft, accepted: int) -> None:
        """Learn from a verified draft. Without ``adaptive``: +2 tokens after a fully accepted
        draft, -1 otherwise, as transformers' assisted generation does."""
        if self.lengths is not None:
            self.lengths.observe_draft(draft.source, len(draft.tokens), accepted)
            return
        k = self._limit(draft.source)
        k = k + 2 if accepted == len(draft.tokens) else k - 1
        self._k[draft.source] = max(1, min(self.config.max_tokens, k))

    def observe_forward(self, n_tokens: int, seconds: float) -> None:
        if self.lengths is not None:
            self.lengths.observe_forward(n_tokens, seconds)

    def _lookup(self, context: Sequence[int]) -> Draft | None:
        limit = self._limit("lookup")
        if limit == 0:
            return None
        # Prefer the match nearest after the line the gen is most likely rewriting.
        preferred = self._line_start[min(self._cursor + max(self._generated, 0), self._n)]
        for size in range(min(self.config.max_ngram, len(context)), 0, -1):
            starts = self._ngrams.get(tuple(context[-size:]))
            if not starts:
                continue
            at = bisect_left(starts, preferred - size)
            start = starts[at] if at < len(starts) else starts[0]
            follow = self._doc_tokens[start + size : start + size + limit]
            if follow:
                return Draft(list(follow), source="lookup")
        return None
