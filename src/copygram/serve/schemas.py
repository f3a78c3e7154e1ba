"""Request bodies, parsed and checked into frozen dataclasses, and the error every bad input gets.

Everything here is a pure function of the request's bytes: no starlette, no model. A bad input is
an :class:`ApiError` whose :meth:`~ApiError.body` is OpenAI's error shape
(``{"error": {"message", "type", "param", "code"}}``), naming the parameter at fault, so that the
official clients raise it as they would OpenAI's own. ``null`` counts as absent everywhere, as
OpenAI treats it; a parameter OpenAI has but copygram cannot honour (``n > 1``, ``tools``,
``logprobs``, ...) is refused by name rather than ignored, and an unknown one is refused as
OpenAI refuses it ("Unrecognized request argument supplied").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from copygram.language.damage import language_for_path

JSONObject = dict[str, object]

MAX_STOP: Final = 4  # stop sequences, as OpenAI allows
ROLES: Final = ("system", "developer", "user", "assistant")


class ApiError(Exception):
    """An error answered as ``status`` with OpenAI's error body (and ``headers``, e.g.
    ``Retry-After``)."""

    def __init__(self, status: int, message: str, *, param: str | None = None,
                 code: str | None = None, kind: str = "invalid_request_error",
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
        self.kind = kind
        self.headers = dict(headers or {})

    def body(self) -> JSONObject:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


def invalid(param: str, message: str, code: str | None = "invalid_value") -> ApiError:
    return ApiError(400, message, param=param, code=code)


def unsupported(param: str, why: str = "") -> ApiError:
    return invalid(param, f"'{param}' is not supported by copygram serve{why}; leave it out",
                   code="unsupported_parameter")


# --------------------------------------------------------------------------------- the body


def parse_body(raw: bytes) -> JSONObject:
    """The JSON object of a request body: UTF-8 (a BOM is refused, as JSON says), no NaN or
    Infinity, an object at the top."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"the request body is not UTF-8 (byte {exc.start}); send UTF-8 JSON",
                       code="invalid_encoding") from None
    if not text.strip():
        raise ApiError(400, "the request body is empty; send a JSON object", code="invalid_json")

    def no_constants(name: str) -> object:
        raise ValueError(f"{name} is not valid JSON")

    try:
        value = json.loads(text, parse_constant=no_constants)
    except (ValueError, RecursionError) as exc:
        # JSONDecodeError is a ValueError; RecursionError: absurdly deep nesting.
        detail = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise ApiError(400, f"the request body is not valid JSON: {detail}",
                       code="invalid_json") from None
    if not isinstance(value, dict):
        raise ApiError(400, f"the request body must be a JSON object, not {_kind(value)}",
                       code="invalid_json")
    try:
        # A lone surrogate escape ("\ud800") is valid JSON but no text: no tokenizer takes it.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, "the request body holds a lone UTF-16 surrogate escape (such as "
                       "\\ud800), which is not text; send valid Unicode",
                       code="invalid_encoding") from None
    return value


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


# ------------------------------------------------------------------------- typed accessors


def _string(body: JSONObject, key: str, *, required: bool = False, param: str | None = None,
            blank_ok: bool = True) -> str | None:
    value = body.get(key)
    name = param or key
    if value is None:
        if required:
            raise invalid(name, f"'{name}' is required", code="missing_required_parameter")
        return None
    if not isinstance(value, str):
        raise invalid(name, f"'{name}' must be a string, not {_kind(value)}", code="invalid_type")
    if not blank_ok and not value.strip():
        raise invalid(name, f"'{name}' is empty; say what you want")
    return value


def _bool(body: JSONObject, key: str, default: bool = False) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise invalid(key, f"'{key}' must be true or false, not {_kind(value)}",
                      code="invalid_type")
    return value


def _number(body: JSONObject, key: str, low: float, high: float) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(key, f"'{key}' must be a number, not {_kind(value)}", code="invalid_type")
    if not math.isfinite(value) or not low <= value <= high:
        raise invalid(key, f"'{key}' = {value!r} is out of range: use {low:g} to {high:g}")
    return float(value)


