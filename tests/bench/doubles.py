"""Test doubles shared by the benchmark tests."""

from __future__ import annotations

from collections.abc import Sequence

from copygram.testing import ScriptedBackend


class SplitPromptBackend(ScriptedBackend):
    """A :class:`ScriptedBackend` whose prompt ends at the end of the chat template's assistant
    header, however many forwards bring it. ScriptedBackend takes its first forward after a reset
    as the whole prompt, but the plain greedy baseline splices the prompt but its last token and
    then decodes that token alone (one token per forward, as a real model needs)."""

    def _append(self, kind: str, ids: Sequence[int]) -> None:
        in_prompt = self._in_prompt
        super()._append(kind, ids)
        header = self.tokenize(self.chat_prompt([]))
        # A worked example's turn carries the header too: only the prompt's end is its last.
        if in_prompt and self._cache[len(self._cache) - len(header):] != header:
            self._in_prompt = True  # the next forward still belongs to the prompt
