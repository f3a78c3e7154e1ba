"""Drafts from a prediction of the output, aligned by lines: rewrite mode's draft source.

The prediction is text the output is expected to resemble: the document a model rewrites, or any
text a caller expects (OpenAI's Predicted Outputs). It is tokenized once. As the output grows,
:class:`PredictionDrafter` tracks the prediction line that the current output line should match
(the *anchor*): a finished output line equal to it moves the anchor past it; one that differs is
looked for further on, as a line diff would match it (a line of two or fewer non-blank characters,
``}`` or a blank line, only close by), and where it is found the anchor moves past that line; a
line found nowhere is a changed line (the anchor moves past the old one when the two are alike)
or an inserted one (the anchor stays).

Per call it drafts, in this order:

* ``"line"``: the rest of the anchored prediction line from where the output line stands, and the
  prediction lines after it, when that line starts like the output line (or, failing that, the
  nearest of the next few lines that does);
* ``"rejoin"``: the same at the start of a line after one that was not the anchored line (a
  changed, inserted or re-anchored line, or prose): a guess that the output returns to the
  prediction there, right far less often than a line draft that goes on from a kept line (on
  the Transformers dev outputs, 3 of 74 started right, against 59 of 84 line drafts), so it has
  a rate of its own (a line's drafts stay long while rejoins shrink) and competes with the
  lookups as a resync does;
* ``"resync"``: inside a changed line, the rest of the old line after the last few characters the
  output shares with it (an edit in the middle of a line keeps its end);
* ``"lookup"``: prompt-lookup over the prediction's tokens (:mod:`~copygram.decode.drafting.ngram`),
  the match nearest the anchor first;
* ``"echo"``: prompt-lookup over the output written so far (what followed the same n-gram
  earlier in the output), as prompt-lookup decoding searches the prompt and then the output: an
  output repeats itself (a pattern written again, a model that loops) where the prediction has
  nothing;
* ``"prompt"``: prompt-lookup over the prompt's tokens (``context``: the instruction, the chat
  template, the examples), as prompt-lookup decoding searches the whole prompt: a model that
  explains its edit repeats the instruction's words, which the prediction may not hold;
* of these three lookups, the longest n-gram that any of them holds decides, and where more
  than one holds it, the source whose drafts have started right most often in this edit
  (:meth:`DraftSizer.acceptance`; on a tie, the order above);
* a ``"line"`` draft goes first; a ``"rejoin"`` or ``"resync"`` draft competes with the
  lookups' the same way (on a tie, the rejoin or resync): these guess from a few characters or
  tokens, and on an output that is not a copy (a model that explains its edit) the old line's
  resync is most often wrong;
* no prediction draft past the prediction's last line at the start of an output line (the output
  is most likely ending), only an echo or the prompt.

Drafts start at a byte offset of the prediction; where that offset is a token boundary of the
prediction's tokenization, the draft is the prediction's own tokens from there, else the text from
there is tokenized (cached, a bounded stretch with its last token dropped, so that the cut never
changes how the first tokens split). Each source's draft length comes from
:class:`~copygram.decode.drafting.length.DraftSizer` over the backend's fixed ``BatchProfile``: it
depends only on the tokens, never on timings.
"""

from __future__ import annotations

import difflib
import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from copygram.decode.drafting.drafter import Draft, DraftConfig
from copygram.decode.drafting.length import DraftSizer
from copygram.decode.drafting.ngram import DocumentIndex, NgramIndex

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile


def _lines(data: bytes) -> list[bytes]:
    """``data`` split after every ``\\n`` (a line keeps its ending; the last may have none)."""
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    return out + [lines[-1]] if lines[-1] else out


def _alike(a: bytes, b: bytes) -> bool:
    """Whether ``a`` reads as an edited ``b`` (rather than a new line): half their characters
    or more in common, blanks aside."""
    a, b = a.strip()[:200], b.strip()[:200]
    if not a or not b:
        return a == b
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.5


