"""EditSession: constrained Copy-as-Decode editing with splicing, on any backend.

The decode loop, per step: mask the logits with the document's constraint, choose a token
(greedy, sampled, or - in :meth:`EditSession.replay` - the teacher's), consume it, append the
tokens the grammar forces next, and when a copy op closes append the tokens of the copied lines.
Everything appended after one choice goes into the KV cache in **one** forward pass (a splice),
so a copy of N tokens costs one forward instead of N.
"""

from __future__ import annotations

import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from copygram.drafting import DraftConfig, Drafter, DraftLength
from copygram.errors import ConfigError, DocumentError, GenerationError
from copygram.lines import split_lines
from copygram.program import Copy, Program
from copygram.prompt import DefaultPromptBuilder, PromptBuilder
from copygram.resolve import resolve
from copygram.sampling import Sampler, Sampling
from copygram.stats import RunStats
from copygram.syntaxes import DEFAULT_SYNTAX, get_syntax, parse
from copygram.types import LineRange

if TYPE_CHECKING:
    from copygram.backends.base import Backend, Logits
    from copygram.constraints import Constraint


# --- events ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenTokenEvent:
    """The model chose a program token (markup or generated text)."""

    token_id: int
    text: str


@dataclass(frozen=True)
class CopyEvent:
    """A copy op closed; its lines were spliced into the cache as ``n_tokens`` tokens."""

    lines: LineRange
    n_tokens: int


@dataclass(frozen=True)
class EditResult:
    """The outcome of :meth:`EditSession.edit`."""

    text: str
    program: Program
    program_text: str
    stats: RunStats

    @property
    def speedup(self) -> float:
        """Estimated speedup over decoding every output token: the output's token count times
        this run's mean decode-step time, over this run's generation time (use
        :meth:`EditSession.replay` for a measured one)."""
        if not self.stats.decoded_tokens or not self.stats.wall_s:
            return float("nan")
        per_step = self.stats.decode_s / self.stats.decoded_tokens
        return self.stats.output_tokens * per_step / self.stats.wall_s


@dataclass(frozen=True)
class DoneEvent:
    result: EditResult


Event = GenTokenEvent | CopyEvent | DoneEvent


@dataclass(frozen=True)
class ReplayResult:
    """Teacher-forced cost of a program (``copygram``) and of plain decoding (``plain``)."""

    text: str
    program: Program
    copygram: RunStats
    plain: RunStats | None

    @property
    def speedup(self) -> float:
        if self.plain is None:
            return float("nan")
        return self.copygram.speedup_over(self.plain)


# --- token choice policies ----------------------------------------------------------------------


class Policy(Protocol):
    def choose(self, logits: Logits, allowed: npt.NDArray[np.bool_]) -> int: ...

    def advance(self, token_id: int) -> None:
        """Told of every token consumed, chosen or forced."""
        ...


class _SamplingPolicy:
    def __init__(self, sampling: Sampling) -> None:
        self._sampler = Sampler(sampling)

    def choose(self, logits: Logits, allowed: npt.NDArray[np.bool_]) -> int:
        return self._sampler.choose(logits, allowed)

    def advance(self, token_id: int) -> None:
        pass


