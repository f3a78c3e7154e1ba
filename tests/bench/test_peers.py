"""The peers' greedy runs (:mod:`copygram.bench.peers`): stopping, forward counting and recovery
over fake llama-cpp-python and Transformers models, and the lookup peer on the real default
model."""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import pytest

from copygram.backends.base import Backend
from copygram.bench import peers
from copygram.bench.peers import llama_greedy, lookup_generator
from copygram.config import BackendConfig
from copygram.errors import BackendError
from copygram.testing import EOS, ScriptedBackend

EOS_IDS = frozenset({EOS})


class FakeLlama:
    """What ``llama_greedy`` uses of ``llama_cpp.Llama``: ``generate`` yields ``reply`` then EOS,
    calling ``self.eval`` once for the prompt and once per ``per_forward`` tokens after it, as
    prompt lookup does when drafts are accepted."""

    def __init__(self, reply: Sequence[int], per_forward: int = 1, ctx: int = 1000) -> None:
        self.reply, self.per_forward, self.ctx = list(reply), per_forward, ctx
        self.evaluated: list[int] = []  # tokens per eval call
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def n_ctx(self) -> int:
        return self.ctx

    def eval(self, tokens: Sequence[int]) -> None:
        self.evaluated.append(len(tokens))

    def generate(self, tokens: Sequence[int], **_: object) -> Generator[int, None, None]:
        self.eval(tokens)
        for index, token in enumerate([*self.reply, EOS]):
            yield token
            if index % self.per_forward == self.per_forward - 1:
                self.eval([token])


def test_llama_greedy_stops_and_counts_forwards() -> None:
    llm = FakeLlama([1, 2, 3, 4, 5, 6], per_forward=3)
    run = llama_greedy(llm, [7, 8], 100, EOS_IDS)
    assert (run.tokens, run.stop, run.forwards) == ([1, 2, 3, 4, 5, 6], "eos", 2)
    assert run.gen_seconds == run.seconds  # from the token the prompt's forward gave
    assert llm.resets == 1 and "eval" not in vars(llm)  # its own eval is back
    run = llama_greedy(llm, [7, 8], 4, EOS_IDS, reuse_prefix=True)
    assert (run.tokens, run.stop) == ([1, 2, 3, 4], "budget") and llm.resets == 1
    # Stopped where the baseline stops: once prompt and output exceed the context.
    run = llama_greedy(FakeLlama([1] * 10, ctx=5), [7, 8], 100, EOS_IDS)
    assert (len(run.tokens), run.stop) == (4, "context")
    # And where the baseline ends a rewrite: after the token that closes the file's fence.
    run = llama_greedy(llm, [7, 8], 100, EOS_IDS, closes=lambda token: token == 3)
    assert (run.tokens, run.stop) == ([1, 2, 3], "stop")


def test_llama_lookup_is_rebuilt_after_a_failed_run(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(FakeLlama):
        def generate(self, tokens: Sequence[int], **_: object) -> Generator[int, None, None]:
            raise ValueError("could not broadcast input array")
            yield 0

    built: list[Any] = []

    def llama_model(config: BackendConfig, n_ctx: int, lookup_k: int | None = None) -> Any:
        built.append((n_ctx, lookup_k))
        return Broken([]) if len(built) == 1 else FakeLlama([65, 66])

    monkeypatch.setattr(peers, "llama_model", llama_model)
    generate = lookup_generator(ScriptedBackend(context_length=300), BackendConfig(), k=10)
    with pytest.raises(BackendError, match="prompt lookup failed"):
        generate([1, 2], 10)
    run = generate([1, 2], 10)  # the broken instance was replaced
    assert (run.tokens, run.stop) == ([65, 66], "eos")
    assert built == [(300, 10), (300, 10)]


@pytest.mark.transformers
def test_hf_greedy_cuts_at_eos_and_counts_forwards() -> None:
    import torch

    from copygram.bench.peers import hf_greedy

    class FakeModel(torch.nn.Module):
        """``generate`` appends ``reply`` in ``forwards`` model calls after the prompt's."""

        def __init__(self, reply: list[int], forwards: int) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(1))
            self.reply, self.forwards = reply, forwards
            self.kwargs: dict[str, object] = {}

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return ids

        def generate(self, ids: torch.Tensor, **kwargs: Any) -> torch.Tensor:
            self.kwargs = kwargs
            for _ in range(self.forwards + 1):
                self(ids)
            new = torch.tensor([self.reply[: kwargs["max_new_tokens"]]])
            return torch.cat([ids, new], dim=1)

    model = FakeModel([5, 6, EOS, EOS], forwards=2)
    run = hf_greedy(model, [1, 2, 3], 10, EOS_IDS, lookup=10)
    assert (run.tokens, run.stop, run.forwards) == ([5, 6], "eos", 2)
    # Generation is timed from the end of the prompt's forward, the first one.
    assert run.gen_seconds is not None and 0 <= run.gen_seconds <= run.seconds
    assert model.kwargs["prompt_lookup_num_tokens"] == 10
    assert model.kwargs["do_sample"] is False
    assert hf_greedy(model, [1], 1, EOS_IDS).tokens == [5] and "prompt_lookup_num_tokens" \
        not in model.kwargs
    assert hf_greedy(FakeModel([5, 6, 7], 0), [1], 3, EOS_IDS).stop == "budget"


