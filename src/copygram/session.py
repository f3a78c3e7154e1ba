"""EditSession: the public facade of constrained Copy-as-Decode editing, on any backend.

A session holds a backend (one model) and its options (one :class:`~copygram.config.SessionConfig`);
each edit runs the decode loop of :mod:`copygram.decode.loop` (the constraint, the splices, the
verified drafts) in program mode, or :mod:`copygram.decode.rewrite` (plain text, the document as
its draft) in rewrite mode, and :meth:`EditSession.complete` runs a chat completion
(:mod:`copygram.decode.plain_text`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from copygram.config import (
    BACKEND_KEYS,
    BackendConfig,
    Config,
    SessionConfig,
    check_int,
    flat_keys,
    parse_config,
    read_config,
)
from copygram.decode.checked import checked
from copygram.decode.document import EditDocument
from copygram.decode.drafting import DraftConfig
from copygram.decode.events import (
    CompletionEvent,
    CopyEvent,
    DoneEvent,
    EditResult,
    Event,
    SpanEvent,
    TokenEvent,
)
from copygram.decode.formats import prompt_builder
from copygram.decode.loop import prepare, prompt_document, prompt_instruction, stream_edit
from copygram.decode.modes import choose_mode
from copygram.decode.plain_text import stream_completion
from copygram.decode.policies import SamplingPolicy, TeacherPolicy
from copygram.decode.prompt import PromptBuilder
from copygram.decode.renames import renamed_documentation
from copygram.decode.rewrite import stream_rewrite
from copygram.decode.sampling import Sampling
from copygram.decode.scoped import kept_text, scoped_redo, scoped_rewrite
from copygram.decode.setup import EditSetup, draft_config, sampling
from copygram.decode.tab_view import in_tabs
from copygram.errors import ConfigError
from copygram.language.damage import PROSE, code_language, guess_language
from copygram.language.indent_style import asks_layout, spaced_view
from copygram.language.parsers import LANGUAGES
from copygram.language.reading import Reading, read_edit

if TYPE_CHECKING:
    from copygram.backends.base import Backend


class EditSession:
    """Edit documents with a model through Copy-as-Decode.

    Build one per model (loading a model costs seconds; reuse the session): ``EditSession(backend)``
    or ``EditSession.from_config({...})``. Every edit compiles the document's constraint (~1 ms
    for llguidance, cached per line count) and runs the decode loop.
    """

    def __init__(self, backend: Backend, options: SessionConfig | None = None, /,
                 **changes: object) -> None:
        """``options``: how to edit (default: ``SessionConfig()``), with ``changes`` applied
        (option names as keywords: ``EditSession(backend, mode="rewrite")``), checked once by
        :meth:`SessionConfig.replace`: a bad value is a :class:`~copygram.errors.ConfigError`
        that names the option."""
        if "options" in changes:
            raise ConfigError("pass the options object second, by position: "
                              "EditSession(backend, options), or its keys as keywords")
        options = options if options is not None else SessionConfig()
        self.options: SessionConfig = options.replace(**changes) if changes else options
        self.backend = backend
        self._custom_prompt: PromptBuilder | None = None
        self.prompt_builder: PromptBuilder = prompt_builder(self.options)
        self._token_bytes: list[bytes] | None = None

    def with_prompt(self, builder: PromptBuilder) -> EditSession:
        """This session sending ``builder``'s prompt instead of its mode's own (kept by
        :meth:`derive` into a mode that sends the same kind of prompt: program and auto
        sessions send a program prompt, rewrite sessions a rewrite prompt)."""
        other = EditSession(self.backend, self.options)
        other._custom_prompt = other.prompt_builder = builder
        other._token_bytes = self._token_bytes
        return other

    @classmethod
    def from_config(cls, config: Mapping[str, object] | str | Path | Config, *,
                    backend: Backend | None = None) -> EditSession:
        """A session from a config: a dict, the path of a TOML file (every key: docs/config.md)
        or a :class:`~copygram.config.Config` already parsed.

        The config is read and checked once, by :func:`copygram.config.parse_config`: an unknown
        key or a bad value is a :class:`~copygram.errors.ConfigError` before any model loads.
        Then :func:`copygram.backends.load` loads the model: ~0.2 s on llama.cpp, ~15 s on
        Transformers; reuse the session. ``backend``: an already loaded model to edit with
        instead (the config then must not set backend keys: they would not apply)."""
        from copygram.backends import load

        if isinstance(config, Config):
            parsed, default = config, BackendConfig()
            named = [key for key in BACKEND_KEYS
                     if getattr(config.backend, key) != getattr(default, key)]
        else:
            written = read_config(config)  # a file is read once
            parsed = parse_config(written)
            named = sorted(set(flat_keys(written)).intersection(BACKEND_KEYS))
        if backend is not None and named:
            raise ConfigError(f"this session shares a loaded model: backend keys "
                              f"{', '.join(named)} do not apply; leave them out")
        return cls(backend or load(parsed.backend), parsed.session)

    @property
    def mode(self) -> str:
        """The session's mode: ``"auto"``, ``"program"`` or ``"rewrite"``."""
        return self.options.mode

    @property
    def sampling(self) -> Sampling:
        """The options' sampling (``temperature``, ``top_p``, ``seed``)."""
        return sampling(self.options)

    @property
    def draft(self) -> DraftConfig:
        """The drafts of this session's mode (:func:`~copygram.decode.setup.draft_config`)."""
        return draft_config(self.options)

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
        document's (``"python"``, ``"javascript"``, ...: :data:`copygram.language.damage.LANGUAGES`;
        a data file's ``"json"``, ``"toml"`` or ``"yaml"``, its own parser's check; or
        ``"text"``: no code, the marker check alone); ``None`` guesses it from the text; an
        unknown one is a :class:`~copygram.errors.ConfigError` before the model runs."""
        for event in self.stream(document, instruction, prediction, language=language):
            if isinstance(event, DoneEvent):
                return event.result
        raise AssertionError("the decode loop ended without a result")  # pragma: no cover

    def stream(self, document: str, instruction: str, prediction: str | None = None, *,
               language: str | None = None) -> Iterator[Event]:
        """Like :meth:`edit`, yielding events as they happen; the last one is a DoneEvent (a
        program-mode edit redone in rewrite mode yields a RedoEvent, then rewrite mode's)."""
        language, view = self._view(document, instruction, prediction, language)
        if view is None:
            return self._stream(document, instruction, prediction, language)
        # The model edits a tab-indented file better in its own four spaces (decode.tab_view).
        return in_tabs(self._stream(view, instruction, None, language), document, view,
                       language, self.options.on_damage, self.backend.tokenize)

    def _view(self, document: str, instruction: str, prediction: str | None,
              language: str | None) -> tuple[str, str | None]:
        """``document``'s language (``language``, else guessed once, for the choice of mode and
        the check alike) and the view of it the model edits where it is indented by tabs
        (``tabs_as_spaces``), or ``None``: the document as it is."""
        if language is None:
            language = guess_language(document) or PROSE
        if (self.options.tabs_as_spaces and self.mode != "rewrite" and prediction is None
                and language in LANGUAGES and not asks_layout(instruction)):
            return language, spaced_view(document)
        return language, None

    def _stream(self, document: str, instruction: str, prediction: str | None,
                language: str) -> Iterator[Event]:
        doc = EditDocument(document, self.backend.tokenize)
        # A data file is prose to every reader but the damage check, which parses it.
        checks, language = language, code_language(language)
        # Read once, for the choice of mode, the program's prompt and constraint and the redo.
        reading = None if self.mode == "rewrite" else read_edit(document, instruction, language)
        mode = self._mode_for(doc, instruction, prediction, language, reading)
        policy = SamplingPolicy(self.sampling)
        if mode == "rewrite":
            rewriter = self if self.mode == "rewrite" else self.derive(mode="rewrite")
            if (reading is not None and (reading.removes_part or reading.passages)
                    and prediction is None):
                # Auto's rewrite of a part of a long file's definition or of the passages of a
                # text that its instruction quotes: their excerpt, refused where it misses
                # (decode.modes).
                scoped = scoped_rewrite(rewriter.setup(), doc, instruction, policy, language,
                                        reading)
                if scoped is not None:
                    return checked(scoped(), document, on_damage=self.options.on_damage,
                                   language=checks, instruction=instruction, misses=True,
                                   chosen=True)
            events = stream_rewrite(rewriter.setup(), doc, instruction, policy, prediction)
            # Auto's rewrite: a reply that was part of the text is put back in it, its lost
            # paragraphs or definitions kept, and one that certainly missed is refused; rewrite
            # mode's partial reply is refused. A predicted rewrite's reply is the caller's to
            # read (the Predicted Outputs API): not read for loss or misses.
            chosen = reading is not None and prediction is None
            if language == PROSE:
                events = kept_text(events, document, instruction, put_back=chosen)
            return checked(events, document, on_damage=self.options.on_damage,
                           language=checks, chosen=chosen,
                           instruction=instruction if prediction is None else "")
        if prediction is not None:
            raise ConfigError("a prediction drafts a rewrite, and this session writes edit "
                              'programs: use mode="rewrite" (EditSession(..., mode="rewrite") '
                              'or mode = "rewrite" in the config)')
        redo = scoped_redo(self.derive(mode="rewrite").setup(), doc, instruction, policy, language,
                           reading)
        events = checked(stream_edit(self.setup(), doc, instruction, policy, language, reading),
                         document, on_damage=self.options.on_damage, language=checks,
                         instruction=instruction, redo=redo, chosen=True)
        return renamed_documentation(events, reading.renamed if reading else (), language)

    def mode_for(self, document: str, instruction: str, prediction: str | None = None, *,
                 language: str | None = None) -> str:
        """The mode, ``"program"`` or ``"rewrite"``, that an edit of ``document`` runs in this
        session (``mode = "auto"`` picks per edit: :func:`~copygram.decode.modes.choose_mode`).
        Tokenizes and parses the document (~1 ms a page)."""
        language, view = self._view(document, instruction, prediction, language)
        return self._mode_for(EditDocument(view or document, self.backend.tokenize),
                              instruction, prediction, language)

    def _mode_for(self, doc: EditDocument, instruction: str, prediction: str | None,
                  language: str | None, reading: Reading | None = None) -> str:
        if self.mode != "auto":
            return self.mode
        language = code_language(language or guess_language(doc.text) or PROSE)
        if reading is None:
            reading = read_edit(doc.text, instruction, language)
        return choose_mode(self.mode, len(doc.tokens),
                           auto_rewrite_tokens=self.options.auto_rewrite_tokens,
                           auto_program_tokens=self.options.auto_program_tokens,
                           prediction=prediction is not None,
                           names_definitions=reading.names_definitions,
                           documentation=reading.documentation, listed=reading.listed,
                           language=language,
                           rewrite_languages=self.options.auto_rewrite_languages,
                           introduces=reading.introduces, placed=reading.placed,
                           removes_part=reading.removes_part,
                           passages=bool(reading.passages), renames=bool(reading.renamed),
                           focus_tokens=self.options.focus_tokens)

    def prompt(self, document: str, instruction: str, *, language: str | None = None) -> str:
        """The exact prompt text an edit of ``document`` sends in this session's mode (decode it
        greedily, token by token, to reproduce a rewrite-mode edit); in program mode a long
        document may be shown as a view of what the instruction names
        (:func:`~copygram.decode.loop.prompt_document`; ``language`` as :meth:`edit` takes
        it)."""
        if self.mode == "program":
            language = code_language(language or guess_language(document) or PROSE)
            doc = EditDocument(document, self.backend.tokenize)
            reading = read_edit(document, instruction, language)
            document = prompt_document(self.setup(), doc, instruction, language, reading)
            instruction = prompt_instruction(self.setup(), doc, instruction, language, reading)
        return self.prompt_builder.build(document, instruction, self.backend)

    def complete(self, messages: Sequence[dict[str, str]] | str, *,
                 prediction: str | None = None, max_tokens: int | None = None,
                 sampling: Sampling | None = None,
                 stop: Sequence[str] = ()) -> Iterator[CompletionEvent]:
        """A chat completion: the model's chat template over ``messages`` (``{"role",
        "content"}`` dicts; a string is the prompt itself, as a legacy completion's, its special
        tokens read as such), generated as plain text with ``prediction`` (any text the reply is
        expected to resemble, as in OpenAI's Predicted Outputs) as the speculative draft. Under
        greedy decoding the reply is token-identical with and without a prediction.

        Events (:mod:`copygram.decode.events`, as an edit's), in order: a ``TokenEvent(token_id,
        text, start, end)`` for each token the model chose itself (not from the draft), a
        ``SpanEvent(token_ids, text, source, start, end)`` for each run of predicted tokens it
        accepted (verified in one forward), and last a ``DoneEvent(result, text)``. Every event's ``text`` is the output
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
        return stream_completion(self.setup(), messages, SamplingPolicy(sampling or self.sampling),
                                 prediction=prediction, max_tokens=max_tokens, stop=stops)

    def derive(self, **changes: object) -> EditSession:
        """A session over the same backend (the same model and KV cache) with these options but
        ``changes`` (option names as keywords: ``derive(mode="rewrite", temperature=0.7)``).
        The prompt follows the mode: a builder given to this session is kept in a mode that
        sends the same kind of prompt, the mode's own is built otherwise. Microseconds: the
        vocabulary's bytes are shared, not read again."""
        options = self.options.replace(**changes)
        # Program and auto sessions share one prompt (auto's programs are program mode's).
        same_prompt = (options.mode == "rewrite") == (self.mode == "rewrite")
        other = EditSession(self.backend, options)
        if same_prompt and self._custom_prompt is not None:
            other._custom_prompt = other.prompt_builder = self._custom_prompt
        other._token_bytes = self._token_bytes
        return other

    def prepare(self) -> None:
        """Build now what this session's first edit would build once per model, so that it is
        not the slow one: the vocabulary's bytes and, in program mode, the constraint engine's
        view of the vocabulary (~1.4 s for Qwen2.5's 151k tokens on a 2-core CPU). Optional;
        ``copygram serve`` calls it before it takes requests."""
        self.token_bytes()
        if self.mode != "rewrite":
            prepare(self.setup())

    def setup(self) -> EditSetup:
        """What a decode run needs from this session: the backend, the vocabulary's bytes, the
        prompt builder and the options (:class:`~copygram.decode.setup.EditSetup`)."""
        return EditSetup(backend=self.backend, token_bytes=self.token_bytes(),
                         prompt_builder=self.prompt_builder, options=self.options)

    def token_bytes(self) -> list[bytes]:
        if self._token_bytes is None:
            self._token_bytes = self.backend.token_bytes()
        return self._token_bytes


__all__ = ["CompletionEvent", "CopyEvent", "DoneEvent", "EditResult", "EditSession", "Event",
           "SpanEvent", "TeacherPolicy", "TokenEvent"]
