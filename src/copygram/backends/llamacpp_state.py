"""llama.cpp's KV cache copied out and back: the :class:`~copygram.backends.prefix_store.Snapshots`
half of :class:`~copygram.backends.llamacpp.LlamaCppBackend`, through sequence 0's state
(``llama_state_seq_get_data`` / ``llama_state_seq_set_data``: the KV cells of the sequence, no
logits). A restored prefix's KV is the bytes computed for it, so what follows it is computed
exactly as after the same prefix spliced again."""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt

from copygram.backends.prefix_store import KVSnapshot, PrefixStore
from copygram.errors import BackendError

__all__ = ["SeqState"]


class SeqState:
    """Snapshots of sequence 0 (a mixin: the backend keeps its context in ``_ctx``, the cached
    ids in ``_ids`` and their count in ``_n``)."""

    _ctx: Any
    _ids: npt.NDArray[np.intc]
    _n: int
    prefix_store: PrefixStore | None = None

    def snapshot(self) -> KVSnapshot:
        """Copy the KV of every cached token out (~28 KiB a token for Qwen2.5-Coder-1.5B)."""
        size = llama_cpp.llama_state_seq_get_size(self._ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(self._ctx, buffer, size, 0)
        if self._n and not written:
            raise BackendError("llama.cpp could not copy the KV cache out")
        data = ctypes.string_at(buffer, written)
        return KVSnapshot(tuple(int(i) for i in self._ids[: self._n]), data, len(data))

    def restore(self, snapshot: KVSnapshot) -> None:
        """Replace the cache with ``snapshot``'s (a copy back in)."""
        data = snapshot.data
        if not isinstance(data, bytes):
            raise BackendError("not a llama.cpp snapshot: take it with this backend's snapshot()")
        memory = llama_cpp.llama_get_memory(self._ctx)
        llama_cpp.llama_memory_seq_rm(memory, 0, 0, -1)
        self._n = 0
        if not snapshot.ids:
            return
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if llama_cpp.llama_state_seq_set_data(self._ctx, buffer, len(data), 0) != len(data):
            llama_cpp.llama_memory_seq_rm(memory, 0, 0, -1)
            raise BackendError("llama.cpp could not restore a KV snapshot (a snapshot of "
                               "another model or context size?)")
        self._ids[: len(snapshot.ids)] = snapshot.ids
        self._n = len(snapshot.ids)
