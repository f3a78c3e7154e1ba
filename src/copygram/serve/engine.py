"""What a request runs on the model: each endpoint's work as an iterator of :data:`Item` s.

These functions run on the queue's worker thread (:mod:`copygram.serve.queue`), the only thread
that touches the session. Every one yields :class:`Started` once the request is known to fit and
the model has computed its first batch of the prompt (so that a streamed response can still
answer an error with its status code until then, and a long prompt's stream opens after seconds,
not minutes: :func:`computed`), then :class:`Delta` s of output text or :class:`Progress`
events, then one :class:`Finished`. A bad request found only here (a document or conversation
that does not fit the context) is an :class:`~copygram.serve.schemas.ApiError`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from copygram.errors import (
    ConfigError,
    CopygramError,
    DamagedEditError,
    DocumentError,
    GenerationError,
    LengthError,
)
from copygram.serve.items import (
    Delta,
    Finished,
    Item,
    Progress,
    Started,
    Usage,
    computed,
    prefill_progress,
)
from copygram.serve.legacy import CompletionRequest
from copygram.serve.schemas import (
    ApiError,
    ChatRequest,
    EditRequest,
    Generation,
    JSONObject,
)

if TYPE_CHECKING:
    from copygram.decode.sampling import Sampling
    from copygram.decode.stats import RunStats
    from copygram.session import EditSession


class SessionHolder:
    """The one session of the server, built by ``factory`` on first use (on the worker thread).
    A factory that fails is not retried: every request then gets a 503 with its message."""

    def __init__(self, factory: Callable[[], EditSession]) -> None:
        self._factory = factory
        self._session: EditSession | None = None
        self._error: str | None = None
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        return self._session is not None

    @property
    def error(self) -> str | None:
        return self._error

    def get(self) -> EditSession:
        with self._lock:
            if self._session is None and self._error is None:
                try:
                    self._session = self._factory()
                except Exception as exc:  # noqa: BLE001 - reported on every request
                    self._error = f"{type(exc).__name__}: {exc}"
            if self._session is None:
                raise ApiError(503, f"the model could not be loaded: {self._error}",
                               kind="server_error", code="model_unavailable")
            return self._session


STAT_KEYS = ("prompt_tokens", "output_tokens", "decoded_tokens", "forced_tokens",
             "spliced_tokens", "drafted_tokens", "rejected_tokens", "forwards", "tie_steps",
             "copy_ops", "gen_ops", "unchanged_retries", "doc_renames", "restored_definitions",
             "restored_documentation", "restyled_lines", "tabbed_lines",
             "prefill_s", "decode_s", "splice_s", "constraint_s", "wall_s")


def stats_dict(stats: RunStats) -> JSONObject:
    """The run's counters and timings (the per-forward lists left out)."""
    return {key: getattr(stats, key) for key in STAT_KEYS if hasattr(stats, key)}


def bad_document(exc: DocumentError, param: str) -> ApiError:
    """A :class:`DocumentError` from the session as a 400 (it says what to do, and for a
    context that is too small by how much)."""
    context = "context" in str(exc)
    return ApiError(400, str(exc), param=param,
                    code="context_length_exceeded" if context else "invalid_value")


def failed(exc: CopygramError) -> ApiError:
    """An error of the model's run (no complete program, a backend failure) as a 500."""
    message = str(exc)
    if isinstance(exc, GenerationError) and exc.partial_program:
        message += f" (partial program: {exc.partial_program[:2000]!r})"
    # The model's edit would damage the file (decode.checked): nothing the client sent was
    # wrong, and a retry gives the same edit.
    code = "damaged_edit" if isinstance(exc, DamagedEditError) else "generation_failed"
    return ApiError(500, message, kind="server_error", code=code)


# ------------------------------------------------------------------------------ /v1/edits


