"""EditSession: the public facade of constrained Copy-as-Decode editing, on any backend.

A session holds a backend (one model) and how to edit with it; each edit runs the decode loop of
:mod:`copygram.decode.loop` (the constraint, the splices, the verified drafts) in program mode, or
:mod:`copygram.decode.rewrite` (plain text, the document as its draft) in rewrite mode;
:func:`copygram.decode.replay.replay` teacher-forces a given program through the program loop and
:meth:`EditSession.complete` runs a chat completion (:mod:`copygram.decode.complete`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from copygram.config import (
    AUTO_REWRITE_TOKENS,
    BACKEND_KEYS,
    check_engine,
    check_flag,
    check_int,
    check_mode,
    check_on_damage,
    check_syntax_options,
    check_tie_tolerance,
    parse_config,
    program_retry_unchanged,
    program_search_scope,
    program_syntax,
    read_config,
)
from copygram.decode.checked import checked
from copygram.decode.complete import stream_completion
from copygram.decode.completion import Completion, CompletionEvent
from copygram.decode.document import EditDocument
from copygram.decode.drafting import DraftConfig
from copygram.decode.events import CopyEvent, DoneEvent, EditResult, Event, GenTokenEvent
from copygram.decode.loop import EditPlan, prepare, stream_edit
from copygram.decode.modes import choose_mode
from copygram.decode.policies import SamplingPolicy, TeacherPolicy
from copygram.decode.prompt import PromptBuilder, default_prompt_builder
from copygram.decode.replay import ReplayResult, replay, replay_rewrite
from copygram.decode.rewrite import stream_rewrite
from copygram.decode.sampling import Sampling
from copygram.errors import ConfigError
from copygram.language.damage import PROSE, guess_language
from copygram.language.ops import Program
from copygram.language.search_replace import SEARCH_REPLACE
from copygram.language.targets import targets_definitions

if TYPE_CHECKING:
    from copygram.backends.base import Backend


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
        syntax: str | None = None,
        sampling: Sampling | None = None,
        prompt_builder: PromptBuilder | None = None,
        max_new_tokens: int | None = None,
        splice_forced: bool = True,
        draft: DraftConfig | None = None,
        ordered_copies: bool = True,
        copy_to_end: bool = False,
        verify_copies: bool = False,
        merge_retyped: bool = False,
        search_plan: bool = False,
        search_scope: str | None = None,
        retry_unchanged: bool | None = None,
        tie_tolerance: float | None = None,
        mode: str = "auto",
        auto_rewrite_tokens: int = AUTO_REWRITE_TOKENS,
        on_damage: str = "rewrite",
    ) -> None:
        # The checks of copygram.config, so that keywords and config files fail alike.
        check_engine(engine)
        # None: program mode's default, head blocks (search/replace blocks whose search part is a
        # function's first line; docs/quality.md), or copy tags on the outlines engine.
        syntax = program_syntax(syntax, engine)
        search_scope = program_search_scope(search_scope, syntax)
        # None: on for blocks (a block that changes nothing is written again from the model's
        # most likely change; decode.unchanged), off for copy tags.
        retry_unchanged = program_retry_unchanged(retry_unchanged, syntax)
        # "rewrite": the model rewrites, the document drafts; "auto": per edit (decode.modes)
        self.mode = check_mode(mode)
        self.auto_rewrite_tokens = check_int("auto_rewrite_tokens", auto_rewrite_tokens,
                                             minimum=0)
        # An edit that would damage the file: redone in rewrite mode, refused or kept marked.
        self.on_damage = check_on_damage(on_damage)
        if max_new_tokens is not None:  # None: a budget derived from each document
            check_int("max_new_tokens", max_new_tokens, minimum=1)
        self.backend = backend
        self.engine = engine
        self.syntax = syntax
        self.sampling = sampling or Sampling()
        self.prompt_builder: PromptBuilder = prompt_builder or default_prompt_builder(
            mode, syntax, search_plan=search_plan, search_scope=search_scope)
        self.max_new_tokens = max_new_tokens
        self.splice_forced = splice_forced
        # None: the mode's default drafts, and a derived session in another mode gets its own.
        self._draft = draft
        self.draft = draft or DraftConfig.for_mode(self.mode)
        # Copies in document order bound every program by the document (docs/constraints.md).
        self.ordered_copies = check_flag("ordered_copies", ordered_copies)
        # A program may end only after a copy of the last line (needs ordered copies).
        self.copy_to_end = check_flag("copy_to_end", copy_to_end)
        if copy_to_end and not ordered_copies:
            raise ConfigError("copy_to_end needs ordered_copies=True (the end of the document "
                              "is known only when copies keep its order)")
        # A copy keeps only the lines the model, reading them, would have written itself.
        self.verify_copies = check_flag("verify_copies", verify_copies)
        # A block's replacement that types its run's neighbours again takes them into the run.
        self.merge_retyped = check_flag("merge_retyped", merge_retyped)
        # The program opens with the model's own "Plan:" line (its prompt asks for one).
        self.search_plan = check_flag("search_plan", search_plan)
        # How much a block's search part takes in; "head": one line, and the block replaces the
        # function or paragraph it opens.
        self.search_scope = search_scope
        self.retry_unchanged = retry_unchanged
        check_syntax_options(syntax, engine=engine, copy_to_end=copy_to_end,
                             verify_copies=verify_copies, merge_retyped=merge_retyped,
                             retry_unchanged=retry_unchanged,
                             search_plan=search_plan, search_scope=search_scope,
                             ordered_copies=ordered_copies)
        # Greedy choices read from batched rows within this margin are re-decided with a
        # one-token step (None: the backend's BatchProfile.step_tolerance).
        self.tie_tolerance = check_tie_tolerance(tie_tolerance)
        self._token_bytes: list[bytes] | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, object] | str | Path, *,
                    backend: Backend | None = None) -> EditSession:
        """A session from a flat dict or the path of a TOML file (every key: docs/config.md).

        The config is read and checked once, by :func:`copygram.config.parse_config`: an unknown
        key or a bad value is a :class:`~copygram.errors.ConfigError` before any model loads.
        Then :func:`copygram.backends.load` loads the model: ~0.2 s on llama.cpp, ~15 s on
        Transformers; reuse the session. ``backend``: an already loaded model to edit with
        instead (the config then must not name backend keys: they would not apply)."""
        from copygram.backends import load

        parsed = parse_config(config)
        if backend is not None:
            named = sorted(set(read_config(config)).intersection(BACKEND_KEYS))
            if named:
                raise ConfigError(f"this session shares a loaded model: backend keys "
                                  f"{', '.join(named)} do not apply; leave them out")
        c = parsed.session
        sampling = Sampling(temperature=c.temperature, top_p=c.top_p, seed=c.seed)
        # A built config holds the resolved names; resolving again only tells mypy so.
        syntax = program_syntax(c.syntax, c.engine)
        prompt_builder = default_prompt_builder(c.mode, syntax, with_example=c.prompt_example,
                                                line_view=c.line_view,
                                                search_scope=program_search_scope(
                                                    c.search_scope, syntax),
                                                search_plan=c.search_plan)
        draft = (None if c.draft_tokens is None and c.draft_ngram == DraftConfig.max_ngram
                 else DraftConfig(max_tokens=(DraftConfig.for_mode(c.mode).max_tokens
                                              if c.draft_tokens is None else c.draft_tokens),
                                  max_ngram=c.draft_ngram))
        return cls(backend or load(parsed.backend), engine=c.engine, syntax=c.syntax,
                   sampling=sampling,
                   prompt_builder=prompt_builder, max_new_tokens=c.max_new_tokens,
                   splice_forced=c.splice_forced, draft=draft, ordered_copies=c.ordered_copies,
                   copy_to_end=c.copy_to_end, verify_copies=c.verify_copies,
                   merge_retyped=c.merge_retyped, search_plan=c.search_plan,
                   search_scope=c.search_scope, retry_unchanged=c.retry_unchanged,
                   tie_tolerance=c.tie_tolerance, mode=c.mode,
                   auto_rewrite_tokens=c.auto_rewrite_tokens, on_damage=c.on_damage)

    # -- public API -----------------------------------------------------------------------------

    def edit(self, document: str, instruction: str, prediction: str | None = None, *,
             language: str | None = None) -> EditResult:
        """Edit ``document`` as ``instruction`` asks, in the mode :meth:`mode_for` picks
        (``EditResult.mode`` says which). Program mode: the text comes from
        :func:`resolve` of the program the model writes. Rewrite mode: the model's rewrite,
        drafted from ``prediction`` (default: the document), a surrounding code fence stripped
        (``EditResult.raw`` keeps the reply). A ``prediction`` in program mode is a
        :class:`~copygram.errors.ConfigError`.

        The result is checked before it is returned (:mod:`copygram.decode.checked`): an edit
        that would damage the file (the format's markers in it, a parse it breaks, a definition
        duplicated; a program that never finished or missed what the instruction names) is
        redone in rewrite mode, or raises
        :class:`~copygram.errors.DamagedEditError`, as ``on_damage`` says. ``language``: the
        document's (``"python"``, ``"javascript"``, ...: :data:`copygram.language.damage.LANGUAGES`,
        or ``"text"``: no code, the marker check alone); ``None`` guesses it from the text; an
        unknown one is a :class:`~copygram.errors.ConfigError` before the model runs."""
        for event in self.stream(document, instruction, prediction, language=language):
            if isinstance(event, DoneEvent):
                return event.result
        raise AssertionError("the decode loop ended without a result")  # pragma: no cover

    def stream(self, document: str, instruction: str, prediction: str | None = None, *,
               language: str | None = None) -> Iterator[Event]:
        """Like :meth:`edit`, yielding events as they happen; the last one is a DoneEvent (a
        program-mode edit redone in rewrite mode yields a RedoEvent, then rewrite mode's)."""
        doc = EditDocument(document, self.backend.tokenize)
        if language is None:  # guessed once, for the choice of mode and the check alike
            language = guess_language(document) or PROSE
        mode = self._mode_for(doc, instruction, prediction, language)
        policy = SamplingPolicy(self.sampling)
        if mode == "rewrite":
            rewriter = self if self.mode == "rewrite" else self.derive(mode="rewrite")
            events = stream_rewrite(rewriter.plan(), doc, instruction, policy, prediction)
            return checked(events, document, on_damage=self.on_damage, language=language)
        if prediction is not None:
            raise ConfigError("a prediction drafts a rewrite, and this session writes edit "
                              'programs: use mode="rewrite" (EditSession(..., mode="rewrite") '
                              'or mode = "rewrite" in the config)')
        rewrite = self.derive(mode="rewrite")

        def redo() -> Iterator[Event]:
            return stream_rewrite(rewrite.plan(), doc, instruction, policy)

        return checked(stream_edit(self.plan(), doc, instruction, policy), document,
                       on_damage=self.on_damage, language=language, instruction=instruction,
                       redo=redo)

    def mode_for(self, document: str, instruction: str, prediction: str | None = None, *,
                 language: str | None = None) -> str:
        """The mode, ``"program"`` or ``"rewrite"``, that an edit of ``document`` runs in this
        session (``mode = "auto"`` picks per edit: :func:`~copygram.decode.modes.choose_mode`).
        Tokenizes and parses the document (~1 ms a page)."""
        return self._mode_for(EditDocument(document, self.backend.tokenize), instruction,
                              prediction, language)

    def _mode_for(self, doc: EditDocument, instruction: str, prediction: str | None,
                  language: str | None) -> str:
        if self.mode != "auto":
            return self.mode
        if language is None:
            language = guess_language(doc.text) or PROSE
        return choose_mode(self.mode, len(doc.tokens),
                           auto_rewrite_tokens=self.auto_rewrite_tokens,
                           prediction=prediction is not None,
                           names_definitions=targets_definitions(doc.text, instruction, language))

    def prompt(self, document: str, instruction: str) -> str:
        """The exact prompt text an edit of ``document`` sends in this session's mode (decode it
        greedily, token by token, to reproduce a rewrite-mode edit)."""
        return self.prompt_builder.build(document, instruction, self.backend)

    def complete(self, messages: Sequence[dict[str, str]], *, prediction: str | None = None,
                 max_tokens: int | None = None, sampling: Sampling | None = None,
                 stop: Sequence[str] = ()) -> Iterator[CompletionEvent]:
        """A chat completion: the model's chat template over ``messages`` (``{"role",
        "content"}`` dicts), generated as plain text with ``prediction`` (any text the reply is
        expected to resemble, as in OpenAI's Predicted Outputs) as the speculative draft. Under
        greedy decoding the reply is token-identical with and without a prediction.

        Events (:mod:`copygram.decode.completion`), in order: a ``TokenEvent(token_id, text)``
        for each token the model chose itself (not from the draft), a ``SpanEvent(token_ids,
        text, source)`` for each run of predicted tokens it accepted (verified in one forward),
        and last a ``CompletionDoneEvent(result, text)``. Every event's ``text`` is the output
        text it makes final; joined over all events they are ``result.text`` (text that might
        begin a stop string, or a cut UTF-8 character, waits for a later event). ``result`` is a
        ``Completion``: ``text`` (cut before the first ``stop`` string), ``raw`` (every
        generated token's text), ``token_ids``, ``stop_reason`` (``"eos"``, ``"stop"``,
        ``"max_tokens"``, ``"context"``), ``finish_reason`` (``"stop"`` or ``"length"``),
        ``prompt_tokens``, ``completion_tokens``, ``accepted_prediction_tokens``,
        ``rejected_prediction_tokens`` and ``stats`` (a ``RunStats``: forwards, decoded tokens,
        tie steps, times).

        ``max_tokens``: generated tokens at most (``None``: what the context holds);
        ``sampling``: this call's (default: the session's). Raises
        :class:`~copygram.errors.DocumentError` (saying by how many tokens) when the prompt
        leaves no room to generate, :class:`~copygram.errors.ConfigError` for a bad
        ``max_tokens``. The checks run when this is called; generation when iterated."""
        if max_tokens is not None:
            check_int("max_tokens", max_tokens, minimum=1)
        stops = (stop,) if isinstance(stop, str) else tuple(stop)
        return stream_completion(self.plan(), messages, SamplingPolicy(sampling or self.sampling),
                                 prediction=prediction, max_tokens=max_tokens, stop=stops)

    def replay(self, document: str, program: Program, *, instruction: str = "",
               measure_plain: bool = True) -> ReplayResult:
        """Teacher-force ``program`` through the backend exactly as the decode loop would run it,
        and, beside it, the plain cost of decoding ``resolve(program, document)`` token by token
        after the same prompt. How a perfect span selector would run."""
        if self.syntax == SEARCH_REPLACE:
            raise ConfigError('replay teacher-forces copy tags; syntax "search_replace" has '
                              'none: replay with syntax "lines" or "compact"')
        return replay(self.plan(), document, program, instruction=instruction,
                      measure_plain=measure_plain)

    def replay_rewrite(self, document: str, output: str, *, instruction: str = "",
                       prediction: str | None = None) -> Completion:
        """Teacher-force ``output`` through rewrite mode's loop, drafting from ``prediction``
        (default: ``document``): what the edit costs when the model writes exactly ``output``
        (:func:`~copygram.decode.replay.replay_rewrite`; the prompt is this session's, so a
        session in rewrite mode gives rewrite mode's)."""
        return replay_rewrite(self.plan(), document, output, instruction=instruction,
                              prediction=prediction)

    def derive(self, *, mode: str | None = None, sampling: Sampling | None = None,
               max_new_tokens: int | None = None) -> EditSession:
        """A session over the same backend (the same model and KV cache) with every setting of
        this one but those given: ``mode`` (the prompt follows the mode: this session's builder
        in its own mode, the default one in the other), ``sampling``, ``max_new_tokens``.
        Microseconds: the vocabulary's bytes are shared, not read again."""
        mode = self.mode if mode is None else mode
        # Program and auto sessions share one prompt (auto's programs are program mode's).
        same_prompt = (mode == "rewrite") == (self.mode == "rewrite")
        other = EditSession(
            self.backend, engine=self.engine, syntax=self.syntax,
            sampling=sampling or self.sampling,
            prompt_builder=self.prompt_builder if same_prompt else None,
            max_new_tokens=self.max_new_tokens if max_new_tokens is None else max_new_tokens,
            splice_forced=self.splice_forced, draft=self._draft,
            ordered_copies=self.ordered_copies, copy_to_end=self.copy_to_end,
            verify_copies=self.verify_copies, merge_retyped=self.merge_retyped,
            search_plan=self.search_plan, search_scope=self.search_scope,
            retry_unchanged=self.retry_unchanged, tie_tolerance=self.tie_tolerance, mode=mode,
            auto_rewrite_tokens=self.auto_rewrite_tokens, on_damage=self.on_damage)
        other._token_bytes = self._token_bytes
        return other

    def prepare(self) -> None:
        """Build now what this session's first edit would build once per model, so that it is
        not the slow one: the vocabulary's bytes and, in program mode, the constraint engine's
        view of the vocabulary (~1.4 s for Qwen2.5's 151k tokens on a 2-core CPU). Optional;
        ``copygram serve`` calls it before it takes requests."""
        self.token_bytes()
        if self.mode != "rewrite":
            prepare(self.plan())

    def plan(self) -> EditPlan:
        """What the decode loop needs from this session (read afresh for every edit)."""
        return EditPlan(backend=self.backend, token_bytes=self.token_bytes(),
                        prompt_builder=self.prompt_builder, engine=self.engine,
                        syntax=self.syntax, max_new_tokens=self.max_new_tokens,
                        splice_forced=self.splice_forced, draft=self.draft,
                        ordered_copies=self.ordered_copies, copy_to_end=self.copy_to_end,
                        verify_copies=self.verify_copies, merge_retyped=self.merge_retyped,
                        search_plan=self.search_plan, search_scope=self.search_scope,
                        retry_unchanged=self.retry_unchanged,
                        tie_tolerance=self.tie_tolerance)

    def token_bytes(self) -> list[bytes]:
        if self._token_bytes is None:
            self._token_bytes = self.backend.token_bytes()
        return self._token_bytes


__all__ = ["CompletionEvent", "CopyEvent", "DoneEvent", "EditResult", "EditSession", "Event",
           "GenTokenEvent", "ReplayResult", "TeacherPolicy"]