@pytest.mark.transformers
def test_hf_greedy_ends_after_the_token_closes_names() -> None:
    # The lookup peer ends where the rewrite baseline ends (a rewrite's closing fence), though
    # a draft accepted in one forward may run past that token: those tokens are cut.
    from copygram.backends import load
    from copygram.bench.peers import _hf_model, hf_greedy

    config = BackendConfig(backend="transformers", model="smollm2-135m", n_ctx=512)
    try:
        backend = load(config)
    except BackendError as exc:
        pytest.skip(f"no SmolLM2 on Transformers: {exc}")
    model = _hf_model(config)
    prompt = backend.tokenize("def f(x):\n    return x + 1\n\n\ndef f(x):\n    return x")

    def fifth() -> Callable[[int], bool]:
        seen: list[int] = []

        def closes(token: int) -> bool:
            seen.append(token)
            return len(seen) == 5

        return closes

    for lookup in (None, 10):
        whole = hf_greedy(model, prompt, 24, backend.eos_token_ids, lookup)
        assert len(whole.tokens) > 6
        run = hf_greedy(model, prompt, 24, backend.eos_token_ids, lookup, fifth())
        assert (run.tokens, run.stop) == (whole.tokens[:5], "stop")


def default_model(n_ctx: int) -> tuple[Backend, BackendConfig]:
    """The default model on llama.cpp, one thread, or a skip where it is not installed."""
    from copygram.backends import load

    config = BackendConfig(backend="llamacpp", n_ctx=n_ctx, n_threads=1)
    try:
        return load(config), config
    except BackendError as exc:
        pytest.skip(f"no default model: {exc}")


@pytest.mark.llamacpp
def test_lookup_peer_on_the_default_model() -> None:
    from copygram.bench.data import EditRow
    from copygram.bench.quality import LookupPeer, evaluate_row, rewrite_request

    backend, config = default_model(1024)
    document = "def add(a, b):\n    return a - b\n"
    row = EditRow("quixbugs_python", "add", document, document.replace("-", "+"),
                  instruction="Fix the bug in add.", lang="python", meta={})
    peer = LookupPeer(backend, lookup_generator(backend, config), max_new_tokens=24)
    quality, (text, stats, error) = evaluate_row(row, "lookup", peer)
    assert error is None and quality.valid and text is not None
    assert 0 < quality.decoded_tokens <= 24 and stats["budget"] == 24
    assert stats["prompt_tokens"] == len(rewrite_request(backend, document, row.instruction)[0])
    assert 0 < quality.forwards <= quality.decoded_tokens


@pytest.mark.llamacpp
def test_lookup_peer_takes_a_prompt_longer_than_a_batch() -> None:
    # llama-cpp-python sizes its score buffer by n_batch (512) unless logits_all is passed,
    # though a draft model writes every position's logits: a longer prompt used to fail.
    backend, config = default_model(2048)
    generate = lookup_generator(backend, config)
    prompt = list(range(100, 700))  # 600 tokens, over the 512 of one batch
    run = generate(prompt, 8)
    assert 0 < len(run.tokens) <= 8 and run.stop in ("eos", "budget")


@pytest.mark.llamacpp
def test_the_llama_peer_reuses_no_more_of_its_cache_than_it_is_told() -> None:
    # bench quality --repeats primes the peer before every run: a run after keep_prefix(n)
    # starts from n cached tokens, whatever the last run left, and so repeats the same batches.
    backend, config = default_model(1024)
    generate = lookup_generator(backend, config)
    llm = generate.llm  # type: ignore[attr-defined]
    prompt = backend.tokenize("def add(a, b):\n    return a - b\n\n# Fix the bug in add.\n")
    generate(prompt, 6)
    assert llm.n_tokens > len(prompt)  # the prompt and the output stay cached
    generate.keep_prefix(10 ** 6)
    assert llm.n_tokens > len(prompt)  # never more than is cached
    runs = []
    for _ in range(2):
        generate.keep_prefix(4)
        assert llm.n_tokens == 4
        runs.append(generate(prompt, 6).tokens)
    assert runs[0] == runs[1] and 0 < len(runs[0]) <= 6
