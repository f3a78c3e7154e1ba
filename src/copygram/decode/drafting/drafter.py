"""Speculative drafts for the decode loop: guesses of the next program tokens, verified by the
model in the same forward pass that appends them.

Two sources, both free of model calls:

* **Tag hypotheses.** At an op boundary, inside a copy tag and once a gen's close tag is begun,
  assume that the rest of the document is unchanged except for what was just generated: the next
  copy starts after the lines the gens since the last copy replaced (``cursor + 1 + generated
  lines``) and runs to the end.
  After a copy, assume the next op is a gen rewriting the following line of the document. The
  drafted tag is followed by the lines it would copy, so an accepted copy costs no extra forward.
* **Lookup in gen text.** Inside a gen op, draft the old text of the line being rewritten
  (aligned character by character with what the gen wrote), else the tokens that follow the
  longest recent n-gram of the context in the (escaped) document, as prompt-lookup decoding does
  (:mod:`~copygram.decode.drafting.ngram`), then in what the edit wrote and in the instruction.

How long each draft is comes from :class:`~copygram.decode.drafting.length.DraftLength`. A draft
is only a guess: the loop accepts the longest prefix that equals what the model (masked by the
constraint) would have chosen anyway, so the output is that of step-by-step decoding (the loop
re-decides near-ties with a one-token step: :mod:`copygram.decode.loop`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copygram.decode.drafting.length import DraftSizer
from copygram.decode.drafting.ngram import DocumentIndex, NgramIndex
from copygram.decode.program_reader import OpReader
from copygram.errors import ConfigError
from copygram.language.lines import split_lines
from copygram.language.ops import Copy
from copygram.language.syntaxes import get_syntax
from copygram.language.types import LineRange

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile


@dataclass(frozen=True)
class DraftConfig:
    """``max_tokens`` program tokens per draft (0 disables drafting); n-grams up to ``max_ngram``
    for lookup in gen text; ``tags`` / ``gen`` switch the two sources.

    ``adaptive``: size each draft for speed (see :class:`DraftLength`); otherwise use
    ``max_tokens``, shrunk after rejections as transformers' assisted generation does."""

    max_tokens: int = 16
    max_ngram: int = 3
    tags: bool = True
    gen: bool = True
    adaptive: bool = True

    def __post_init__(self) -> None:
        if self.max_tokens < 0 or self.max_ngram < 1:
            raise ConfigError("draft max_tokens must be >= 0 and max_ngram >= 1")

    @classmethod
    def for_mode(cls, mode: str, max_ngram: int = 3) -> DraftConfig:
        """The default drafts of a session ``mode``: 16 tokens at most in program mode; 64 in
        rewrite mode, whose drafts are the file's own lines, kept ~9 times in 10, and where a
        forward of 65 tokens costs a Transformers CPU model ~3 decode steps against ~2 for 17
        (llama.cpp: ~26 against ~8; the sizer drafts less where the batch costs more)."""
        if mode == "rewrite":
            return cls(max_tokens=REWRITE_DRAFT_TOKENS, max_ngram=max_ngram)
        return cls(max_ngram=max_ngram)


REWRITE_DRAFT_TOKENS = 64
"""Rewrite mode's default ``max_tokens`` (:meth:`DraftConfig.for_mode`)."""


@dataclass(frozen=True)
class Draft:
    """Program tokens to verify; if the last one closes a copy, ``closes`` names its lines.

    ``source`` names the hypothesis, for the adaptive draft length."""

    tokens: list[int]
    closes: LineRange | None = None
    source: str = "tag"


