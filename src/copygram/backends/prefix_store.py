"""Recent prompts' KV kept beside the live cache: a bounded store of snapshots.

A backend holds one KV cache, and a prompt reuses the prefix it shares with what that cache
holds (:func:`copygram.decode.forwards.prefill`). Where edits alternate between prompts that
share little (mode ``"auto"`` redoing a program in rewrite mode: two system prompts; ``copygram
serve`` editing two files in turn with ``prompt_order = "document_first"``), each prompt
evicts the other's prefix and the next edit computes it again. A :class:`PrefixStore` keeps
snapshots of the prompts the live cache held (only when one is about to be cut, so an edit that
reuses the live cache costs nothing) and, before a prompt is computed, restores the snapshot
that shares the longest prefix with it, where that is longer than what the live cache shares.

Cost: a snapshot copies the KV of its tokens into host memory, and a restore copies it back:
for Qwen2.5-Coder-1.5B (28 layers, 2 KV heads of 128, f16) 28 KiB a token, a memcpy of
~100 MB for a 3,500-token prompt (tens of milliseconds), against the seconds that computing the
same prefix again costs on a CPU. The store keeps at most ``max_bytes`` (the config's
``prefix_cache_mb``), least recently used first out; a snapshot whose tokens are a prefix of a
newer one's is dropped (the newer one serves every prompt it would).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["KVSnapshot", "PrefixStore", "Snapshots", "shared_prefix"]


@dataclass(frozen=True, eq=False)
class KVSnapshot:
    """The KV of the token ``ids`` as a backend keeps it outside its cache (``data``: the
    backend's own; ``nbytes`` of host memory)."""

    ids: tuple[int, ...]
    data: object
    nbytes: int


@runtime_checkable
class Snapshots(Protocol):
    """A backend whose cache can be copied out and back (llama.cpp; the scripted test
    backends). ``prefix_store``: its store, ``None`` where the config turned it off."""

    prefix_store: PrefixStore | None

    def snapshot(self) -> KVSnapshot:
        """The KV of every cached token, copied out (the cache is unchanged)."""
        ...

    def restore(self, snapshot: KVSnapshot) -> None:
        """The cache as ``snapshot`` holds it (whatever it held before is dropped)."""
        ...

    def truncate(self, n_tokens: int) -> None: ...


def shared_prefix(a: Sequence[int], b: Sequence[int], limit: int | None = None) -> int:
    """How many leading tokens ``a`` and ``b`` share (at most ``limit``). Vectorised: ~1 us
    per thousand tokens."""
    size = min(len(a), len(b), len(a) if limit is None else limit)
    if size <= 0:
        return 0
    differ = np.flatnonzero(np.asarray(a[:size]) != np.asarray(b[:size]))
    return int(differ[0]) if len(differ) else size


class PrefixStore:
    """Snapshots of recent prompts, at most ``max_bytes`` of them (module doc)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[int, ...], KVSnapshot] = OrderedDict()
        self._last: tuple[int, ...] = ()  # the prompt the live cache was last filled with

    @property
    def nbytes(self) -> int:
        return sum(entry.nbytes for entry in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every snapshot (a benchmark's cold start)."""
        self._entries.clear()
        self._last = ()

    def best(self, prompt: Sequence[int], beyond: int) -> tuple[KVSnapshot, int] | None:
        """The snapshot that shares the most leading tokens with ``prompt``, and how many, where
        that is more than ``beyond``; ``None`` otherwise. Linear in the entries' tokens."""
        found: tuple[KVSnapshot, int] | None = None
        for entry in self._entries.values():
            shared = shared_prefix(entry.ids, prompt)
            if shared > (beyond if found is None else found[1]):
                found = (entry, shared)
        if found is not None:
            self._entries.move_to_end(found[0].ids)
        return found

    def add(self, snapshot: KVSnapshot) -> None:
        """Keep ``snapshot``: entries it extends go, then the least recently used until the
        store fits. One larger than the whole store is not kept."""
        if snapshot.nbytes > self.max_bytes or not snapshot.ids:
            return
        for ids in [ids for ids in self._entries
                    if len(ids) <= len(snapshot.ids) and snapshot.ids[:len(ids)] == ids]:
            del self._entries[ids]
        self._entries[snapshot.ids] = snapshot
        while self.nbytes > self.max_bytes:
            self._entries.popitem(last=False)

    def holds(self, ids: Sequence[int]) -> bool:
        """Whether a snapshot holds ``ids`` (or more after them)."""
        key = tuple(ids)
        return any(entry[:len(key)] == key for entry in self._entries)

    def reuse(self, backend: Snapshots, cached: Sequence[int], prompt: Sequence[int],
              shared: int) -> int:
        """Before ``prompt`` is computed on ``backend``, whose cache holds ``cached`` and shares
        ``shared`` leading tokens with it: keep the live cache's last prompt where the new one
        would cut it, and restore the snapshot that shares more with ``prompt``, if one does.
        Returns the tokens the cache now shares with ``prompt`` (the caller truncates to them
        and computes the rest), at most ``len(prompt) - 1`` (the last is computed for its
        logits)."""
        last = self._last
        if (last and shared < len(last) and len(cached) >= len(last)
                and shared_prefix(cached, last) == len(last) and not self.holds(last)):
            backend.truncate(len(last))  # what came after the prompt (an edit's output) goes
            self.add(backend.snapshot())
        found = self.best(prompt[: len(prompt) - 1], shared)
        if found is not None:
            backend.restore(found[0])
            shared = found[1]
        return shared

    def prompted(self, prompt: Sequence[int]) -> None:
        """Note that the live cache now holds ``prompt`` (and what the run appends)."""
        self._last = tuple(prompt)
