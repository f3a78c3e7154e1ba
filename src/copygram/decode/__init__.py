"""The decode loop and what it is made of (layer "decode" in docs/architecture.md).

- :mod:`~copygram.decode.loop`: the one decode loop (edit programs, and plain text with an
  all-allowing constraint), prefill, room checks; by job beside it
  :mod:`~copygram.decode.meter` (the forward meter and the output text,
  :mod:`~copygram.decode.text`), :mod:`~copygram.decode.forwards` (forwards counted and timed,
  the near-tie rule) and :mod:`~copygram.decode.verify` (drafts, copies and blocks checked
  against the model); :mod:`~copygram.decode.formats`: what differs by program format;
  :mod:`~copygram.decode.setup`: what a run needs of a session. (Replay and plain decoding's
  cost are the benchmarks': :mod:`copygram.bench.replay`.)
- :mod:`~copygram.decode.plain_text`: the loop's plain-text job (rewrite mode and chat
  completions); :mod:`~copygram.decode.rewrite`: a rewrite-mode edit.
- :mod:`~copygram.decode.events`: what the loop reports in every mode, and its results (and the
  statistics computed from it); :mod:`~copygram.decode.stats`: :class:`RunStats`.
- :mod:`~copygram.decode.policies` and :mod:`~copygram.decode.sampling`: how tokens are chosen.
- :mod:`~copygram.decode.drafting`: speculative drafts; :mod:`~copygram.decode.prompt`: the prompt.
- :mod:`~copygram.decode.document` and :mod:`~copygram.decode.program_reader`: the document split
  and tokenized once, the program read incrementally.

It may import core, language, constraints, config and backends; the session facade
(:class:`copygram.session.EditSession`) sits above it.
"""

from __future__ import annotations

from copygram.decode.drafting import DraftConfig
from copygram.decode.events import (
    CopyEvent,
    DoneEvent,
    EditResult,
    Event,
    SpanEvent,
    TokenEvent,
    count_markup_forwards,
)
from copygram.decode.prompt import DefaultPromptBuilder, PromptBuilder, RewritePromptBuilder
from copygram.decode.sampling import Sampling
from copygram.decode.stats import RunStats

__all__ = [
    "CopyEvent",
    "DefaultPromptBuilder",
    "DoneEvent",
    "DraftConfig",
    "EditResult",
    "Event",
    "PromptBuilder",
    "RewritePromptBuilder",
    "RunStats",
    "Sampling",
    "SpanEvent",
    "TokenEvent",
    "count_markup_forwards",
]
