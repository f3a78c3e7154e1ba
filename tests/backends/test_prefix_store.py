"""Snapshots of recent prompts beside the live cache (copygram.backends.prefix_store): the store
keeps what fits and serves the longest shared prefix, and a prefill through it computes what a
prefill without it computes, never more tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copygram.backends.prefix_store import KVSnapshot, PrefixStore, Snapshots, shared_prefix
from copygram.decode.forwards import prefill


def snap(ids: Sequence[int], nbytes: int | None = None) -> KVSnapshot:
    return KVSnapshot(tuple(ids), None, len(ids) if nbytes is None else nbytes)


def test_the_store_serves_the_snapshot_that_shares_the_most() -> None:
    store = PrefixStore(100)
    store.add(snap([1, 2, 3, 4]))
    store.add(snap([1, 2, 9, 9, 9]))
    found = store.best([1, 2, 9, 9, 5], beyond=2)
    assert found is not None and found[0].ids == (1, 2, 9, 9, 9) and found[1] == 4
    assert store.best([1, 2, 9, 9, 5], beyond=4) is None  # not more than the live cache shares
    assert store.best([7], beyond=0) is None


def test_the_store_keeps_what_fits_least_recently_used_out() -> None:
    store = PrefixStore(10)
    store.add(snap([1, 1, 1, 1]))
    store.add(snap([2, 2, 2, 2]))
    assert store.best([1, 1], beyond=0) is not None  # [1...] is now the most recently used
    store.add(snap([3, 3, 3, 3]))
    assert store.nbytes <= 10 and len(store) == 2
    assert store.best([2, 2], beyond=0) is None and store.best([1, 1], beyond=0) is not None
    store.add(snap(range(20)))  # larger than the whole store: not kept
    assert len(store) == 2
    store.add(snap([1, 1, 1, 1, 5]))  # extends [1, 1, 1, 1]: that one goes
    assert len(store) == 2 and store.holds([1, 1, 1, 1]) and not store.holds([1, 1, 1, 2])


@given(st.lists(st.integers(0, 3), max_size=30), st.lists(st.integers(0, 3), max_size=30),
       st.none() | st.integers(0, 40))
def test_shared_prefix_counts_the_leading_tokens_two_lists_share(
        a: list[int], b: list[int], limit: int | None) -> None:
    count = 0
    while count < min(len(a), len(b)) and a[count] == b[count]:
        count += 1
    assert shared_prefix(a, b, limit) == (count if limit is None else min(count, limit))


@dataclass
class HashBackend:
    """A backend whose logits after a token are a function of every cached token (as a model's
    are), with snapshots; it counts the tokens it computes."""

    prefix_store: PrefixStore | None = None
    cache: list[int] = field(default_factory=list)
    computed: int = 0

    @property
    def cached_ids(self) -> list[int]:
        return list(self.cache)

    def splice(self, ids: Sequence[int]) -> np.ndarray:
        self.cache.extend(ids)
        self.computed += len(ids)
        return np.array([hash(tuple(self.cache))], dtype=np.float64)

    def truncate(self, n_tokens: int) -> None:
        del self.cache[n_tokens:]

    def snapshot(self) -> KVSnapshot:
        return snap(self.cache)

    def restore(self, snapshot: KVSnapshot) -> None:
        self.cache = list(snapshot.ids)


_prompts = st.lists(st.sampled_from([0, 1, 2]).flatmap(
    lambda head: st.lists(st.integers(0, 2), min_size=1, max_size=12).map(
        lambda tail: [head] * 6 + tail)), min_size=1, max_size=8)


@given(_prompts, st.lists(st.integers(0, 5), min_size=8, max_size=8), st.integers(0, 40))
def test_a_prefill_through_the_store_computes_the_same_and_never_more(
        prompts: list[list[int]], outputs: list[int], budget: int) -> None:
    with_store, live = HashBackend(PrefixStore(budget)), HashBackend()
    assert isinstance(with_store, Snapshots)
    for prompt, output in zip(prompts, outputs, strict=False):
        got, spliced = prefill(with_store, prompt)  # type: ignore[arg-type]
        want, spliced_live = prefill(live, prompt)  # type: ignore[arg-type]
        assert got == want and with_store.cache == prompt and spliced <= spliced_live
        assert with_store.prefix_store is not None and with_store.prefix_store.nbytes <= budget
        for backend in (with_store, live):  # an edit's output after its prompt
            backend.splice([9] * output)
    assert with_store.computed <= live.computed


def test_two_prompts_in_turn_each_start_from_their_own_snapshot() -> None:
    store_backend = HashBackend(PrefixStore(1000))
    first, second = [1] * 50 + [5], [2] * 50 + [6]
    spliced = []
    for prompt in (first, second, [*first[:-1], 7], [*second[:-1], 8]):
        spliced.append(prefill(store_backend, prompt)[1])  # type: ignore[arg-type]
        store_backend.splice([9, 9, 9])  # the edit's output, never kept in a snapshot
    assert spliced == [51, 51, 1, 1]
    assert store_backend.prefix_store is not None
    assert all(9 not in ids for ids in store_backend.prefix_store._entries)
