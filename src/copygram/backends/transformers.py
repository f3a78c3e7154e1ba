"""The transformers backend (torch + transformers 5.x): a GGUF file (dequantized on load) or any
Hugging Face causal-LM directory / hub name.

Loading SmolLM2-135M from its Q4_1 GGUF takes ~17 s on 2 CPU cores (tokenizer ~4 s, dequantizing
the weights ~13 s) and ~0.9 GB RSS: load once and keep the backend.

The KV cache is a ``DynamicCache``. ``splice`` runs one forward over the span with
``logits_to_keep=1``, so only the last position goes through the LM head (never N x vocab logits);
the only host sync is copying that row to the host. BOS: as in the llama.cpp backend, spans are
spliced without BOS and the chat prompt carries it when the tokenizer wants one.

On a CPU in float32 two changes make short forwards (a decode step, a draft verified, forced
markup appended: all of copygram's frequent ones) cheaper: linear layers compute up to 16
tokens as ``W @ x.T`` where that beats ``linear`` on this CPU (``use_small_batch_matmul``,
``cpu_routing``: from 1 token on an AMD CPU, ~1.7x cheaper; from 5 on an Intel one), and a
masked forward of several tokens lets SDPA share key/value heads instead of copying them
(``use_gqa_sdpa``; all three in :mod:`copygram.backends.torch_kernels`).
"""

from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from copygram.backends._common import (
    END_OF_TURN_TOKENS,
    cap_context,
    check_context,
    check_ids,
    model_source,
    output_rows,
    truncate_target,
    with_bos,
)
from copygram.backends.base import (
    TRANSFORMERS_CPU,
    TRANSFORMERS_CUDA,
    BatchProfile,
    Logits,
)
from copygram.backends.curves import config_costs, with_costs
from copygram.backends.torch_kernels import cpu_routing, use_gqa_sdpa, use_small_batch_matmul
from copygram.config import DEVICES, DTYPES, BackendConfig, check_choice
from copygram.errors import BackendError, missing_dependency
from copygram.host import cpu_info

try:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache
    from transformers.utils import logging as _hf_logging
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_dependency("transformers", "transformers") from exc

if TYPE_CHECKING:
    import llguidance

hf_logging: Any = _hf_logging  # its functions are untyped
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_device(device: str) -> str:
    """``"auto"`` -> ``"cuda"`` when a GPU is visible, else ``"cpu"``; ``"cuda"`` needs a GPU."""
    device = check_choice("device", device, DEVICES)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise BackendError(
            "device 'cuda' was requested but torch sees no CUDA GPU; use device 'cpu' or 'auto', "
            "or install a CUDA build of torch"
        )
    return device


def resolve_dtype(dtype: str, device: str) -> torch.dtype:
    """``"auto"`` -> float32 on CPU (bf16 matmuls are slow there), bfloat16 on CUDA."""
    dtype = check_choice("dtype", dtype, DTYPES)
    if dtype == "auto":
        return torch.bfloat16 if device == "cuda" else torch.float32
    return _DTYPES[dtype]


_CACHE_KEYWORDS: dict[type, str] = {}


def cache_keyword(model_type: type) -> str:
    """The keyword under which a model class's forward takes its KV cache: ``past_key_values``
    up to transformers 5.17, ``cache`` in 5.25. A forward that takes ``**kwargs`` swallows the
    other one without a word and starts from an empty cache, so it is read from the signature
    (once per class: microseconds)."""
    keyword = _CACHE_KEYWORDS.get(model_type)
    if keyword is None:
        forward = getattr(model_type, "forward", None)
        try:
            names = inspect.signature(forward).parameters if forward is not None else {}
        except (TypeError, ValueError):  # a builtin or wrapped callable: the current name
            names = {}
        keyword = ("past_key_values" if "past_key_values" in names and "cache" not in names
                   else "cache")
        _CACHE_KEYWORDS[model_type] = keyword
    return keyword