def program_edit(session: EditSession, request: EditRequest) -> Iterator[Item]:
    """``mode: "program"``: the model writes an edit program (copygram's decode loop). The
    stream's events are the tokens the model chose and the drafted spans it accepted
    (``start``/``end``: their bytes in the program text; ``text`` the program text each makes
    final, the markup the grammar forced since the last event included) and the copies; the
    final item holds the whole program. A run that reaches ``max_tokens`` before its program is complete
    ends with ``finish_reason`` ``"length"``, no text and the partial program. A program whose
    edit would damage the file is followed by a ``redo`` event (the damage found) and the
    rewrite's ``text`` events (``on_damage``, :mod:`copygram.decode.checked`)."""
    from copygram.decode.events import (
        CopyEvent,
        DoneEvent,
        PrefillEvent,
        RedoEvent,
        RetractEvent,
        SpanEvent,
        TokenEvent,
    )
    from copygram.decode.stats import RunStats

    started, redone = False, False
    try:
        for event in session.stream(request.document, request.instruction,
                                    language=request.language):
            if not computed(event):
                continue
            if not started:
                started = True
                yield Started()
            if isinstance(event, PrefillEvent):
                yield prefill_progress(event)
            elif isinstance(event, TokenEvent | SpanEvent) and redone:  # the rewrite that redoes it
                if event.text:
                    yield Progress({"type": "text", "text": event.text,
                                    "drafted": isinstance(event, SpanEvent)})
            elif isinstance(event, TokenEvent | SpanEvent):
                yield Progress({"type": "token", "text": event.text,
                                "drafted": isinstance(event, SpanEvent), "start": event.start,
                                "end": event.end})
            elif isinstance(event, CopyEvent):
                yield Progress({"type": "copy", "start": event.lines.start,
                                "end": event.lines.end, "n_tokens": event.n_tokens})
            elif isinstance(event, RetractEvent):
                # A cut copy's tag (verify_copies) or a block that changed nothing
                # (retry_unchanged) is written again from this byte on.
                yield Progress({"type": "retract", "start": event.start})
            elif isinstance(event, RedoEvent):
                redone = True
                yield Progress({"type": "redo",
                                "damage": [str(d) for d in event.result.damage]})
            elif isinstance(event, DoneEvent):
                result = event.result
                stats = result.stats
                yield Finished(text=result.text,
                               program=None if result.mode == "rewrite" else result.program_text,
                               usage=Usage(stats.prompt_tokens, stats.program_tokens,
                                           cached_tokens=stats.cached_prompt_tokens),
                               stats=stats_dict(stats), mode=result.mode)
                return
    except DocumentError as exc:
        raise bad_document(exc, "document") from None
    except LengthError as exc:
        partial = exc.stats
        if not isinstance(partial, RunStats):
            raise failed(exc) from None
        # The client's budget (or the context) ran out, as a chat reply cut by max_tokens is: a
        # 200 with finish_reason "length" (a streamed response has begun by now anyway). A
        # partial program resolves to no document, so there is no text; the program is attached.
        if not started:
            yield Started()
        yield Finished(text=None, finish_reason="length", program=exc.partial_program,
                       usage=Usage(partial.prompt_tokens, partial.program_tokens,
                                   cached_tokens=partial.cached_prompt_tokens),
                       stats=stats_dict(partial), mode="program")
    except CopygramError as exc:
        raise failed(exc) from None


def rewrite_edit(session: EditSession, request: EditRequest) -> Iterator[Item]:
    """``mode: "rewrite"``: the model rewrites the document as plain text, drafted from the
    ``prediction`` (default: the document). The stream's events are the raw reply's text
    (``drafted``: accepted from the draft); the final item's text is the document taken out of
    the reply (a surrounding code fence stripped). A reply cut by ``max_tokens`` or the context
    ends with ``finish_reason`` ``"length"`` and no text (the session's ``on_damage = "keep"``:
    the cut text), its reply as ``program``."""
    from copygram.decode.events import DoneEvent, EditResult, PrefillEvent, SpanEvent, TokenEvent

    def finished(result: EditResult, text: str | None) -> Finished:
        stats = result.stats
        return Finished(text=text, usage=Usage(
            stats.prompt_tokens, stats.output_tokens, stats.drafted_tokens,
            stats.rejected_tokens, stats.cached_prompt_tokens),
            finish_reason=result.finish_reason, program=result.raw if text is None else None,
            stats=stats_dict(stats), mode="rewrite")

    started = False
    try:
        for event in session.stream(request.document, request.instruction, request.prediction,
                                    language=request.language):
            if not computed(event):
                continue
            if not started:
                started = True
                yield Started()
            if isinstance(event, PrefillEvent):
                yield prefill_progress(event)
            if isinstance(event, TokenEvent | SpanEvent | DoneEvent) and event.text:
                yield Progress({"type": "text", "text": event.text,
                                "drafted": isinstance(event, SpanEvent)})
            if isinstance(event, DoneEvent):
                yield finished(event.result, event.result.text)
                return
    except DocumentError as exc:
        raise bad_document(exc, "document") from None
    except DamagedEditError as exc:
        cut = exc.result
        if not isinstance(cut, EditResult) or cut.finish_reason != "length":
            raise failed(exc) from None
        # The reply stopped on max_tokens (or the context) and the file would be cut short: as a
        # program cut so, a 200 with finish_reason "length", no text, and the reply so far.
        if not started:
            yield Started()
        yield finished(cut, None)
    except CopygramError as exc:
        raise failed(exc) from None