def _int(body: JSONObject, key: str, low: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(key, f"'{key}' must be an integer, not {_kind(value)}", code="invalid_type")
    if value < low:
        raise invalid(key, f"'{key}' = {value} is too small: use an integer >= {low}")
    return value


def _text_content(value: object, param: str) -> str:
    """A message's ``content``: a string, or a list of ``{"type": "text", "text": ...}`` parts
    (joined), as OpenAI's clients send either."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise invalid(param, f"'{param}' must be a string or a list of text parts, not "
                      f"{_kind(value)}", code="invalid_type")
    texts = []
    for index, part in enumerate(value):
        where = f"{param}[{index}]"
        if not isinstance(part, dict):
            raise invalid(where, f"'{where}' must be an object, not {_kind(part)}",
                          code="invalid_type")
        if part.get("type") != "text":
            raise unsupported(f"{where}.type", f" (only text parts; got {part.get('type')!r})")
        texts.append(_string(part, "text", required=True, param=f"{where}.text") or "")
    return "".join(texts)


# ---------------------------------------------------------------------- chat completions


@dataclass(frozen=True)
class ChatMessage:
    role: str
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Generation:
    """How long and how randomly to generate, as a request asks; ``None``: the server's default
    (the config's sampling; for the length, what the context or the edit's budget allows)."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None


@dataclass(frozen=True)
class ChatRequest:
    """A checked ``POST /v1/chat/completions`` body."""

    model: str
    messages: tuple[ChatMessage, ...]
    stream: bool = False
    include_usage: bool = False
    generation: Generation = Generation()
    stop: tuple[str, ...] = ()
    prediction: str | None = None


_GENERATION_KEYS: Final = frozenset({"max_tokens", "max_completion_tokens", "temperature",
                                     "top_p", "seed"})
_CHAT_KEYS: Final = _GENERATION_KEYS | {"model", "messages", "stream", "stream_options", "stop",
                                         "prediction"}
# Accepted and without effect here: bookkeeping for OpenAI's platform.
_CHAT_IGNORED: Final = frozenset({
    "user", "metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier",
    "parallel_tool_calls", "reasoning_effort", "verbosity",
})
# Accepted only at the value that means "off".
_CHAT_OFF: Final[dict[str, tuple[object, ...]]] = {
    "n": (1,), "logprobs": (False,), "presence_penalty": (0, 0.0), "frequency_penalty": (0, 0.0),
    "tools": ([],), "functions": ([],), "tool_choice": ("none",), "function_call": ("none",),
    "logit_bias": ({},), "modalities": (["text"],), "response_format": ({"type": "text"},),
}


def _check_keys(body: JSONObject, known: frozenset[str], *, chat: bool = True) -> None:
    """Refuse by name the first key that is neither ``known`` nor accepted-and-ignored (``null``
    is absent). Chat completions also take OpenAI's parameters at their "off" value and call
    the ones copygram cannot honour unsupported; ``/v1/edits`` (copygram's own) lists its keys."""
    for key, value in body.items():
        if key in known or key in _CHAT_IGNORED or value is None:
            continue
        if chat and key in _CHAT_OFF:
            if value not in _CHAT_OFF[key]:
                raise unsupported(key, f" (only {_CHAT_OFF[key][0]!r})")
            continue
        if chat and key in ("top_logprobs", "audio", "web_search_options"):
            raise unsupported(key)
        hint = "" if chat else " (the keys: " + ", ".join(sorted(known)) + ")"
        raise invalid(key, f"Unrecognized request argument supplied: {key}{hint}",
                      code="unknown_parameter")


def _messages(body: JSONObject) -> tuple[ChatMessage, ...]:
    raw = body.get("messages")
    if raw is None:
        raise invalid("messages", "'messages' is required", code="missing_required_parameter")
    if not isinstance(raw, list):
        raise invalid("messages", f"'messages' must be an array, not {_kind(raw)}",
                      code="invalid_type")
    if not raw:
        raise invalid("messages", "'messages' is empty; send at least one message",
                      code="empty_array")
    messages = []
    for index, item in enumerate(raw):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            raise invalid(where, f"'{where}' must be an object, not {_kind(item)}",
                          code="invalid_type")
        role = _string(item, "role", required=True, param=f"{where}.role")
        if role in ("tool", "function") or item.get("tool_calls") or item.get("function_call"):
            raise unsupported(f"{where}.role" if role in ("tool", "function")
                              else f"{where}.tool_calls", " (no tool calling)")
        if role not in ROLES:
            raise invalid(f"{where}.role", f"'{where}.role' = {role!r} is not one of "
                          + ", ".join(ROLES))
        content = item.get("content")
        if content is None:
            raise invalid(f"{where}.content", f"'{where}.content' is required",
                          code="missing_required_parameter")
        # The chat templates know system, user and assistant; OpenAI's developer role is the
        # system role of newer models.
        messages.append(ChatMessage("system" if role == "developer" else role,
                                    _text_content(content, f"{where}.content")))
    return tuple(messages)


def _stop(body: JSONObject) -> tuple[str, ...]:
    value = body.get("stop")
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise invalid("stop", "'stop' must be a string or an array of strings",
                      code="invalid_type")
    if len(items) > MAX_STOP or any(not s for s in items):
        raise invalid("stop", f"'stop' takes 1 to {MAX_STOP} non-empty strings")
    return tuple(str(s) for s in items)


def parse_prediction(value: object, *, plain_ok: bool = False) -> str | None:
    """OpenAI's ``{"type": "content", "content": str | [text parts]}`` (or, where ``plain_ok``,
    for ``/v1/edits``, a plain string) as the predicted text."""
    param = "prediction"
    if value is None:
        return None
    if isinstance(value, str) and plain_ok:
        return value
    if not isinstance(value, dict):
        raise invalid(param, f"'{param}' must be an object "
                      '{"type": "content", "content": "..."}, not ' + _kind(value),
                      code="invalid_type")
    if value.get("type") != "content":
        raise invalid(f"{param}.type", f"'{param}.type' must be 'content'")
    if value.get("content") is None:
        raise invalid(f"{param}.content", f"'{param}.content' is required",
                      code="missing_required_parameter")
    return _text_content(value["content"], f"{param}.content")


def _generation(body: JSONObject) -> Generation:
    """The keys both endpoints take, checked alike: ``max_completion_tokens`` (else
    ``max_tokens``), ``temperature``, ``top_p``, ``seed``."""
    seed = _int(body, "seed", low=-(2 ** 63))
    newest = _int(body, "max_completion_tokens", low=1)
    return Generation(
        max_tokens=newest if newest is not None else _int(body, "max_tokens", low=1),
        temperature=_number(body, "temperature", 0.0, 2.0), top_p=_number(body, "top_p", 0, 1),
        # OpenAI takes any 64-bit seed; the sampler wants one >= 0.
        seed=None if seed is None else seed % 2 ** 64)


def parse_chat(body: JSONObject) -> ChatRequest:
    """A :class:`ChatRequest` from a parsed body, or the :class:`ApiError` of its first fault."""
    _check_keys(body, _CHAT_KEYS)
    model = _string(body, "model", required=True)
    messages = _messages(body)
    stream = _bool(body, "stream")
    include_usage = False
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise invalid("stream_options", "'stream_options' must be an object",
                          code="invalid_type")
        include_usage = _bool(options, "include_usage")
    return ChatRequest(
        model=model or "", messages=messages, stream=stream, include_usage=include_usage,
        generation=_generation(body), stop=_stop(body),
        prediction=parse_prediction(body.get("prediction")),
    )


# ------------------------------------------------------------------------------- edits


Mode = Literal["program", "rewrite", "auto"]
MODES: Final[tuple[Mode, ...]] = ("program", "rewrite", "auto")


@dataclass(frozen=True)
class EditRequest:
    """A checked ``POST /v1/edits`` body (copygram's own endpoint; docs/serve.md)."""

    document: str
    instruction: str
    mode: Mode | None = None  # None: the server's (its config's mode, by default "auto")
    prediction: str | None = None
    stream: bool = False
    model: str | None = None
    generation: Generation = Generation()
    # The file's name: its suffix says what the edit is checked as (a .yaml file is parsed as
    # YAML, not read as prose), as copygram edit reads a path; None: guessed from the text.
    path: str | None = None

    @property
    def language(self) -> str | None:
        """The language ``path``'s suffix names, or ``None`` (guessed from the document)."""
        return None if self.path is None else language_for_path(self.path)


_EDIT_KEYS: Final = _GENERATION_KEYS | {"model", "document", "instruction", "mode", "prediction",
                                        "stream", "path"}


def parse_edit(body: JSONObject) -> EditRequest:
    _check_keys(body, _EDIT_KEYS, chat=False)
    document = _string(body, "document", required=True) or ""
    instruction = _string(body, "instruction", required=True, blank_ok=False) or ""
    mode = _string(body, "mode")
    if mode is not None and mode not in MODES:
        raise invalid("mode", f"'mode' = {mode!r} is not one of 'program', 'rewrite', 'auto'")
    prediction = parse_prediction(body.get("prediction"), plain_ok=True)
    if prediction is not None and mode == "program":
        raise invalid("prediction", "'prediction' drafts a rewrite: send it with "
                      "mode 'rewrite' or 'auto' (program mode copies from the document itself)")
    return EditRequest(document=document, instruction=instruction,
                       mode=next((m for m in MODES if m == mode), None),
                       prediction=prediction, stream=_bool(body, "stream"),
                       model=_string(body, "model"), generation=_generation(body),
                       path=_string(body, "path") or None)