class Drafter:
    """Drafts for one edit of one document, in ``syntax``."""

    def __init__(self, document_lines: Sequence[str], tokenize: Callable[[str], list[int]],
                 token_bytes: Sequence[bytes], config: DraftConfig, syntax: str = "lines",
                 profile: BatchProfile | None = None, instruction: str = "", *,
                 document_tokens: Sequence[int] | None = None,
                 reader: OpReader | None = None,
                 program: Callable[[], str] | None = None) -> None:
        """``profile``: the backend's forward costs, which size drafts when ``config.adaptive``
        (without one, drafts are sized as without ``adaptive``); ``document_tokens``: the
        escaped document tokenized as one text, if the caller has
        it (:meth:`~copygram.decode.document.EditDocument.gen_tokens`); ``reader``: the
        edit's :class:`OpReader`, shared with the decode loop (one of its own otherwise);
        ``program``: the program text so far, which :meth:`propose` continues (the edit's
        constraint's; without it, call :meth:`propose_after`)."""
        self.config = config
        self._program = program
        self._syntax = s = get_syntax(syntax)
        self._partial_copy = s.partial_copy_pattern
        self._lines = document_lines
        self._n = len(document_lines)
        self._tokenize = tokenize
        escaped: list[str] = []
        tokens: Sequence[int] = []
        if config.gen:
            escaped = [s.escape(line) for line in document_lines]
            tokens = (tokenize("".join(escaped)) if document_tokens is None
                      else document_tokens)
        self._document = DocumentIndex(tokens, escaped, token_bytes, config.max_ngram)
        # New text often repeats what the edit already wrote (a renamed name, a parallel line)
        # or what the instruction spells out: lookup there when the document has no match.
        self._instruction = NgramIndex(config.max_ngram)
        if config.gen and instruction:
            self._instruction.extend(tokenize(s.escape(instruction)))
        self._written = NgramIndex(config.max_ngram)
        self._text_cache: dict[str, list[int]] = {}
        # Per edit: acceptance rates learnt here depend only on this edit's tokens.
        self._sizer = DraftSizer(config.max_tokens, profile, config.adaptive)
        self.lengths = self._sizer.lengths
        # The complete ops so far, read incrementally: the cursor (last line copied), lines
        # generated since that copy, and whether the last op was a copy.
        self._reader = reader if reader is not None else OpReader(self._syntax)
        self._read_ops = 0
        self._resets = self._reader.resets
        self._cursor = 0
        self._generated = 0
        self._last_was_copy = False
        self._feed = 1
        # (first old line, gen text aligned, position in the old text, characters unmatched)
        self._alignment: tuple[int, str, int, int] | None = None
        self._old_cache: dict[int, str] = {}
        self._misses = self._sizer.misses

    def _tokens(self, text: str) -> list[int]:
        if text not in self._text_cache:
            self._text_cache[text] = self._tokenize(text)
        return self._text_cache[text]

    def _advance(self, program: str) -> str:
        """Take in the ops completed past the last call; returns the partial op at the end."""
        partial = self._reader.advance(program)
        if self._reader.resets != self._resets:  # rolled back or rewritten: start over
            self._resets = self._reader.resets
            self._read_ops, self._cursor, self._generated = 0, 0, 0
            self._last_was_copy = False
            # The context may have lost tokens too (a verified copy's rewritten tag).
            self._written = NgramIndex(self.config.max_ngram)
        for op in self._reader.ops[self._read_ops :]:
            self._last_was_copy = isinstance(op, Copy)
            if isinstance(op, Copy):
                self._cursor, self._generated = op.end, 0
            elif op.text:
                self._generated += len(split_lines(op.text))
                if not op.text.endswith(("\n", "\r")):
                    self._generated -= 1  # a partial line replaces nothing by itself
        self._read_ops = len(self._reader.ops)
        return partial

    def propose(self, context: Sequence[int], feed: int = 1) -> Draft | None:
        """:meth:`propose_after` the program text the drafter was built to read."""
        if self._program is None:
            raise TypeError("this Drafter was built without program=: call propose_after")
        return self.propose_after(self._program(), context, feed)

    def propose_after(self, program: str, context: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing ``program`` (the text so far); ``context`` is every token after the
        prompt (program tokens and spliced copies), for n-gram lookup; ``feed`` is how many
        tokens the verifying forward appends before the draft (they make drafting cheaper)."""
        self._feed = self._sizer.feed = feed
        if self.config.max_tokens == 0:
            return None
        partial = self._advance(program)
        if partial.startswith(self._syntax.gen_open):
            if not self.config.gen:
                return None
            text = partial[len(self._syntax.gen_open):]
            # Gen text may hold "<" (code does): a text ending in two bytes or more of the
            # close tag is closing the gen, a lone "<" more likely code ("a < b").
            written = self._close_begun(text)
            if written:
                return self._closing(text[: -len(written)], written) if self.config.tags else None
            return self._old_text(text) or self._lookup(context)
        if self._cursor >= self._n:
            return self._append(partial)
        if not self.config.tags:
            return None
        start = self._cursor + 1 + max(self._generated, 0)
        if start > self._n and not self._last_was_copy:
            return None  # the gens since the last copy rewrote the rest: the program may end
        start = min(start, self._n)
        if partial == "" and self._last_was_copy:
            # After a copy the next op is most likely a gen rewriting the next line.
            if not self.config.gen:
                return None
            text = self._syntax.gen_open + self._syntax.escape(self._lines[self._cursor])
            return self._capped(self._tokens(text), None, "next")
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
        # "Nothing changes" at the start of a program is rarely right (an edit was asked for);
        # "the rest is unchanged" after a gen often is: learn their rates apart.
        return self._capped(tokens, closes, "tag" if self._reader.end else "whole")

    def _append(self, partial: str) -> Draft | None:
        """After a copy that reached the end of the document only new text (or the end of the
        program) can follow: draft the rest of the gen tag."""
        gen_open = self._syntax.gen_open
        if not (self._last_was_copy and self.config.gen and gen_open.startswith(partial)):
            return None
        return self._capped(self._tokens(gen_open[len(partial) :]), None, "append")

    def _capped(self, tokens: list[int], closes: LineRange | None, source: str) -> Draft | None:
        """A draft of at most the source's length; a cut draft no longer closes its copy."""
        limit = self._limit(source)
        if limit == 0:
            return None
        if len(tokens) > limit:
            return Draft(tokens[:limit], source=source)
        return Draft(tokens, closes, source=source)

    def _limit(self, source: str) -> int:
        return self._sizer.limit(source)

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        """Whether the forward verifying ``draft`` (which closes a copy) should also splice the
        copy's ``content_tokens``: a rejected draft wastes them (see
        :meth:`DraftLength.content_pays`). Without ``adaptive``: only for short copies."""
        if self.lengths is not None:
            return self.lengths.content_pays(draft.source, self._feed, len(draft.tokens),
                                             content_tokens)
        return content_tokens <= self.config.max_tokens

    def feedback(self, draft: Draft, accepted: int) -> None:
        """Learn from a verified draft. Without ``adaptive``: +2 tokens after a fully accepted
        draft, -1 otherwise, as transformers' assisted generation does."""
        # Misses in a row are counted for this edit only: a source can be right in general and
        # lost here (an inserted line has no old text to follow).
        self._sizer.feedback(draft.source, len(draft.tokens), accepted)

    # How far ahead a rewritten line may skip old text and still be followed, and how much new
    # text may pass without a match before the alignment is given up for n-gram lookup.
    ALIGN_WINDOW = 80
    ALIGN_LOST = 12

    def _old_text(self, written: str) -> Draft | None:
        """Draft the old text of the lines this gen most likely rewrites, from the point that
        matches the end of what it has ``written`` so far: an edited line keeps most of its old
        text, so after a changed word the rest of the old line usually follows. Alignment is
        character-level (tokenizations of old and new text differ around a change): a written
        character that equals the next old one advances; otherwise the last 3 (or 2) written
        characters are looked for a little ahead in the old text (a replaced or deleted
        stretch), and failing that the old text waits (an insertion)."""
        first = self._rewritten_line()
        if first >= self._n:
            return None
        old = self._old_from(first)
        state = self._alignment
        if state is None or state[0] != first or not written.startswith(state[1]):
            state = (first, "", 0, 0)
            self._misses["old"] = 0  # another gen op: another old text to follow
        _, done, p, lost = state
        window = self.ALIGN_WINDOW
        for i in range(len(done), len(written)):
            char = written[i]
            if p < len(old) and old[p] == char:
                p, lost = p + 1, 0
                continue
            lost += 1
            # Re-find the last few characters ahead: 3 or 2 within the old line (2 only close
            # by: short strings recur), 6 within the window (a deletion across lines).
            line_end = old.find("\n", p)
            line_end = len(old) if line_end < 0 else line_end + 1
            for size, ahead in ((3, line_end), (6, p + window), (2, min(line_end, p + 16))):
                if i + 1 >= size:
                    found = old.find(written[i + 1 - size : i + 1], p, ahead)
                    if found >= 0:
                        p, lost = found + size, 0
                        break
        self._alignment = (first, written, p, lost)
        in_step = lost == 0 and (p == 0 or old[p - 1] in "\n\r") and p < len(old)
        if written.endswith(("\n", "\r")) and not (
                in_step and self._rate("old") > self._rate("close")):
            # A line is complete: perhaps the change is too, and the rest is copied, from past
            # as many old lines as the gen wrote (the alignment may have skipped ahead).
            return self._close(self._copy_after(written))
        if lost > self.ALIGN_LOST or p >= len(old):
            return None
        # Drafts made in step with the old text and drafts made while a change is still being
        # written are right at very different rates: learn them apart. In step again, earlier
        # misses (inside the change) say nothing about what follows.
        source = "old" if lost == 0 else "old-lost"
        if lost == 0:
            self._misses.pop(source, None)
        limit = self._limit(source)
        if limit == 0:
            return None
        # Enough characters for a full draft (a token rarely spans more than 8), the same
        # whatever the limit, so that the cut never changes how the first tokens split.
        tokens = self._tokens(old[p : p + 8 * self.config.max_tokens])[:limit]
        return Draft(tokens, source=source) if tokens else None

    def _rate(self, source: str) -> float:
        return self.lengths.acceptance(source) if self.lengths is not None else 0.5

    def _close(self, start: int, written: str = "", source: str = "close") -> Draft | None:
        """Draft closing the gen (past the ``written`` start of its close tag) and copying lines
        ``start``.. to the end of the document."""
        syntax = self._syntax
        rest = syntax.gen_close[len(written):]
        if start > self._n:
            tokens, closes = self._tokens(rest), None
        else:
            # As one text, the way the worked example in the prompt tokenizes it (`</gen><copy`
            # holds the token `><`): a model writes what it has read.
            tokens = self._tokens(rest + syntax.render_copy(start, self._n))
            closes = LineRange(start, self._n)
        return self._capped(tokens, closes, source) if tokens else None

    def _closing(self, text: str, written: str) -> Draft | None:
        """The gen's close tag is begun (``written``, after its ``text``): the gen ends here, so
        draft the rest of the tag and the copy of the lines after those it rewrote (learnt
        apart from :meth:`_close`, which also guesses that the gen ends)."""
        return self._close(self._copy_after(text), written, "closing")

    def _close_begun(self, text: str) -> str:
        """The longest end of ``text`` of two bytes or more that begins the gen's close tag."""
        close = self._syntax.gen_close
        for size in range(len(close) - 1, 1, -1):
            if text.endswith(close[:size]):
                return close[:size]
        return ""

    def _rewritten_line(self) -> int:
        """The 0-based document line the open gen most likely rewrites first."""
        return min(self._cursor + max(self._generated, 0), self._n)

    def _copy_after(self, text: str) -> int:
        """The first line (1-based) a copy after the open gen takes, if ``text`` rewrote as many
        lines as it holds."""
        return self._rewritten_line() + len(split_lines(text)) + 1

    def _old_from(self, first: int) -> str:
        """The escaped text of the document from line ``first`` (0-based), a few lines' worth."""
        if first not in self._old_cache:
            self._old_cache[first] = self._syntax.escape("".join(self._lines[first : first + 40]))
        return self._old_cache[first]

    def _lookup(self, context: Sequence[int]) -> Draft | None:
        """Draft what follows the longest recent n-gram of ``context``: in the document first
        (its old text), then in what the edit wrote, then in the instruction."""
        # The tokens after the prompt only grow between calls (rejected drafts never enter),
        # but for a rewritten copy tag, which resets the reader and this index.
        self._written.extend(context[len(self._written.tokens) :])
        # Prefer the document match nearest after the line the gen is most likely rewriting.
        preferred = self._document.line_start[self._rewritten_line()]
        # A source's length is asked only where it has a match: asking costs a pass over the
        # cost curve and counts towards the source's next probe.
        limits: dict[str, int] = {}

        def limit(source: str) -> int:
            if source not in limits:
                limits[source] = self._limit(source)
            return limits[source]

        for size in range(min(self.config.max_ngram, len(context)), 0, -1):
            key = tuple(context[-size:])
            if self._document.has(key) and limit("lookup"):
                follow = self._document.follow(key, preferred, limit("lookup"))
                if follow:
                    return Draft(follow, source="lookup")
            for index, source in ((self._written, "written"), (self._instruction, "instruction")):
                follow = index.follow(key, limit(source)) if index.has(key) else []
                if follow:
                    return Draft(follow, source=source)
        return None


__all__ = ["Draft", "DraftConfig", "Drafter"]
