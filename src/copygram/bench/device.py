"""``copygram bench device``: the Transformers backend checked and timed on an accelerator
(issue 44), where a real model's weights cannot travel to the machine that has one.

Two steps. ``prepare`` (here, with a catalog model's GGUF on disk): the model's architecture
(its config) and its tokenizer, read from the GGUF's header and vocabulary, into a folder of a
few MB that travels (``--tiny`` shrinks the architecture to two narrow layers, for a dry run on
a CPU). ``run`` (where the accelerator is): the architecture built with seeded random weights
(a forward's cost depends on shapes, not on values, and a random model's greedy output is as
deterministic as a trained one's), saved as a Hugging Face folder, loaded by
:class:`~copygram.backends.transformers.TransformersBackend` on ``--device`` once per dtype,
then checked and timed:

- ``cache_kept``: the logits after a token change when a prefix precedes it (a release that
  ignores the cache would leave them equal; the backend also checks after every forward);
- ``splice_vs_steps``: 64 tokens appended in one forward against the same tokens one step at a
  time: the largest difference over the logit scale, how many rows choose the same token, and
  the smallest top-2 margin among the rows that do not (a near tie: what
  ``BatchProfile.step_tolerance`` must cover);
- ``crop_and_redecode``: after cutting the cache back 8 tokens, the same 8 decoded again, 6
  times: how many tries differ from the first decode, and by how much (drafting cuts the cache
  all the time, so "the same input gives the same output" needs 0);
- ``rewrite_equals_greedy``: rewrite mode's reply against plain greedy decoding's, token for
  token, on a few documents (48 tokens each), and the near ties re-decided on the way;
- ``timings``: a decode step (median of 32) and the kernel curve with verify forwards
  (:func:`~copygram.bench.kernel.measure_kernel`).

One JSON file holds it all, the machine (the GPU's name), torch and transformers named. Cost on
a GPU: the random model's build and save (~30 s for 1.5B parameters) and about a minute per
dtype; on a CPU with ``--tiny``: seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from copygram.backends.base import Backend
from copygram.bench.kernel import measure_kernel, text_token_ids
from copygram.decode.sampling import top2_margin

DOCUMENTS = (
    "def mean(values):\n    return sum(values) / len(values)\n",
    "const square = (x) => x * x;\nconsole.log(square(3));\n",
    "The quick brown fox\njumps over the lazy dog.\n",
)
# --tiny: the architecture cut to what runs in seconds on a CPU (the vocabulary kept: the
# tokenizer must still fit it).
TINY = {"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16}


def prepare(gguf: Path, out: Path, *, tiny: bool = False) -> Path:
    """Write ``gguf``'s config (its architecture; ``tiny``: :data:`TINY`) and tokenizer to
    ``out`` as a Hugging Face folder without weights; returns ``out``. Reads the GGUF's header
    and vocabulary, not its tensors (seconds)."""
    from transformers import AutoConfig, AutoTokenizer

    config: Any = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    if tiny:
        for key, value in TINY.items():
            setattr(config, key, value)
    tokenizer: Any = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    out.mkdir(parents=True, exist_ok=True)
    config.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def build_model(folder: Path, out: Path, *, device: str, seed: int = 0) -> Path:
    """The architecture of ``folder`` (:func:`prepare`'s) with weights drawn from ``seed``,
    saved in bfloat16 with the tokenizer into ``out``: a folder the backend loads."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    config: Any = AutoConfig.from_pretrained(folder)
    auto: Any = AutoModelForCausalLM
    with torch.device("cuda" if device == "cuda" else "cpu"):
        model = auto.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(out)
    tokenizer: Any = AutoTokenizer.from_pretrained(folder)
    tokenizer.save_pretrained(out)
    return out


class _Draws:
    """Seeded random text tokens of one backend (its vocabulary's bytes read once)."""

    def __init__(self, backend: Backend) -> None:
        self.vocabulary = text_token_ids(backend)

    def __call__(self, n: int, seed: int) -> list[int]:
        rng = np.random.default_rng(seed)
        return [int(i) for i in rng.choice(self.vocabulary, n)]


def cache_kept(backend: Backend) -> dict[str, object]:
    """Whether a prefix changes the logits after a token: the largest difference it makes."""
    draw = _Draws(backend)
    prefix, token = draw(32, 1), draw(1, 2)
    backend.truncate(0)
    alone = backend.splice(token)
    backend.truncate(0)
    backend.splice(prefix)
    after = backend.splice(token)
    difference = float(np.max(np.abs(after - alone)))
    return {"kept": difference > 0, "largest_difference": difference}


def splice_vs_steps(backend: Backend, n: int = 64, prompt: int = 200) -> dict[str, object]:
    """``n`` tokens after a ``prompt``-token context, in one forward against one step each."""
    draw = _Draws(backend)
    context, span = draw(prompt, 3), draw(n, 4)
    backend.truncate(0)
    backend.splice(context)
    rows = backend.splice_all(span)
    backend.truncate(prompt)
    steps = np.stack([backend.decode(t) for t in span])
    scale = float(np.max(np.abs(steps)))
    same = rows.argmax(axis=1) == steps.argmax(axis=1)
    every = np.ones(steps.shape[1], dtype=np.bool_)
    margins = [top2_margin(step, every) for step, agree in zip(steps, same, strict=True)
               if not agree]
    return {"n": n, "largest_relative_difference": float(np.max(np.abs(rows - steps))) / scale,
            "argmax_agree": int(same.sum()),
            "smallest_margin_where_they_differ": min(margins) if margins else None}


def crop_and_redecode(backend: Backend, tries: int = 6, back: int = 8) -> dict[str, object]:
    """Decode ``back`` tokens, then ``tries`` times cut them off and decode them again."""
    draw = _Draws(backend)
    context, span = draw(200, 5), draw(back, 6)
    backend.truncate(0)
    backend.splice(context)
    first = np.stack([backend.decode(t) for t in span])
    differ, largest = 0, 0.0
    for _ in range(tries):
        backend.truncate(len(context))
        again = np.stack([backend.decode(t) for t in span])
        gap = float(np.max(np.abs(again - first)))
        differ += gap > 0
        largest = max(largest, gap)
    return {"tries": tries, "tokens": back, "tries_that_differ": differ,
            "largest_difference": largest}


def rewrite_equals_greedy(backend: Backend, max_tokens: int = 48) -> dict[str, object]:
    """Rewrite mode's reply against plain greedy decoding's on :data:`DOCUMENTS`."""
    from copygram.bench.quality.approaches import rewrite_decode
    from copygram.session import EditSession

    session = EditSession(backend, mode="rewrite", on_damage="keep", max_new_tokens=max_tokens)
    same, ties = 0, 0
    for document in DOCUMENTS:
        plain = rewrite_decode(backend, document, "Rewrite it.", max_new_tokens=max_tokens)
        result = session.edit(document, "Rewrite it.", language="text")
        same += result.raw == plain.raw
        ties += result.stats.tie_steps
    return {"documents": len(DOCUMENTS), "same": same, "tie_steps": ties}


def timings(backend: Backend, steps: int = 32) -> dict[str, object]:
    """A decode step's median time at a 256-token context, and the kernel curve."""
    draw = _Draws(backend)
    context = draw(256, 7)
    backend.truncate(0)
    backend.splice(context)
    times = []
    for token in draw(steps, 8):
        tick = time.perf_counter()
        backend.decode(token)
        times.append(time.perf_counter() - tick)
    curve = measure_kernel(backend, ns=(8, 32, 128, 512), repeats=3)
    return {"decode_ms": 1000 * statistics.median(times),
            "kernel": [{"n": r.n, "decode_s": r.decode_s, "splice_s": r.splice_s,
                        "verify_s": r.verify_s, "speedup": r.speedup} for r in curve.rows]}


def check(folder: Path, *, device: str, dtypes: tuple[str, ...]) -> dict[str, object]:
    """Build the random model of ``folder`` and run every check on ``device`` per dtype."""
    import torch
    import transformers

    from copygram.backends.transformers import TransformersBackend

    report: dict[str, object] = {"torch": torch.__version__,
                                 "transformers": transformers.__version__, "device": device}
    with tempfile.TemporaryDirectory() as tmp:
        tick = time.perf_counter()
        model = build_model(folder, Path(tmp) / "model", device=device)
        report["build_s"] = time.perf_counter() - tick
        for dtype in dtypes:
            backend = TransformersBackend(model, device=device, dtype=dtype, n_ctx=4096)
            report.setdefault("machine", backend.describe().get("accelerator", "cpu"))
            report[dtype] = {
                "cache_kept": cache_kept(backend),
                "splice_vs_steps": splice_vs_steps(backend),
                "crop_and_redecode": crop_and_redecode(backend),
                "rewrite_equals_greedy": rewrite_equals_greedy(backend),
                "timings": timings(backend),
            }
            del backend
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("step", choices=("prepare", "run"))
    parser.add_argument("--folder", type=Path, required=True,
                        help="prepare: where to write the config and tokenizer; run: that folder")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b",
                        help="prepare: the catalog model (on disk) whose architecture to take")
    parser.add_argument("--tiny", action="store_true",
                        help="prepare: two narrow layers, for a dry run on a CPU")
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--json", type=Path, default=None, help="run: write the report here")


def run(args: argparse.Namespace) -> int:
    if args.step == "prepare":
        from copygram.catalog import get_entry, model_status
        from copygram.errors import ConfigError

        status = model_status(get_entry(args.model))
        if not status.present or status.path is None:
            raise ConfigError(f"{args.model} is not on this machine: copygram models fetch "
                              f"{args.model}")
        print(prepare(status.path, args.folder, tiny=args.tiny))
        return 0
    report = check(args.folder, device=args.device, dtypes=tuple(args.dtypes.split(",")))
    text = json.dumps(report, indent=2)
    if args.json is not None:
        args.json.write_text(text + "\n")
    print(text)
    return 0


__all__ = ["DOCUMENTS", "TINY", "build_model", "cache_kept", "check", "crop_and_redecode",
           "prepare", "rewrite_equals_greedy", "splice_vs_steps", "timings"]
