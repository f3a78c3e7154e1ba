"""Counters and timings of one generation run, shared by the decode loop and the benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunStats:
    """What one run cost. Times are wall-clock seconds; ``forwards`` counts backend calls
    (a decode step, a splice, or a draft verification each count as one) after the prompt."""

    prompt_tokens: int = 0
    # Prompt tokens the KV cache already held from an earlier run (a shared prefix): the
    # prefill spliced only the rest (OpenAI's usage.prompt_tokens_details.cached_tokens).
    cached_prompt_tokens: int = 0
    output_tokens: int = 0  # tokens of the final document text (the plain autoregressive cost)
    decoded_tokens: int = 0  # tokens chosen by the model (or the teacher) one forward at a time
    forced_tokens: int = 0  # program tokens the grammar forced, spliced instead of decoded
    spliced_tokens: int = 0  # copied-content tokens appended by splices
    drafted_tokens: int = 0  # speculative draft tokens accepted
    # Draft tokens verified and not taken (plain text generation counts them: Predicted
    # Outputs' rejected prediction tokens; the program-mode loop does not).
    rejected_tokens: int = 0
    forwards: int = 0
    # Greedy choices from a batched row within the backend's step tolerance, re-decided with a
    # one-token step (each costs one extra forward, counted in ``forwards``).
    tie_steps: int = 0
    # Forwards spent on op markup and line numbers, not on gen text: not counted by the decode
    # loop, filled from its events by copygram.decode.events.count_markup_forwards (replay does).
    markup_forwards: int = 0
    copy_ops: int = 0
    # Copies that verify_copies cut short: the model, reading a copied line, would not have
    # written it (each cut costs one more forward of the lines kept).
    cut_copies: int = 0
    # Search/replace blocks that changed nothing, taken back and written again from the model's
    # most likely change (retry_unchanged).
    unchanged_retries: int = 0
    # Line ranges (the definitions the instruction names) that a block had to reach
    # (touch_named; 0 where the program was free).
    touch_ranges: int = 0
    # Head blocks that ran on into the units after their own, closed where the next one began
    # (copygram.language.runaway.close_runaway) and the program gone on from there.
    runaway_closes: int = 0
    # A rename program's result: the old name's calls in its documentation renamed too
    # (copygram.decode.renames; doctests, comment examples the blocks did not reach).
    doc_renames: int = 0
    # A rewrite whose reply was part of the file: the definitions it left out, put back as the
    # document had them (copygram.decode.checked, copygram.language.lost).
    restored_definitions: int = 0
    # An edit that dropped the documentation of definitions it kept (a comment block above one,
    # a docstring): the blocks put back as the document had them (copygram.language.lost_docs).
    restored_documentation: int = 0
    # Lines the edit wrote in another indentation unit than the document's (four spaces in a
    # file indented with tabs), put back in the document's (copygram.language.indent_style).
    restyled_lines: int = 0
    # A tab-indented file shown to the model in four spaces a depth, the edit written back in
    # tabs (copygram.decode.tab_view): the lines of the result that went back to tabs.
    tabbed_lines: int = 0
    # A scoped rewrite (copygram.decode.scoped): the lines of the document its excerpt showed
    # (0: the whole file was the rewrite's document).
    scope_lines: int = 0
    gen_ops: int = 0
    copy_span_tokens: list[int] = field(default_factory=list)  # N_k of every copy splice
    forward_tokens: list[int] = field(default_factory=list)  # tokens appended by each forward
    prefill_s: float = 0.0
    decode_s: float = 0.0
    splice_s: float = 0.0
    constraint_s: float = 0.0
    wall_s: float = 0.0  # generation phase, prompt prefill excluded

    @property
    def program_tokens(self) -> int:
        return self.decoded_tokens + self.forced_tokens + self.drafted_tokens

    def speedup_over(self, baseline: RunStats) -> float:
        """Wall-clock speedup of this run over ``baseline`` (generation phase)."""
        return baseline.wall_s / self.wall_s if self.wall_s > 0 else float("inf")

    def as_dict(self) -> dict[str, object]:
        from dataclasses import asdict

        return asdict(self)