class TransformersBackend:
    """A transformers causal LM with a ``DynamicCache`` that copygram appends to and crops."""

    name = "transformers"

    @classmethod
    def from_config(cls, config: BackendConfig) -> TransformersBackend:
        """The backend a checked :class:`~copygram.config.BackendConfig` describes (a catalog
        model is fetched on first use; see :func:`copygram.catalog.resolve_model`)."""
        source = model_source(config)
        return cls(source, device=config.device, dtype=config.dtype, n_ctx=config.n_ctx,
                   n_threads=config.n_threads, costs=config_costs(config, "transformers", source))

    def __init__(
        self,
        model: str | Path,
        *,
        device: str = "auto",
        dtype: str = "auto",
        n_ctx: int | None = None,
        n_threads: int | None = None,
        costs: tuple[tuple[int, float], ...] | None = None,
    ) -> None:
        """Load ``model`` (a GGUF file, dequantized; or a Hugging Face folder or hub name) on
        ``device`` (``"auto"``: CUDA when torch sees a GPU). ``n_ctx``: a limit only, the cache
        grows as it fills; default ``max_position_embeddings`` up to 32768, capped there;
        ``n_threads``: torch's default unless given (set process-wide); ``costs``: forward
        costs measured on this machine (:mod:`~copygram.backends.curves`), which
        :attr:`batch_profile` then gives in place of the built-in curve."""
        self._costs = costs
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        if n_threads:
            torch.set_num_threads(n_threads)  # process-wide: torch has no per-model setting
        path = Path(model)
        if path.suffix.lower() == ".gguf":
            if not path.is_file():
                raise BackendError(
                    f"model file {path} does not exist; pass the path of a GGUF file"
                )
            source, kwargs = str(path.parent), {"gguf_file": path.name}
        else:
            source, kwargs = str(model), {}
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # the GGUF dequantization bars would flood the CLI
        auto_model: Any = AutoModelForCausalLM
        try:
            tokenizer: Any = AutoTokenizer.from_pretrained(source, **kwargs)
            # The GGUF dequantizer draws a tqdm bar on stderr that no transformers setting turns off.
            with contextlib.redirect_stderr(io.StringIO()):
                lm: Any = auto_model.from_pretrained(source, dtype=self.dtype, **kwargs)
        except (OSError, ValueError) as exc:
            raise BackendError(f"transformers could not load {model}: {exc}") from exc
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        self.tokenizer: Any = tokenizer
        self.model: Any = lm.to(self.device).eval()
        self._profile = TRANSFORMERS_CPU if self.device == "cpu" else TRANSFORMERS_CUDA
        if self.device == "cpu" and self.dtype == torch.float32:
            min_rows, self._profile = cpu_routing(cpu_info().vendor)
            use_small_batch_matmul(self.model, min_rows=min_rows)
            use_gqa_sdpa(self.model)
        # Priced once here: batch_profile is read on the decode path.
        self._profile = with_costs(self._profile, self._costs)
        self.model_path = path
        # The cache grows as it fills, so the cap needs no header read before the load.
        max_pos = getattr(self.model.config, "max_position_embeddings", None)
        self._n_ctx = cap_context(n_ctx, int(max_pos) if max_pos else None, path.name)
        self._n_vocab = int(self.model.get_output_embeddings().weight.shape[0])
        self.cache: Any = DynamicCache(config=self.model.config)
        self._n = 0
        self._ids: list[int] = []  # the token ids in the cache, for prefix reuse
        self._eos_ids = self._find_eos_ids()
        self._ll_tokenizer: llguidance.LLTokenizer | None = None
        self._token_bytes: list[bytes] | None = None
        self._check_prefix_counts()

    def _check_prefix_counts(self) -> None:
        """Raise :class:`~copygram.errors.BackendError` where what comes before a token does not
        change its logits: a cache kept but not attended to (seen with a transformers release
        the backend does not support) gives a plausible, wrong edit and no error. Four one-token
        forwards at load (milliseconds on a GPU, ~0.1 s for a 1.5B model on a CPU)."""
        # The prefix in a forward of its own: within one forward a token sees the others anyway.
        self.splice((0,))
        after_first = self.splice((2,))
        self.truncate(0)
        self.splice((1,))
        after_other = self.splice((2,))
        self.truncate(0)
        if np.array_equal(after_first, after_other):
            import transformers

            raise BackendError(
                f"with transformers {transformers.__version__} the model's logits after a token "
                "do not depend on the tokens before it (the KV cache is not attended to), so "
                "every edit would be wrong; copygram's Transformers backend needs the release "
                "its CI tests: pip install 'transformers>=5.25'")

    def describe(self) -> dict[str, object]:
        described: dict[str, object] = {
            "name": self.name, "model": self.model_path.name, "device": self.device,
            "dtype": str(self.dtype).removeprefix("torch."), "batch_invariant": False,
            "n_threads": torch.get_num_threads()}
        if self.device == "cuda":  # the machine a benchmark names is the GPU, not the host CPU
            described["accelerator"] = torch.cuda.get_device_name()
        return described

    # -- properties ----------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return self._n_vocab

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return self._eos_ids

    @property
    def eos_token_id(self) -> int:
        return int(self.tokenizer.eos_token_id)

    @property
    def context_length(self) -> int:
        return self._n_ctx

    @property
    def n_tokens(self) -> int:
        return self._n

    @property
    def batch_profile(self) -> BatchProfile:
        return self._profile

    @property
    def cached_ids(self) -> list[int]:
        """The token ids in the KV cache (a copy)."""
        return list(self._ids)

    # -- tokenizer -----------------------------------------------------------------------------

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        ids: list[int] = self.tokenizer(
            text, add_special_tokens=False, split_special_tokens=not special
        )["input_ids"]
        return ids

    def detokenize(self, ids: Sequence[int]) -> str:
        text: str = self.tokenizer.decode(
            list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False
        )
        return text

    def token_bytes(self) -> list[bytes]:
        """Bytes of every id via the llguidance tokenizer, ``b""`` for special ids (cached)."""
        if self._token_bytes is None:
            tok = self.ll_tokenizer()
            self._token_bytes = [
                b"" if tok.is_special_token(i) else tok.decode_bytes([i])
                for i in range(self._n_vocab)
            ]
        return self._token_bytes

    def ll_tokenizer(self) -> llguidance.LLTokenizer:
        """An llguidance tokenizer from the fast HF tokenizer (~0.3-0.8 s, cached)."""
        if self._ll_tokenizer is None:
            from llguidance.hf import from_tokenizer

            self._ll_tokenizer = from_tokenizer(
                self.tokenizer, n_vocab=self._n_vocab, eos_token=sorted(self._eos_ids)
            )
        return self._ll_tokenizer

    def _find_eos_ids(self) -> frozenset[int]:
        ids: set[int] = set()
        if self.tokenizer.eos_token_id is not None:
            ids.add(int(self.tokenizer.eos_token_id))
        gen_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        if isinstance(gen_eos, int):
            ids.add(gen_eos)
        elif isinstance(gen_eos, list):
            ids.update(int(i) for i in gen_eos)
        special = set(self.tokenizer.all_special_ids)
        added = {t.content for t in self.tokenizer.added_tokens_decoder.values() if t.special}
        for text in END_OF_TURN_TOKENS:
            found = self.tokenize(text, special=True)
            if len(found) == 1 and (found[0] in special or text in added):
                ids.add(found[0])
        return frozenset(ids)

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        """The tokenizer's chat template applied with ``add_generation_prompt=True``; tokenize the
        result with ``special=True``."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise BackendError(
                f"{self.model_path.name} has no chat template; use an instruction-tuned model"
            )
        prompt: str = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, tokenize=False
        )
        add_bos = bool(getattr(self.tokenizer, "add_bos_token", False))
        return with_bos(prompt, self.tokenizer.bos_token, add_bos)

    # -- the cache -------------------------------------------------------------------------------

    def _forward(self, ids: Sequence[int], logits_to_keep: int | torch.Tensor) -> Any:
        check_ids(ids, self._n_vocab)
        check_context(self._n, len(ids), self._n_ctx)
        input_ids = torch.tensor([list(ids)], dtype=torch.long, device=self.device)
        try:
            with torch.inference_mode():
                out = self.model(
                    input_ids=input_ids,
                    use_cache=True,
                    logits_to_keep=logits_to_keep,
                    **{cache_keyword(type(self.model)): self.cache},
                )
        except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:
            # Some layers may have appended to the cache and others not: no consistent state to
            # roll back to, so start over rather than serve a corrupt cache.
            self.truncate(0)
            raise BackendError(
                f"the forward pass over {len(ids)} tokens failed ({exc}); the KV cache was "
                "cleared: splice the prompt again (a shorter span or a smaller n_ctx may help)"
            ) from exc
        self._n += len(ids)
        self._ids.extend(int(i) for i in ids)
        held = self.cache.get_seq_length()
        if held != self._n:
            # A model that takes the cache under a keyword other than the one its forward names
            # swallows ours and starts every forward from an empty cache: wrong logits, no error.
            import transformers

            spliced, keyword = self._n, cache_keyword(type(self.model))
            self.truncate(0)
            raise BackendError(
                f"transformers {transformers.__version__} did not keep the KV cache passed as "
                f"{keyword!r} (it holds {held} tokens after {spliced} were spliced), so every "
                "forward would start from nothing; copygram's Transformers backend needs "
                "the release its CI tests: pip install 'transformers>=5.25'")
        return out.logits[0]

    def splice(self, ids: Sequence[int]) -> Logits:
        """One forward over ``ids`` with the LM head on the last position only; logits after it."""
        logits: Logits = self._forward(ids, 1)[-1].float().cpu().numpy()
        return logits

    def splice_all(
        self, ids: Sequence[int], *, rows: Sequence[int] | None = None
    ) -> npt.NDArray[np.float32]:
        """One forward over ``ids``; the LM head runs only on the positions in ``rows`` (a
        vocab-sized matmul per row), default every position."""
        keep: int | torch.Tensor = 0
        if rows is not None:  # validated before the forward touches the cache
            keep = torch.tensor(output_rows(rows, len(ids)), dtype=torch.long, device=self.device)
        out: npt.NDArray[np.float32] = self._forward(ids, keep).float().cpu().numpy()
        return out

    def decode(self, token_id: int) -> Logits:
        return self.splice((token_id,))

    def truncate(self, n_tokens: int) -> None:
        n = truncate_target(n_tokens, self._n)
        if n == 0:
            self.cache = DynamicCache(config=self.model.config)
        elif n < self._n:
            self.cache.crop(n - self._n)  # transformers 5 takes the (negative) count to drop
        self._n = n
        del self._ids[n:]
