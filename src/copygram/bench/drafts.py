"""``copygram bench drafts``: rewrite mode's drafter and prompt-lookup decoding replayed over
greedy outputs a ``bench quality --rows`` run recorded, without running the model.

Under greedy decoding the output is fixed, so how many forwards a drafter needs follows from its
drafts alone: each forward appends one token the model chose and verifies a draft, which keeps
the longest prefix equal to the output. :func:`replay_drafts` walks an output that way with any
:class:`~copygram.decode.drafting.DraftSource`, pricing each forward on the backend's fixed
cost curve (:class:`~copygram.backends.base.BatchProfile`, in decode steps). The two sources
compared are rewrite mode's (:func:`~copygram.decode.plain_text.prediction_source`, built exactly
as an edit builds it) and :class:`PromptLookup`, the peers' prompt lookup (transformers'
``prompt_lookup_num_tokens``, llama-cpp-python's ``LlamaPromptLookupDecoding``: the first match
of the last 2-gram, else 1-gram, in the prompt and the output, ``k`` tokens after it).

What it is for: choosing how to draft, on the dev rows, in seconds per variant instead of a
half-hour run, with the recorded runs as the check (on a transformers run the replay gave the
recorded forward counts row for row). What it leaves out: the near-tie steps of a backend whose
batched rows are not one-token steps, time spent outside forwards, and re-tokenization (the
output is the recorded text tokenized again, which a model's own tokens match but for rare
splits). Cost: the backend's load and a tokenization per row; no forward.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from copygram.bench.data import DATA_ENV, data_dir, load_rows
from copygram.decode.drafting import Draft
from copygram.decode.drafting.ngram import NgramIndex
from copygram.errors import ConfigError

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile
    from copygram.decode.drafting import DraftSource

__all__ = ["DraftReplay", "PromptLookup", "RecordedOutput", "RowReplay", "add_arguments", "read_outputs",
           "replay_drafts", "run"]


@dataclass(frozen=True)
class DraftReplay:
    """A drafter over one output: ``forwards`` after the prompt's (the first output token comes
    from the prompt's forward), their modelled ``cost`` in decode steps, tokens drafted and
    accepted."""

    forwards: int
    cost: float
    drafted: int
    accepted: int


def replay_drafts(source: DraftSource | None, output: Sequence[int],
                  profile: BatchProfile, max_tokens: int | None = None) -> DraftReplay:
    """Walk ``output`` as the decode loop would with ``source`` drafting (``None``: one token
    per forward), each draft keeping its longest prefix equal to the output and, as the loop
    does, cut to the ``max_tokens`` budget's room."""
    forwards = drafted = accepted = 0
    cost = 0.0
    done = min(1, len(output))
    while done < len(output):
        room = len(output) if max_tokens is None else max_tokens - done
        draft = source.propose(output[:done], 1) if source is not None and room > 0 else None
        if draft is not None and len(draft.tokens) > room:
            draft = Draft(draft.tokens[:room], source=draft.source)
        tokens = draft.tokens if draft is not None else []
        kept = 0
        while kept < len(tokens) and done + kept < len(output) \
                and tokens[kept] == output[done + kept]:
            kept += 1
        if draft is not None and tokens and source is not None:
            source.feedback(draft, kept)
        forwards += 1
        cost += profile.cost(1 + len(tokens))
        drafted += len(tokens)
        accepted += kept
        done += kept + 1
    return DraftReplay(forwards, cost, drafted, accepted)


class PromptLookup:
    """Prompt-lookup decoding's drafts as the peers make them: the tokens after the first
    occurrence of the last ``max_ngram``-gram (then shorter) in the prompt and the output so
    far, ``k`` of them (fewer at the end). The first occurrences are rewrite mode's own
    :class:`~copygram.decode.drafting.ngram.NgramIndex`, extended as the output grows (and
    rebuilt from the prompt for an output that is not the one it followed)."""

    def __init__(self, prompt: Sequence[int], k: int = 10, max_ngram: int = 2) -> None:
        if k < 1 or max_ngram < 1:
            raise ConfigError(f"prompt lookup needs k >= 1 and max_ngram >= 1, got {k}, "
                              f"{max_ngram}")
        self.k = k
        self.max_ngram = max_ngram
        self._prompt = list(prompt)
        self._index = self._fresh()

    def _fresh(self) -> NgramIndex:
        index = NgramIndex(self.max_ngram)
        index.extend(self._prompt)
        return index

    def propose(self, output: Sequence[int], feed: int = 1) -> Draft | None:
        seen = len(self._index.tokens) - len(self._prompt)
        if seen > len(output) or self._index.tokens[len(self._prompt):] != list(output[:seen]):
            self._index, seen = self._fresh(), 0  # not the output it followed: start over
        index = self._index
        index.extend(output[seen:])
        ids = index.tokens
        for size in range(min(self.max_ngram, len(ids) - 1), 0, -1):
            follow = index.follow(tuple(ids[-size:]), self.k)
            if follow:
                return Draft(follow, source="lookup")
        return None

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        """Plain text closes no copy: never."""
        return False

    def feedback(self, draft: Draft, accepted: int) -> None:
        """Nothing to learn: the peers draft ``k`` tokens every time."""


@dataclass(frozen=True)
class RecordedOutput:
    """One row's greedy output as a quality run recorded it."""

    dataset: str
    row_id: str
    text: str


# A rewrite-mode row's raw output is built from the tokens' bytes; the baseline's text went
# through the backend's detokenizer, which before 8faa6c0 cleaned spaces on llama.cpp for some
# vocabularies: rewrite mode's first.
_PREFERENCE = ("rewrite-mode", "rewrite")