def request_mode(session: EditSession, request: EditRequest) -> str:
    """The mode, ``"program"`` or ``"rewrite"``, that runs ``request``: its own, else the
    session's; ``"auto"`` picks by the document's length (:meth:`EditSession.mode_for`). A
    prediction for a program-mode edit is a 400."""
    mode = request.mode or session.mode
    if mode == "auto":
        auto = session if session.mode == "auto" else session.derive(mode="auto")
        return auto.mode_for(request.document, request.instruction, request.prediction,
                             language=request.language)
    if request.prediction is not None and mode == "program":
        raise ApiError(400, "'prediction' drafts a rewrite, and this server's edits are "
                       "programs: send mode 'rewrite' or 'auto' with it", param="prediction",
                       code="invalid_value")
    return mode


def for_request(session: EditSession, request: EditRequest, mode: str) -> EditSession:
    """``session``, or a session over the same backend (the same model and KV cache: the prefix
    one request's prompt left is reused by the next, whatever its mode) in ``mode``, or in
    ``"auto"`` where the request runs in auto (whose choice ``mode`` is: its rewrites are the
    ones it chose, with what auto does for them, an excerpt or a paragraph rewritten alone,
    definitions a reply left out put back), with the request's sampling and ``max_tokens`` (as
    ``max_new_tokens``: the program's tokens, or the rewrite's). Built per request:
    microseconds, with the vocabulary's bytes shared."""
    options = request.generation
    if (request.mode or session.mode) == "auto":
        mode = "auto"
    if session.mode == mode and options == Generation():
        return session
    session.token_bytes()  # read once here, shared by every derived session
    sampling = sampling_for(session, options)
    return session.derive(mode=mode, temperature=sampling.temperature, top_p=sampling.top_p,
                          seed=sampling.seed,
                          max_new_tokens=(session.options.max_new_tokens
                                          if options.max_tokens is None else options.max_tokens))


def edit(session: EditSession, request: EditRequest) -> Iterator[Item]:
    """The work of one ``/v1/edits`` request."""
    mode = request_mode(session, request)
    run = program_edit if mode == "program" else rewrite_edit
    return run(for_request(session, request, mode), request)


# ------------------------------------------------------------------------ chat completions


def sampling_for(session: EditSession, options: Generation) -> Sampling:
    """The request's sampling, each key the session's where the request leaves it out. A
    ``top_p`` of 0 keeps only the likeliest token: greedy."""
    from copygram.decode.sampling import Sampling

    base = session.sampling
    temperature = base.temperature if options.temperature is None else options.temperature
    top_p = base.top_p if options.top_p is None else options.top_p
    if top_p == 0:
        temperature, top_p = 0.0, 1.0
    return Sampling(temperature=temperature, top_p=top_p,
                    seed=base.seed if options.seed is None else options.seed)


def chat(session: EditSession, request: ChatRequest | CompletionRequest) -> Iterator[Item]:
    """The work of one ``/v1/chat/completions`` request (or ``/v1/completions``: the prompt text
    as it is): :meth:`EditSession.complete` (the chat template, the context check, the
    prediction as the draft, stop strings held back)."""
    from copygram.decode.events import DoneEvent, PrefillEvent

    prompt = (request.prompt if isinstance(request, CompletionRequest)
              else [m.as_dict() for m in request.messages])
    try:
        events = session.complete(prompt,
                                  prediction=request.prediction,
                                  max_tokens=request.generation.max_tokens,
                                  sampling=sampling_for(session, request.generation),
                                  stop=request.stop)
        started = False
        for event in events:
            if not computed(event):
                continue
            if not started:
                started = True
                yield Started()
            if isinstance(event, PrefillEvent):
                yield prefill_progress(event)  # a comment line: a long prompt's keep-alive
            elif event.text:
                yield Delta(event.text)
            if isinstance(event, DoneEvent):
                done = event.result
                yield Finished(text=done.text, finish_reason=done.finish_reason, usage=Usage(
                    done.prompt_tokens, done.completion_tokens, done.accepted_prediction_tokens,
                    done.rejected_prediction_tokens, done.stats.cached_prompt_tokens),
                    stats=stats_dict(done.stats))
                return
    except DocumentError as exc:
        raise bad_document(exc, "messages") from None
    except ConfigError as exc:
        raise ApiError(400, str(exc), code="invalid_value") from None
    except CopygramError as exc:
        raise failed(exc) from None


__all__ = ["Delta", "Finished", "Item", "Progress", "SessionHolder", "Started",
           "Usage", "bad_document", "chat", "computed", "edit", "failed", "for_request",
           "prefill_progress", "program_edit", "request_mode", "rewrite_edit", "sampling_for",
           "stats_dict"]
