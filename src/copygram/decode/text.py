"""The output text of a run as its events release it (:mod:`copygram.decode.events`): decoded
from the tokens' bytes as they are consumed, and held back while it ends inside a UTF-8
character or while its end could still begin a stop string."""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence

LineEnd = Callable[[str], bool]
"""A plain-text run's end rule, one per run: called with each complete output line (its line
break included), in order; ``True`` ends the output after that line (rewrite mode: the line
that closes the file's fence, :func:`copygram.decode.rewrite.file_end`)."""


class OutputText:
    """The output of one run, token by token. :meth:`push` takes a token's bytes, :meth:`take`
    returns the text made final since the last call, :meth:`rewind` takes bytes back (a
    retracted program tail), :meth:`finish` releases the rest. O(token) per push, plus a scan of
    the held-back tail per stop string. ``end``: a :data:`LineEnd`, asked about each line as
    it is released; where it says so the output ends after that line, like a stop string that
    keeps its text (``stopped``; the rest of the token's text is dropped from :attr:`text`,
    kept in the raw output)."""

    def __init__(self, token_bytes: Sequence[bytes], stop: Sequence[str] = (),
                 end: LineEnd | None = None) -> None:
        self._token_bytes = token_bytes
        self._end = end
        self._line = ""  # released text after the last line break (the end rule's)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stop = [s for s in stop if s]
        self._longest_stop = max(map(len, self._stop), default=1)
        self._data = bytearray()  # every byte consumed: the raw output
        self._released: list[str] = []
        self._pending = ""  # decoded, not released: a possible stop-string prefix
        self._new = ""  # released, not yet taken by an event
        self.stopped = False

    @property
    def n_bytes(self) -> int:
        """Bytes consumed so far."""
        return len(self._data)

    def push(self, token: int) -> bool:
        """Take the next token; whether the output now holds a stop string (it ends there)."""
        data = self._token_bytes[token]
        self._data += data
        if not self.stopped:
            self._settle(self._decoder.decode(data))
        return self.stopped

    def _settle(self, piece: str, final: bool = False) -> None:
        text = self._pending + piece
        # A stop string never starts in released text: the longest suffix that could begin
        # one is always held back, so searching the pending text finds the first occurrence.
        hits = [at for s in self._stop if (at := text.find(s)) >= 0]
        if hits:
            self._release(text[: min(hits)])
            self._pending, self.stopped = "", True
            return
        hold = 0
        if not final and self._stop:
            for size in range(min(len(text), self._longest_stop - 1), 0, -1):
                if any(s.startswith(text[-size:]) for s in self._stop):
                    hold = size
                    break
        self._release(text[: len(text) - hold])
        self._pending = "" if self.stopped else text[len(text) - hold :]

    def _release(self, text: str) -> None:
        if self._end is not None:
            text = self._until_end(text, self._end)
        self._released.append(text)
        self._new += text

    def _until_end(self, text: str, end: LineEnd) -> str:
        """``text`` up to the line break after which ``end`` ends the output (then
        ``stopped``), else all of it."""
        start = 0
        while (brk := text.find("\n", start)) >= 0:
            line, self._line, start = self._line + text[start:brk + 1], "", brk + 1
            if end(line):
                self.stopped = True
                return text[:start]
        self._line += text[start:]
        return text

    def take(self) -> str:
        """The text released since the last call."""
        new, self._new = self._new, ""
        return new

    def rewind(self, n_bytes: int) -> int:
        """Keep the first ``n_bytes`` bytes only (no stop strings or end rule: program text).
        Returns where the text released now ends, in bytes: ``n_bytes``, or the start of the
        character that byte ``n_bytes`` cuts (its bytes kept, released once complete).
        O(output)."""
        del self._data[n_bytes:]
        self._decoder.reset()
        text = self._decoder.decode(bytes(self._data))
        self._released, self._pending, self._new = [text], "", ""
        return n_bytes - len(self._decoder.getstate()[0])

    def finish(self) -> tuple[str, str]:
        """The raw output and the output text (cut at a stop string), all pending text
        released (for :meth:`take`)."""
        if not self.stopped:
            self._settle(self._decoder.decode(b"", final=True), final=True)
        return self._data.decode("utf-8", errors="replace"), "".join(self._released)


__all__ = ["OutputText"]