class TeacherPolicy:
    """Chooses the tokens of a given program text, as a perfect model would.

    The program text is tokenized canonically (the backend's tokenizer) a stretch at a time, each
    ending at a copy's close: the copied lines are spliced right after it, so no token spans it,
    while across the other op boundaries a model writes what it read in the worked example
    (``</gen><copy`` holds the token ``><``). When the grammar forces tokens that split the text
    differently, the rest of the stretch is tokenized again from where they ended.
    """

    def __init__(self, program: Program, syntax: str, backend: Backend, eos_ids: frozenset[int],
                 token_bytes: Sequence[bytes]) -> None:
        self._backend = backend
        self._token_bytes = token_bytes
        self._eos = min(eos_ids)
        self._eos_ids = eos_ids
        rendered = get_syntax(syntax).render
        self._ops = [rendered(Program([op])).encode("utf-8") for op in program]
        self._is_copy = [isinstance(op, Copy) for op in program]
        self._op = 0
        self._offset = 0  # bytes of self._ops[self._op] already consumed
        self._queue: list[int] = []

    def _refill(self) -> None:
        while self._op < len(self._ops) and self._offset >= len(self._ops[self._op]):
            self._op, self._offset = self._op + 1, 0
        if self._op < len(self._ops):
            end = self._op
            while not self._is_copy[end] and end + 1 < len(self._ops):
                end += 1
            rest = self._ops[self._op][self._offset :] + b"".join(self._ops[self._op + 1 : end + 1])
            self._queue = self._backend.tokenize(rest.decode("utf-8", errors="surrogateescape"))

    def choose(self, logits: Logits, allowed: npt.NDArray[np.bool_]) -> int:
        if not self._queue:
            self._refill()
        if self._op >= len(self._ops):
            for eos in sorted(self._eos_ids):
                if allowed[eos]:
                    return eos
            raise GenerationError("teacher program ended but the grammar does not allow EOS",
                                  partial_program="")
        token = self._queue[0]
        if not allowed[token]:
            raise GenerationError(
                f"the constraint rejects the teacher's token {token} "
                f"({self._token_bytes[token]!r}); the program is not valid for this document",
                partial_program="",
            )
        return token

    def advance(self, token_id: int) -> None:
        if token_id in self._eos_ids:
            return
        # Follow the token's bytes, into the next ops where it spans their boundary (`><`, or a
        # forced token).
        remaining = len(self._token_bytes[token_id])
        while remaining:
            if self._offset >= len(self._ops[self._op]):
                self._op, self._offset = self._op + 1, 0
            take = min(remaining, len(self._ops[self._op]) - self._offset)
            self._offset += take
            remaining -= take
        if self._queue and self._queue[0] == token_id:
            self._queue.pop(0)
        else:
            self._queue = []


# --- the session ---------------------------------------------------------------------------------

_SESSION_KEYS = {"engine", "syntax", "temperature", "top_p", "seed", "max_new_tokens",
                 "splice_forced", "draft_tokens", "draft_ngram", "prompt_example"}


class _Step:
    """The per-run plumbing of the decode loop: choosing, consuming, forwarding, with timings."""

    def __init__(self, backend: Backend, constraint: Constraint, lines: list[str],
                 policy: Policy) -> None:
        self.backend, self.constraint, self.lines, self.policy = backend, constraint, lines, policy
        self.stats = RunStats()
        self.drafter: Drafter | None = None
        self._token_bytes = backend.token_bytes()
        self._copy_cache: dict[tuple[int, int], list[int]] = {}

    def choose(self, logits: Logits) -> int:
        tick = time.perf_counter()
        allowed = self.constraint.allowed()
        self.stats.constraint_s += time.perf_counter() - tick
        return self.policy.choose(logits, allowed)

    def consume(self, token: int) -> LineRange | None:
        tick = time.perf_counter()
        closed = self.constraint.consume(token)
        self.stats.constraint_s += time.perf_counter() - tick
        self.policy.advance(token)
        return closed

    def forced(self) -> list[int]:
        tick = time.perf_counter()
        forced = self.constraint.forced()
        self.stats.constraint_s += time.perf_counter() - tick
        return forced

    def token_event(self, token: int) -> GenTokenEvent:
        return GenTokenEvent(token, self._token_bytes[token].decode("utf-8", errors="replace"))

    def copy_tokens(self, lines: LineRange) -> list[int]:
        """The copied lines' tokens, tokenized as one text (what the splice appends)."""
        key = (lines.start, lines.end)
        if key not in self._copy_cache:
            text = "".join(self.lines[lines.start - 1 : lines.end])
            self._copy_cache[key] = self.backend.tokenize(text)
        return self._copy_cache[key]

    def add_copy(self, lines: LineRange, feed: list[int], *,
                 counted_in_feed: bool = True) -> CopyEvent:
        """Count a closed copy; append its tokens to ``feed`` unless they are already there."""
        copied = self.copy_tokens(lines)
        if counted_in_feed:
            feed.extend(copied)
        self.stats.copy_ops += 1
        self.stats.spliced_tokens += len(copied)
        self.stats.copy_span_tokens.append(len(copied))
        return CopyEvent(lines, len(copied))

    def _record(self, n_tokens: int, since: float) -> None:
        elapsed = time.perf_counter() - since
        if self.drafter is not None:
            self.drafter.observe_forward(n_tokens, elapsed)
        if n_tokens == 1:
            self.stats.decode_s += elapsed
        else:
            self.stats.splice_s += elapsed
        self.stats.forwards += 1
        self.stats.forward_tokens.append(n_tokens)

    def forward(self, ids: list[int]) -> Logits:
        tick = time.perf_counter()
        logits = self.backend.decode(ids[0]) if len(ids) == 1 else self.backend.splice(ids)
        self._record(len(ids), tick)
        return logits

    def forward_rows(self, ids: list[int], rows: list[int]) -> npt.NDArray[np.float32]:
        tick = time.perf_counter()
        logits = self.backend.splice_all(ids, rows=rows)
        self._record(len(ids), tick)
        return logits