class PredictionDrafter:
    """Line-aligned drafts from ``prediction`` for one generation (module doc)."""

    WINDOW = 32  # lines past the anchor searched for one that starts like the output line
    NEAR = 2  # how far ahead a trivial line (<= 2 non-blank characters) may re-anchor
    SNIPPET = 8  # bytes per draft token tokenized where a draft starts off a token boundary
    # A rewrite keeps most of its file (74-98% of an edit's output is copied): the anchored line
    # is believed right 9 times in 10 before this edit says otherwise (Qwen2.5-Coder-1.5B kept
    # 88% of the drafted tokens on the 30 dev rows). The even prior the other sources start from
    # leaves a cold start of 7 single-token steps and a slow ramp on llama.cpp, whose batched
    # tokens cost ~0.5 of a step: 16 forwards for a 140-token file drafted whole, against 5.
    PRIORS: ClassVar[Mapping[str, tuple[int, int]]] = {"line": (9, 1)}
    # The lookups' drafts go on once they start right (the output repeats the matched text) or
    # fail at once: sized with a first-token and a continuation rate (DraftLength).
    RUNS: ClassVar[tuple[str, ...]] = ("lookup", "echo", "prompt")

    def __init__(self, prediction: str, tokenize: Callable[[str], list[int]],
                 token_bytes: Sequence[bytes], config: DraftConfig,
                 profile: BatchProfile | None = None, context: Sequence[int] = ()) -> None:
        self.config = config
        self._tokenize = tokenize
        self._token_bytes = token_bytes
        self._tokens = tokenize(prediction) if prediction else []
        # The prediction as its tokens spell it (a tokenizer may drop a control character).
        self._data = b"".join(token_bytes[t] for t in self._tokens)
        ends = list(itertools.accumulate(len(token_bytes[t]) for t in self._tokens))
        self._ends = ends
        self._boundary: dict[int, int] = {0: 0}
        for index, end in enumerate(ends):
            self._boundary.setdefault(end, index + 1)
        self._lines = _lines(self._data)
        self._starts = [0, *itertools.accumulate(len(line) for line in self._lines)]
        self._where: dict[bytes, list[int]] = {}
        for index, line in enumerate(self._lines):
            self._where.setdefault(line, []).append(index)
        self._index = DocumentIndex(self._tokens, [], token_bytes, config.max_ngram)
        self._history = NgramIndex(config.max_ngram)  # the output so far, for echo drafts
        self._context = NgramIndex(config.max_ngram)  # the prompt, for prompt drafts
        self._context.extend(context)
        # Forwards cost more at a long context: priced halfway through the prediction.
        at = None if profile is None else profile.at_context(len(context) + len(self._tokens) // 2)
        self.sizer = DraftSizer(config.max_tokens, at, config.adaptive, self.PRIORS, self.RUNS)
        self.anchor = 0  # the prediction line the current output line should match
        # Whether the last finished output line was the anchored prediction line itself: a line
        # drafted at the start of the next one is then a continuation, else a guess (rejoin).
        self._in_step = True
        self._line = bytearray()  # the current (unfinished) output line
        self._seen = 0  # output tokens taken in
        self._snippets: dict[int, list[int]] = {}

    # -- following the output -------------------------------------------------------------------

    def _take(self, output: Sequence[int]) -> None:
        self._history.extend(output[self._seen :])
        for token in output[self._seen :]:
            data = self._token_bytes[token]
            while (cut := data.find(b"\n")) >= 0:
                self._line += data[: cut + 1]
                self._finish(bytes(self._line))
                self._line = bytearray()
                data = data[cut + 1 :]
            self._line += data
        self._seen = len(output)

    def _finish(self, line: bytes) -> None:
        """An output line is complete: move the anchor as a line diff would."""
        a, n = self.anchor, len(self._lines)
        self._in_step = a < n and self._lines[a] == line
        if self._in_step:
            self.anchor = a + 1
            return
        found = self._where.get(line, [])
        trivial = len(line.strip()) <= 2
        at = bisect_right(found, a)
        if at < len(found) and (not trivial or found[at] - a <= self.NEAR):
            self.anchor = found[at] + 1
            return
        if at > 0 and not trivial:  # an earlier line again (an alignment skipped too far)
            self.anchor = found[at - 1] + 1
            return
        if a < n and _alike(line, self._lines[a]):
            self.anchor = a + 1  # a changed line; else an inserted one: the anchor waits

    # -- drafting -------------------------------------------------------------------------------

    def propose(self, output: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing ``output`` (every token generated so far); ``feed``: tokens the
        verifying forward appends before it."""
        if not self.config.max_tokens:
            return None
        self._take(output)
        if not self._tokens:
            return self._lookup(output, prediction=False)
        self.sizer.feed = feed
        located = self._locate()
        draft = self._from(*located) if located is not None else None
        if draft is not None and draft.source == "line":
            return draft
        ending = self.anchor >= len(self._lines) and not self._line
        # Past the prediction's last line the output is most likely ending: only an echo of
        # the output itself is worth a draft there.
        lookup = self._lookup(output, prediction=not ending)
        if draft is None or lookup is None:
            return draft or lookup
        # A resync guesses from a few characters, as a lookup does from a few tokens: the one
        # whose drafts started right more often in this edit (ties: the resync).
        return max((draft, lookup), key=lambda d: self.sizer.acceptance(d.source))

    def _locate(self) -> tuple[int, str] | None:
        """Where in the prediction the output goes on, in bytes, and the hypothesis."""
        line, a, n = bytes(self._line), self.anchor, len(self._lines)
        if a < n and self._lines[a].startswith(line):
            return self._starts[a] + len(line), "line" if line or self._in_step else "rejoin"
        if line:
            for c in range(a + 1, min(n, a + self.WINDOW)):
                if self._lines[c].startswith(line):
                    return self._starts[c] + len(line), "line"
        if a < n:
            old = self._lines[a]
            for size in (6, 3):
                if len(line) >= size:
                    # The occurrence nearest to where the output line stands.
                    key, best = line[-size:], None
                    at = old.find(key)
                    while at >= 0:
                        if best is None or abs(at + size - len(line)) < abs(best - len(line)):
                            best = at + size
                        at = old.find(key, at + 1)
                    if best is not None and best < len(old):
                        return self._starts[a] + best, "resync"
        return None

    def _from(self, start: int, source: str) -> Draft | None:
        limit = self.sizer.limit(source)
        if limit == 0:
            return None
        index = self._boundary.get(start)
        tokens = (self._tokens[index : index + limit] if index is not None
                  else self._snippet(start)[:limit])
        return Draft(tokens, source=source) if tokens else None

    def _snippet(self, start: int) -> list[int]:
        """The prediction from byte ``start`` (off a token boundary), tokenized: a stretch long
        enough for any draft, its last token dropped unless it reaches the end."""
        if start not in self._snippets:
            end = start + self.SNIPPET * max(1, self.config.max_tokens)
            piece = self._data[start:end]
            tokens: list[int] = []
            if piece and (piece[0] & 0xC0) != 0x80:  # not inside a UTF-8 character
                tokens = self._tokenize(piece.decode("utf-8", errors="ignore"))
                if end < len(self._data):
                    tokens = tokens[:-1]
            self._snippets[start] = tokens
        return self._snippets[start]

    def _lookup(self, output: Sequence[int], prediction: bool = True) -> Draft | None:
        """What follows the longest recent n-gram of ``output`` in the prediction (the match
        at or after the anchor line first; skipped unless ``prediction``), else earlier in the
        output itself, else in the prompt."""
        line_start = self._starts[min(self.anchor, len(self._lines))]
        preferred = bisect_left(self._ends, line_start + 1) if line_start else 0
        limits: dict[str, int] = {}

        def limit(source: str) -> int:
            if source not in limits:  # asked once per call: asking counts towards probes
                limits[source] = self.sizer.limit(source)
            return limits[source]

        for size in range(min(self.config.max_ngram, len(output)), 0, -1):
            key = tuple(output[-size:])
            found: list[Draft] = []
            if prediction and self._index.has(key) and limit("lookup"):
                found.append(Draft(self._index.follow(key, preferred, limit("lookup")),
                                   source="lookup"))
            if self._history.has(key) and limit("echo"):
                found.append(Draft(self._history.follow(key, limit("echo")), source="echo"))
            if self._context.has(key) and limit("prompt"):
                found.append(Draft(self._context.follow(key, limit("prompt")), source="prompt"))
            found = [draft for draft in found if draft.tokens]
            if found:
                # The source whose drafts this edit has kept most (ties: the order above).
                return max(found, key=lambda draft: self.sizer.acceptance(draft.source))
        return None

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        """Plain text closes no copy: never."""
        return False

    def feedback(self, draft: Draft, accepted: int) -> None:
        self.sizer.feedback(draft.source, len(draft.tokens), accepted)


__all__ = ["PredictionDrafter"]