def read_outputs(lines: Iterable[str]) -> list[RecordedOutput]:
    """The greedy output of each row of a ``bench quality --rows`` file (the rewrite-mode
    approach's raw output, else the baseline's), in file order."""
    found: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = (str(record["dataset"]), str(record["row_id"]))
            approach = str(record["approach"])
            raw = (record.get("stats") or {}).get("raw")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"line {number} is not a `bench quality --rows` record ({exc}); "
                              "pass a file that `copygram bench quality --rows FILE` wrote"
                              ) from exc
        texts = found[key]  # every row keeps its place in file order
        if approach in _PREFERENCE and isinstance(raw, str) and not record.get("error"):
            texts[approach] = raw
    outputs = []
    for (dataset, row_id), texts in found.items():
        for approach in _PREFERENCE:
            if approach in texts:
                outputs.append(RecordedOutput(dataset, row_id, texts[approach]))
                break
    return outputs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows", required=True,
                        help="a file `copygram bench quality --rows FILE` wrote (rewrite or "
                             "rewrite-mode approach)")
    parser.add_argument("--model", default="default",
                        help="the model of that run: a catalog name or a .gguf path")
    parser.add_argument("--backend", default="llamacpp", choices=("llamacpp", "transformers"))
    parser.add_argument("--n-ctx", type=int, default=8192, help="context length (default 8192)")
    parser.add_argument("--cost-curve", default=None, metavar="KERNEL_JSON",
                        help="size and price drafts on this curve, a kernel.json that `copygram "
                             "bench kernel` wrote (config key cost_curve; default: the built-in "
                             "curve of the machine's kind)")
    parser.add_argument("--lookup-tokens", type=int, default=10,
                        help="the peer's draft length (default 10, as bench quality's peer)")
    parser.add_argument("--json", help="write the per-row replays here")
    parser.add_argument("--data", default=None,
                        help=f"the folder of *.dev.jsonl files that run read (default: "
                             f"${DATA_ENV})")


@dataclass(frozen=True)
class RowReplay:
    """Both drafters over one recorded output of ``output_tokens`` tokens."""

    dataset: str
    row_id: str
    output_tokens: int
    rewrite_mode: DraftReplay
    lookup: DraftReplay


def _rows_table(results: Sequence[RowReplay]) -> Iterator[str]:
    yield ("| set (rows) | forwards: lookup / rewrite mode | cost, decode steps: lookup / "
           "rewrite mode | lookup / rewrite mode | rewrite mode cheaper |")
    yield "|---|---|---|---|---|"
    sets: dict[str, list[RowReplay]] = defaultdict(list)
    for result in results:
        sets[result.dataset].append(result)
    for name, group in [*sets.items(), ("pooled", list(results))]:
        f_peer = sum(r.lookup.forwards for r in group)
        f_ours = sum(r.rewrite_mode.forwards for r in group)
        c_peer = sum(r.lookup.cost for r in group)
        c_ours = sum(r.rewrite_mode.cost for r in group)
        wins = sum(r.rewrite_mode.cost < r.lookup.cost for r in group)
        label = f"**{name} ({len(group)})**" if name == "pooled" else f"{name} ({len(group)})"
        yield (f"| {label} | {f_peer} / {f_ours} | {c_peer:.0f} / {c_ours:.0f} | "
               f"{c_peer / c_ours if c_ours else float('nan'):.2f}x | {wins}/{len(group)} |")


def run(args: argparse.Namespace) -> int:
    from copygram.decode.loop import prompt_ids
    from copygram.decode.plain_text import prediction_source
    from copygram.decode.rewrite import edit_budget
    from copygram.session import EditSession

    rows_file = Path(args.rows)
    if not rows_file.is_file():
        raise ConfigError(f"--rows {rows_file}: no such file; pass a file that "
                          "`copygram bench quality --rows FILE` wrote")
    with rows_file.open(encoding="utf-8") as handle:
        outputs = read_outputs(handle)
    if not outputs:
        raise ConfigError(f"--rows {rows_file} holds no rewrite or rewrite-mode output to replay")
    path = data_dir(args.data)
    rows = {row.id: row for group in load_rows(sorted({o.dataset for o in outputs}), path).values()
            for row in group}
    config: dict[str, object] = {"backend": args.backend, "model": args.model,
                                 "n_ctx": args.n_ctx, "mode": "rewrite"}
    if args.cost_curve:
        config["route"] = {"cost_curve": args.cost_curve}
    session = EditSession.from_config(config)
    setup = session.setup()
    backend = setup.backend
    profile = backend.batch_profile
    eos = min(backend.eos_token_ids)
    results: list[RowReplay] = []
    for output in outputs:
        row = rows.get(output.row_id)
        if row is None:
            raise ConfigError(f"row {output.row_id} of --rows is not in {path}; pass the "
                              "--data folder that run used")
        prompt = prompt_ids(setup, row.before, row.instruction)
        # The end-of-text token closes the output as the model's last choice.
        tokens = [*backend.tokenize(output.text), eos] if output.text else [eos]
        budget = edit_budget(setup, len(backend.tokenize(row.before)))
        ours = replay_drafts(prediction_source(setup, row.before, prompt), tokens, profile,
                             budget)
        peer = replay_drafts(PromptLookup(prompt, args.lookup_tokens), tokens, profile, budget)
        results.append(RowReplay(output.dataset, output.row_id, len(tokens), ours, peer))
    print(f"{backend.name}, {args.model}: drafts replayed over {len(results)} recorded "
          "outputs, priced on the backend's cost curve (no model run)", file=sys.stderr)
    for line in _rows_table(results):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n",
                                   encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