class EditSession:
    """Edit documents with a model through Copy-as-Decode.

    Build one per model (loading a model costs seconds; reuse the session): ``EditSession(backend)``
    or ``EditSession.from_config({...})``. Every edit compiles the document's constraint (~1 ms
    for llguidance, cached per line count) and runs the decode loop.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        engine: str = "llguidance",
        syntax: str = DEFAULT_SYNTAX,
        sampling: Sampling | None = None,
        prompt_builder: PromptBuilder | None = None,
        max_new_tokens: int = 4096,
        splice_forced: bool = True,
        draft: DraftConfig | None = None,
    ) -> None:
        if engine not in ("llguidance", "outlines"):
            raise ConfigError(f"engine must be 'llguidance' or 'outlines', got {engine!r}")
        get_syntax(syntax)
        if max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        self.backend = backend
        self.engine = engine
        self.syntax = syntax
        self.sampling = sampling or Sampling()
        self.prompt_builder: PromptBuilder = prompt_builder or DefaultPromptBuilder(syntax=syntax)
        self.max_new_tokens = max_new_tokens
        self.splice_forced = splice_forced
        self.draft = draft or DraftConfig()
        self._draft_lengths = DraftLength(self.draft.max_tokens)
        self._token_bytes: list[bytes] | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, object] | str | Path) -> EditSession:
        """A session from a dict or a TOML file. Session keys: ``engine``, ``syntax``,
        ``temperature``, ``top_p``, ``seed``, ``max_new_tokens``, ``splice_forced``,
        ``draft_tokens`` (0 turns speculative drafts off), ``draft_ngram``, ``prompt_example``
        (false drops the worked example from the prompt: ~140 tokens less context); every other
        key configures the backend (see :func:`copygram.backends.load`). Loading the default
        model takes ~0.2 s on llama.cpp, ~15 s on Transformers."""
        from copygram.backends import CONFIG_KEYS, load

        if isinstance(config, (str, Path)):
            try:
                config = tomllib.loads(Path(config).read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise ConfigError(f"config file {config} not found") from None
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"config file {config} is not valid TOML: {exc}") from None
        unknown = set(config) - _SESSION_KEYS - set(CONFIG_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown config key(s) {sorted(unknown)}; valid keys are "
                f"{sorted(_SESSION_KEYS | set(CONFIG_KEYS))} (see docs/config.md)"
            )
        # Every session value is checked before the model loads (seconds).
        sampling = Sampling(
            temperature=_number(config, "temperature", 0.0),
            top_p=_number(config, "top_p", 1.0),
            seed=int(_number(config, "seed", 0)),
        )
        syntax = str(config.get("syntax", DEFAULT_SYNTAX))
        prompt_builder = DefaultPromptBuilder(
            syntax=syntax, with_example=_flag(config, "prompt_example", True))
        max_new_tokens = int(_number(config, "max_new_tokens", 4096))
        splice_forced = _flag(config, "splice_forced", True)
        draft = DraftConfig(max_tokens=int(_number(config, "draft_tokens", DraftConfig.max_tokens)),
                            max_ngram=int(_number(config, "draft_ngram", 3)))
        backend = load({k: v for k, v in config.items() if k in CONFIG_KEYS})
        return cls(backend, engine=str(config.get("engine", "llguidance")), syntax=syntax,
                   sampling=sampling, prompt_builder=prompt_builder,
                   max_new_tokens=max_new_tokens, splice_forced=splice_forced, draft=draft)

    # -- public API -----------------------------------------------------------------------------

    def edit(self, document: str, instruction: str) -> EditResult:
        """Edit ``document`` as ``instruction`` asks; the text comes from :func:`resolve`."""
        for event in self.stream(document, instruction):
            if isinstance(event, DoneEvent):
                return event.result
        raise AssertionError("the decode loop ended without a result")  # pragma: no cover

    def stream(self, document: str, instruction: str) -> Iterator[Event]:
        """Like :meth:`edit`, yielding events as they happen; the last one is a DoneEvent."""
        return self._run(document, instruction, _SamplingPolicy(self.sampling))

    def replay(self, document: str, program: Program, *, instruction: str = "",
               measure_plain: bool = True) -> ReplayResult:
        """Teacher-force ``program`` through the backend exactly as the decode loop would run it,
        and, beside it, the plain cost of decoding ``resolve(program, document)`` token by token
        after the same prompt. How a perfect span selector would run."""
        text = resolve(program, document)
        policy = TeacherPolicy(program, self.syntax, self.backend, self._eos_ids(),
                               self.token_bytes())
        result: EditResult | None = None
        for event in self._run(document, instruction, policy):
            if isinstance(event, DoneEvent):
                result = event.result
        assert result is not None
        if result.text != text:
            raise GenerationError("replay diverged from the program (a bug: please report it)",
                                  partial_program=result.program_text)
        plain = self._plain_cost(text, result.stats.prompt_tokens) if measure_plain else None
        return ReplayResult(text=text, program=program, copygram=result.stats, plain=plain)

    # -- internals ------------------------------------------------------------------------------

    def token_bytes(self) -> list[bytes]:
        if self._token_bytes is None:
            self._token_bytes = self.backend.token_bytes()
        return self._token_bytes

    def _eos_ids(self) -> frozenset[int]:
        return self.backend.eos_token_ids

    def _prompt_ids(self, document: str, instruction: str) -> list[int]:
        prompt = self.prompt_builder.build(document, instruction, self.backend)
        return self.backend.tokenize(prompt, special=True)

    def _check_fits(self, prompt_ids: Sequence[int], document: str) -> None:
        # The copied lines land in the context too, so the edited document needs about as many
        # tokens as the original, plus markup.
        room = len(self.backend.tokenize(document)) + 64
        needed = len(prompt_ids) + room
        if needed > self.backend.context_length:
            raise DocumentError(
                f"the document does not fit the model's context: the prompt takes "
                f"{len(prompt_ids)} tokens and the edit needs about {room} more, but n_ctx is "
                f"{self.backend.context_length}; raise n_ctx in the config or edit a smaller part"
            )

    def _run(self, document: str, instruction: str, policy: Policy) -> Iterator[Event]:
        from copygram.constraints import compile_constraint

        lines = split_lines(document)
        if not lines:
            raise DocumentError(
                "the document is empty: there is nothing to copy, so Copy-as-Decode does not apply; "
                "generate the text directly instead"
            )
        backend = self.backend
        prompt_ids = self._prompt_ids(document, instruction)
        self._check_fits(prompt_ids, document)

        started = time.perf_counter()
        constraint = compile_constraint(document, backend, engine=self.engine, syntax=self.syntax)
        step = _Step(backend, constraint, lines, policy)
        stats = step.stats
        drafter = (Drafter(lines, backend.tokenize, self.token_bytes(), self.draft,
                           self.syntax, self._draft_lengths, instruction)
                   if self.draft.max_tokens else None)
        step.drafter = drafter
        stats.constraint_s += time.perf_counter() - started
        stats.prompt_tokens = len(prompt_ids)

        tick = time.perf_counter()
        logits = self._prefill(prompt_ids)
        stats.prefill_s = time.perf_counter() - tick

        gen_started = time.perf_counter()
        syntax = get_syntax(self.syntax)
        eos_ids = self._eos_ids()
        context: list[int] = []  # every token after the prompt: program tokens and copies
        pending: int | None = None  # a token already chosen from a verification forward
        while True:
            if pending is None:
                token = step.choose(logits)
            else:
                token, pending = pending, None
            if token in eos_ids or constraint_accepts_end(constraint, token):
                break
            if stats.program_tokens >= self.max_new_tokens:
                raise GenerationError(
                    f"no complete program after max_new_tokens={self.max_new_tokens} tokens; "
                    "raise max_new_tokens or simplify the instruction",
                    partial_program=constraint.program_text,
                )
            stats.decoded_tokens += 1
            yield step.token_event(token)
            feed = [token]
            was_in_text = syntax.in_gen_text(constraint.program_text)
            closed = step.consume(token)
            if not (was_in_text and syntax.in_gen_text(constraint.program_text)):
                stats.markup_forwards += 1
            while self.splice_forced and closed is None and (forced := step.forced()):
                for forced_token in forced:
                    feed.append(forced_token)
                    stats.forced_tokens += 1
                    closed = step.consume(forced_token)
                    if closed is not None:
                        break
            if closed is not None:
                yield step.add_copy(closed, feed)

            draft = (drafter.propose(constraint.program_text, context + feed, len(feed))
                     if drafter else None)
            if draft is None:
                self._check_room(feed, constraint)
                logits = step.forward(feed)
                context += feed
                continue

            # Verify the draft in the same forward that appends the feed: logits before each
            # draft token, and after the last one (or after the copy it closes).
            assert drafter is not None
            copy_ids = step.copy_tokens(draft.closes) if draft.closes else []
            with_content = bool(copy_ids) and drafter.with_content(draft, len(copy_ids))
            ids = feed + draft.tokens + (copy_ids if with_content else [])
            self._check_room(ids, constraint)
            rows = [len(feed) - 1 + t for t in range(len(draft.tokens))] + [len(ids) - 1]
            base = backend.n_tokens
            verified = step.forward_rows(ids, rows)
            accepted = 0
            for t, drafted in enumerate(draft.tokens):
                choice = step.choose(verified[t])
                if choice != drafted:
                    pending = choice
                    break
                accepted += 1
                stats.drafted_tokens += 1
                yield step.token_event(drafted)
                closed = step.consume(drafted)
                if closed is not None:
                    assert closed == draft.closes and t == len(draft.tokens) - 1
                    yield step.add_copy(closed, copy_ids, counted_in_feed=False)
            drafter.feedback(draft, accepted)
            if pending is not None:
                keep = len(feed) + accepted
                backend.truncate(base + keep)
                context += ids[:keep]
            elif draft.closes and not with_content:
                context += ids
                self._check_room(copy_ids, constraint)
                logits = step.forward(copy_ids)
                context += copy_ids
            else:
                logits = verified[-1]
                context += ids

        program_text = constraint.program_text
        program = parse(program_text, self.syntax)
        text = resolve(program, lines)
        stats.gen_ops = len(program) - len(program.copies())
        stats.output_tokens = len(backend.tokenize(text)) if text else 0
        stats.wall_s = time.perf_counter() - gen_started
        yield DoneEvent(EditResult(text=text, program=program, program_text=program_text,
                                   stats=stats))

    def _prefill(self, prompt_ids: list[int]) -> Logits:
        """Splice the prompt, reusing whatever prefix of it the cache already holds (the system
        message and worked example are the same for every edit)."""
        backend = self.backend
        cached = backend.cached_ids
        common = 0
        limit = min(len(cached), len(prompt_ids) - 1)  # splice at least one token for logits
        while common < limit and cached[common] == prompt_ids[common]:
            common += 1
        backend.truncate(common)
        return backend.splice(prompt_ids[common:])

    def _check_room(self, ids: Sequence[int], constraint: Constraint) -> None:
        if self.backend.n_tokens + len(ids) > self.backend.context_length:
            raise GenerationError(
                f"the edit ran out of context (n_ctx={self.backend.context_length}); raise n_ctx",
                partial_program=constraint.program_text,
            )

    def _plain_cost(self, text: str, prompt_tokens: int) -> RunStats:
        """Decode every token of ``text`` one forward at a time after the same prompt."""
        backend = self.backend
        ids = backend.tokenize(text) if text else []
        stats = RunStats(prompt_tokens=prompt_tokens, output_tokens=len(ids))
        backend.truncate(prompt_tokens)
        started = time.perf_counter()
        for token in ids:
            backend.decode(token)
        stats.wall_s = stats.decode_s = time.perf_counter() - started
        stats.decoded_tokens = stats.forwards = len(ids)
        return stats


def constraint_accepts_end(constraint: Constraint, token: int) -> bool:
    """Whether ``token`` is the constraint's own end-of-program token."""
    return token == constraint.eos_token_id and constraint.done


def _number(config: Mapping[str, object], key: str, default: float) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"config key {key!r} must be a number, got {value!r}")
    return float(value)


def _flag(config: Mapping[str, object], key: str, default: bool) -> bool:
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"config key {key!r} must be true or false, got {value!r}")
    return value


__all__ = ["CopyEvent", "DoneEvent", "EditResult", "EditSession", "Event", "GenTokenEvent",
           "ReplayResult", "TeacherPolicy"]
