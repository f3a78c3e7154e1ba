"""The reference for exactness tests: a plain step-by-step greedy decode of an edit program
through the Backend protocol, one ``decode`` per token (copied lines included), nothing batched
but the prompt, whose last token is also decoded alone."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from copygram.backends.base import Backend
from copygram.constraints import compile_constraint
from copygram.decode.loop import prompt_ids
from copygram.decode.prompt import DefaultPromptBuilder
from copygram.decode.sampling import masked_argmax, top2_margin
from copygram.decode.setup import EditSetup
from copygram.errors import GenerationError
from copygram.language.lines import split_lines


def stepwise_program(backend: Backend, document: str, instruction: str, *,
                     max_new_tokens: int, ordered: bool = True,
                     margins: list[tuple[int, float]] | None = None) -> str:
    """The program text greedy decoding writes; a :class:`GenerationError` with the partial
    program after ``max_new_tokens`` program tokens. ``margins`` gets, for every choice, the
    length of the program text before it and the top-2 margin of the allowed logits."""
    setup = EditSetup(backend=backend, token_bytes=backend.token_bytes(),
                      prompt_builder=DefaultPromptBuilder())
    prompt = prompt_ids(setup, document, instruction)
    lines = split_lines(document)
    constraint = compile_constraint(lines, backend, ordered=ordered)
    backend.truncate(0)
    backend.splice(prompt[:-1])
    logits = backend.decode(prompt[-1])
    for _ in range(max_new_tokens):
        mask = constraint.allowed()
        token = masked_argmax(logits, mask)
        if margins is not None:
            margins.append((len(constraint.program_text), top2_margin(logits, mask)))
        if token in backend.eos_token_ids or (token == constraint.eos_token_id
                                              and constraint.done):
            return constraint.program_text
        closed = constraint.consume(token)
        logits = backend.decode(token)
        if closed is not None:
            for copied in backend.tokenize("".join(lines[closed.start - 1 : closed.end])):
                logits = backend.decode(copied)
    raise GenerationError(f"no complete program after {max_new_tokens} tokens",
                          partial_program=constraint.program_text)


def stepwise_text(backend: Backend, prompt: list[int], *, max_tokens: int,
                  split_prompt: bool = True, margins: list[float] | None = None,
                  closes: Callable[[int], bool] | None = None) -> list[int]:
    """The tokens plain greedy decoding writes after ``prompt`` (no grammar): the prompt but its
    last token in one splice, the last token and then every output token decoded alone, argmax
    (ties to the lowest id), up to an end-of-generation id, ``max_tokens`` tokens or the token
    after which ``closes`` ends the output (a rewrite's closing fence).
    ``split_prompt=False`` splices the whole prompt (for a scripted model, which takes the first
    forward after a reset as the whole prompt). ``margins`` gets the top-2 margin of every
    choice (the last one's too, where it chose an end-of-generation id)."""
    backend.truncate(0)
    if split_prompt and len(prompt) > 1:
        backend.splice(prompt[:-1])
        logits = backend.decode(prompt[-1])
    else:
        logits = backend.splice(prompt)
    out: list[int] = []
    while len(out) < max_tokens:
        token = int(np.argmax(logits))
        if margins is not None:
            margins.append(top2_margin(logits, np.ones(len(logits), dtype=np.bool_)))
        if token in backend.eos_token_ids:
            break
        out.append(token)
        if closes is not None and closes(token):
            break
        if len(out) >= max_tokens or backend.n_tokens + 1 > backend.context_length:
            break
        logits = backend.decode(token)
    return out
