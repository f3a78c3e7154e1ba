"""Speculative drafts, by concern: the drafter and its tag hypotheses
(:mod:`~copygram.decode.drafting.drafter`), how long a draft should be
(:mod:`~copygram.decode.drafting.length`) and the n-gram indexes of lookup drafts
(:mod:`~copygram.decode.drafting.ngram`)."""

from __future__ import annotations

from copygram.decode.drafting.drafter import Draft, DraftConfig, Drafter
from copygram.decode.drafting.length import DraftLength, DraftSizer
from copygram.decode.drafting.ngram import DocumentIndex, NgramIndex
from copygram.decode.drafting.prediction import PredictionDrafter
from copygram.decode.drafting.source import DraftSource

__all__ = ["DocumentIndex", "Draft", "DraftConfig", "DraftLength", "DraftSizer", "DraftSource",
           "Drafter", "NgramIndex", "PredictionDrafter"]
