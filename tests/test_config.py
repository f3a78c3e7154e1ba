"""copygram.config: one reader for dicts and TOML files; every bad value a ConfigError that names
the key, the value and what is allowed, raised before any model loads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import copygram.backends
from copygram import catalog
from copygram.config import (
    BACKEND_KEYS,
    CONFIG_KEYS,
    ROUTE_KEYS,
    SESSION_KEYS,
    TOP_KEYS,
    BackendConfig,
    Config,
    SessionConfig,
    check_number,
    parse_config,
)
from copygram.errors import ConfigError
from copygram.session import EditSession


class LoadCalled(AssertionError):
    pass


def written(**keys: object) -> dict[str, object]:
    """A config as a file writes ``keys``: the route keys in its ``route`` table."""
    route = {key: value for key, value in keys.items() if key in ROUTE_KEYS}
    top = {key: value for key, value in keys.items() if key not in ROUTE_KEYS}
    return {**top, "route": route} if route else top


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """``backends.load`` fails the test if anything reaches it."""

    def load(config: object = None) -> object:
        raise LoadCalled(f"backends.load was called with {config!r}")

    monkeypatch.setattr(copygram.backends, "load", load)


# (key, bad value, what the message must say is allowed)
BAD_VALUES: list[tuple[str, object, str]] = [
    ("temperature", math.nan, "finite number >= 0"),
    ("temperature", math.inf, "finite number >= 0"),
    ("temperature", -0.5, "finite number >= 0"),
    ("temperature", True, "finite number >= 0"),
    ("temperature", "0.7", "finite number >= 0"),
    ("top_p", 0, "(0, 1]"),
    ("top_p", 1.5, "(0, 1]"),
    ("top_p", math.nan, "(0, 1]"),
    ("seed", -1, "integer >= 0"),
    ("seed", math.nan, "integer >= 0"),
    ("seed", 1.5, "integer >= 0"),
    ("seed", False, "integer >= 0"),
    ("max_new_tokens", 1.5, "integer >= 1"),
    ("max_new_tokens", 2.0, "integer >= 1"),
    ("max_new_tokens", math.inf, "integer >= 1"),
    ("max_new_tokens", math.nan, "integer >= 1"),
    ("max_new_tokens", 0, "integer >= 1"),
    ("max_new_tokens", True, "integer >= 1"),
    ("draft_tokens", -1, "integer >= 0"),
    ("draft_tokens", 2.5, "integer >= 0"),
    ("draft_ngram", 0, "integer >= 1"),
    ("draft_adaptive", "no", "true or false"),
    ("splice_forced", "false", "true or false"),
    ("splice_forced", 0, "true or false"),
    ("prompt_example", "no", "true or false"),
    ("copy_to_end", 1, "true or false"),
    ("verify_copies", "yes", "true or false"),
    ("merge_retyped", "yes", "true or false"),
    ("search_plan", 1, "true or false"),
    ("retry_unchanged", "on", "true or false"),
    ("touch_named", "on", "true or false"),
    ("prefix_cache_mb", -1, "an integer >= 0"),
    ("line_view", "spaces", "'pipe', 'tab'"),
    ("prompt_order", "sideways", "'instruction_first', 'document_first'"),
    ("search_scope", "file", "'lines', 'unit', 'head'"),
    ("tie_tolerance", -0.1, "finite number >= 0"),
    ("tie_tolerance", math.nan, "finite number >= 0"),
    ("tie_tolerance", "1", "finite number >= 0"),
    ("engine", "llg", "'llguidance', 'outlines'"),
    ("engine", 1, "'llguidance', 'outlines'"),
    ("syntax", "xml", "'compact', 'lines'"),
    ("syntax", 1, "'compact', 'lines'"),
    ("mode", "rewrte", "'program', 'rewrite', 'auto' (did you mean 'rewrite'?)"),
    ("mode", 1, "'program', 'rewrite', 'auto'"),
    ("auto_rewrite_tokens", -1, "integer >= 0"),
    ("auto_rewrite_tokens", "many", "integer >= 0"),
    ("auto_program_tokens", -5, "integer >= 0"),
    ("focus_tokens", -1, "integer >= 0"),
    ("tabs_as_spaces", "yes", "true or false"),
    ("auto_rewrite_languages", ["jav"], "language names from"),
    ("auto_rewrite_languages", 3, "a list of language names"),
    ("backend", "vllm", "'llamacpp', 'transformers'"),
    ("device", "tpu", "'auto', 'cpu', 'cuda'"),
    ("dtype", "int4", "'auto', 'float32'"),
    ("n_ctx", 0, "integer >= 1"),
    ("n_ctx", 1.5, "integer >= 1"),
    ("n_ctx", True, "integer >= 1"),
    ("n_threads", "2", "integer >= 1"),
    ("n_threads", -2, "integer >= 1"),
    ("batch_invariant", "false", "true, false or \"auto\""),
    ("batch_invariant", 0, "true, false or \"auto\""),
    ("batch_invariant", "Auto", "true, false or \"auto\""),
    ("rpc_servers", "no-port", '"host:port" endpoints'),
    ("rpc_servers", ["10.0.0.2:0"], '"host:port" endpoints'),
    ("rpc_servers", ["10.0.0.2:70000"], '"host:port" endpoints'),
    ("rpc_servers", ["a:1", "a:1"], "each endpoint once"),
    ("rpc_servers", ["[::1]:50052"], '"host:port" endpoints'),
    ("rpc_servers", [50052], '"host:port" endpoints'),
    ("rpc_servers", [f"h:{p}" for p in range(1, 18)], "at most 16"),
    ("cost_curve", 3, "kernel.json"),
    ("cost_curve", "", "kernel.json"),
    ("model", 3, "catalog name"),
    ("model", "", "catalog name"),
    ("model", "qwen2.5-coder-7b", "catalog name"),
    ("model", "HuggingFaceTB/SmolLM2-135M-Instruct", "catalog name"),  # hub names: transformers
]


@pytest.mark.parametrize(("key", "value", "allowed"), BAD_VALUES)
def test_every_bad_value_is_refused_before_the_model_loads(
        no_model: None, key: str, value: object, allowed: str) -> None:
    with pytest.raises(ConfigError) as err:
        EditSession.from_config(written(**{key: value}))
    message = str(err.value)
    assert f"'{key}'" in message and repr(value) in message and allowed in message
    with pytest.raises(ConfigError, match=key):
        parse_config(written(**{key: value}))
    if key in SESSION_KEYS:  # a keyword of EditSession is checked alike
        with pytest.raises(ConfigError, match=f"'{key}'"):
            SessionConfig().replace(**{key: value})


def test_rpc_servers_are_llamacpp_s_and_read_from_a_list_or_a_string() -> None:
    one = parse_config({"rpc_servers": "10.0.0.2:50052, 10.0.0.3:50052"}).backend
    assert one.rpc_servers == ("10.0.0.2:50052", "10.0.0.3:50052")
    assert parse_config({"rpc_servers": list(one.rpc_servers)}).backend == one
    assert parse_config({}).backend.rpc_servers == ()
    with pytest.raises(ConfigError, match="backend 'llamacpp'"):
        parse_config({"backend": "transformers", "model": "org/name",
                      "rpc_servers": ["10.0.0.2:50052"]})


def test_copies_to_the_end_need_ordered_copies(no_model: None) -> None:
    with pytest.raises(ConfigError, match="copy_to_end needs ordered_copies"):
        EditSession.from_config({"route": {"syntax": "lines", "copy_to_end": True, "ordered_copies": False}})
    assert parse_config({"route": {"syntax": "lines", "copy_to_end": True}}).session.copy_to_end


def test_dtype_is_for_transformers_only(no_model: None) -> None:
    with pytest.raises(ConfigError, match="dtype.*'float16'.*transformers"):
        EditSession.from_config({"dtype": "float16"})
    assert parse_config({"backend": "transformers", "dtype": "float16"}).backend.dtype == "float16"


def test_the_prefix_cache_is_llama_cpps() -> None:
    assert parse_config({}).backend.prefix_cache_mb == 512
    assert parse_config({"prefix_cache_mb": 0}).backend.prefix_cache_bytes == 0
    assert parse_config({"backend": "transformers"}).backend.prefix_cache_mb == 0
    with pytest.raises(ConfigError, match="prefix_cache_mb.*transformers"):
        parse_config({"backend": "transformers", "prefix_cache_mb": 64})


def test_a_backend_table_gets_a_hint(no_model: None) -> None:
    with pytest.raises(ConfigError, match="top level"):
        EditSession.from_config({"backend": {"backend": "llamacpp"}})


def test_unknown_keys_are_listed_with_the_valid_ones(no_model: None) -> None:
    with pytest.raises(ConfigError) as err:
        EditSession.from_config({"temprature": 0.7, "colour": "red", "backend": "llamacpp"})
    message = str(err.value)
    assert "'colour'" in message and "'temprature' (did you mean 'temperature'?)" in message
    for key in TOP_KEYS:
        assert key in message
    assert "mode" in TOP_KEYS  # "program", "rewrite" (docs/rewrite.md) or "auto"
    with pytest.raises(ConfigError) as err:
        parse_config({"route": {"syntx": "lines"}})
    assert "'syntx' (did you mean 'syntax'?) in [route]" in str(err.value)
    for key in ROUTE_KEYS:
        assert key in str(err.value)


def test_keys_are_the_two_dataclasses() -> None:
    assert set(SESSION_KEYS) | set(BACKEND_KEYS) == set(CONFIG_KEYS)
    assert not set(SESSION_KEYS) & set(BACKEND_KEYS)
    assert set(TOP_KEYS) | set(ROUTE_KEYS) == set(CONFIG_KEYS)
    assert not set(TOP_KEYS) & set(ROUTE_KEYS)
    # What a user sets, at the top level; the research routes in [route].
    assert set(TOP_KEYS) == {"backend", "model", "device", "dtype", "n_ctx", "n_threads",
                             "rpc_servers", "prefix_cache_mb", "mode",
                             "temperature", "top_p", "seed", "max_new_tokens", "on_damage"}


def test_a_route_key_at_the_top_level_says_where_it_goes(no_model: None) -> None:
    # An old flat config (before [route]) fails with what to write instead.
    with pytest.raises(ConfigError) as err:
        EditSession.from_config({"syntax": "lines"})
    message = str(err.value)
    assert "[route]" in message and 'syntax = "lines"' in message and "docs/config.md" in message
    with pytest.raises(ConfigError, match="copy_to_end = true under it"):  # TOML's spelling
        parse_config({"copy_to_end": True})
    with pytest.raises(ConfigError, match="'mode' belongs at the top level"):
        parse_config({"route": {"mode": "rewrite"}})
    with pytest.raises(ConfigError, match="'route' = 3"):
        parse_config({"route": 3})


def test_options_change_once_and_resolve_their_defaults_again() -> None:
    options = SessionConfig()
    assert (options.syntax, options.search_scope, options.retry_unchanged,
            options.touch_named) == ("search_replace", "head", True, True)
    # Left to their defaults, the syntax follows the engine and the scope the syntax.
    tags = options.replace(engine="outlines")
    assert (tags.syntax, tags.search_scope, tags.retry_unchanged, tags.touch_named) == (
        "lines", "lines", False, False)
    assert tags.replace(engine="llguidance") == options
    # A value given is kept (and checked against the others).
    unit = options.replace(search_scope="unit")
    assert unit.replace(temperature=0.5).search_scope == "unit"
    with pytest.raises(ConfigError, match="search_scope acts on search/replace blocks"):
        unit.replace(syntax="lines")
    with pytest.raises(ConfigError, match="unknown option.*'temprature'.*did you mean"):
        options.replace(temprature=0.5)
    assert SessionConfig().replace(**unit.given()) == unit
    # A config written out and read back changes the same way (to_dict writes what was set).
    read_back = parse_config(Config(session=options).to_dict()).session
    assert read_back.replace(engine="outlines") == tags
    with pytest.raises(TypeError):
        SessionConfig("program")  # type: ignore[call-arg]  # keywords only: fields may move


def test_model_names_paths_and_hub_names() -> None:
    for name in (*catalog.model_names(), *catalog.ALIASES):
        config = parse_config({"model": name}).backend
        assert config.model == name and config.is_catalog_model
    assert not parse_config({"model": "/models/x.Q4_K_M.GGUF"}).backend.is_catalog_model
    assert parse_config({"model": Path("/m/x.gguf")}).backend.model == "/m/x.gguf"
    hub = parse_config({"backend": "transformers", "model": "org/name"}).backend
    assert hub.model == "org/name" and not hub.is_catalog_model
    with pytest.raises(ConfigError, match="did you mean 'smollm2-135m'"):
        parse_config({"model": "smollm2-135"})
    with pytest.raises(ConfigError) as err:
        parse_config({"model": "llama-70b"})
    for name in catalog.model_names():
        assert name in str(err.value)


def test_a_folder_is_a_transformers_model(tmp_path: Path) -> None:
    assert parse_config({"backend": "transformers", "model": str(tmp_path)}).backend.model == str(
        tmp_path)
    with pytest.raises(ConfigError, match="model"):
        parse_config({"backend": "llamacpp", "model": str(tmp_path)})


def test_numbers_are_normalised() -> None:
    config = parse_config({"temperature": 1, "top_p": 1}).session
    assert isinstance(config.temperature, float) and isinstance(config.top_p, float)
    assert config == SessionConfig(temperature=1.0)


def test_dataclasses_check_values_built_in_code() -> None:
    with pytest.raises(ConfigError, match="seed"):
        SessionConfig(seed=-1)
    with pytest.raises(ConfigError, match="n_threads"):
        BackendConfig(n_threads=0)
    with pytest.raises(ConfigError, match="top_p"):
        check_number("top_p", 0.0, minimum=0.0, above=True, maximum=1.0)


def test_the_keyword_constructor_uses_the_same_checks() -> None:
    from copygram.testing import ScriptedBackend

    backend = ScriptedBackend("a\n", [])  # type: ignore[arg-type]
    for kwargs, key in [({"engine": "llg"}, "engine"), ({"syntax": "xml"}, "syntax"),
                        ({"max_new_tokens": 1.5}, "max_new_tokens"),
                        ({"max_new_tokens": 0}, "max_new_tokens")]:
        with pytest.raises(ConfigError, match=f"config key '{key}'"):
            EditSession(backend, **kwargs)  # type: ignore[arg-type]


def test_from_config_builds_the_session_from_the_parsed_config(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from copygram.testing import ScriptedBackend

    seen: list[object] = []

    def load(config: object = None) -> object:
        seen.append(config)
        return ScriptedBackend("a\n", [])  # type: ignore[arg-type]

    monkeypatch.setattr(copygram.backends, "load", load)
    session = EditSession.from_config({
        "temperature": 0.5, "top_p": 0.9, "seed": 7, "max_new_tokens": 99, "n_ctx": 512,
        "route": {"syntax": "compact", "splice_forced": False, "draft_tokens": 0,
                  "draft_ngram": 2}})
    assert seen == [BackendConfig(n_ctx=512)]
    options = session.options
    assert (options.syntax, options.max_new_tokens, options.splice_forced) == ("compact", 99, False)
    assert (session.sampling.temperature, session.sampling.top_p, session.sampling.seed) == (
        0.5, 0.9, 7)
    assert (session.draft.max_tokens, session.draft.max_ngram) == (0, 2)


def test_the_default_drafts_follow_the_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    from copygram.testing import ScriptedBackend

    monkeypatch.setattr(copygram.backends, "load",
                        lambda config=None: ScriptedBackend("a\n", []))  # type: ignore[arg-type]
    program = EditSession.from_config({})
    rewrite = EditSession.from_config({"mode": "rewrite"})
    assert (program.draft.max_tokens, rewrite.draft.max_tokens) == (16, 64)
    # A derived session in the other mode gets that mode's default, not this one's.
    assert program.derive(mode="rewrite").draft == rewrite.draft
    assert rewrite.derive(mode="program").draft == program.draft
    # A value given is kept, in either mode and through derive.
    given = EditSession.from_config({"mode": "rewrite", "route": {"draft_tokens": 8}})
    assert given.draft.max_tokens == 8 == given.derive(mode="program").draft.max_tokens
    ngram = EditSession.from_config({"mode": "rewrite", "route": {"draft_ngram": 2}})
    assert (ngram.draft.max_tokens, ngram.draft.max_ngram) == (64, 2)


# -- files -----------------------------------------------------------------------------------


def test_toml_and_dict_give_the_same_config(tmp_path: Path) -> None:
    path = tmp_path / "copygram.toml"
    path.write_text('backend = "llamacpp"\nmodel = "default"\nn_ctx = 2048\nn_threads = 2\n'
                    "temperature = 0.0\nmax_new_tokens = 2048\n\n[route]\n"
                    'engine = "llguidance"\nsyntax = "compact"\n'
                    "draft_tokens = 16\nprompt_example = false\n")
    as_dict = {"backend": "llamacpp", "model": "default", "n_ctx": 2048, "n_threads": 2,
               "temperature": 0.0, "max_new_tokens": 2048,
               "route": {"engine": "llguidance", "syntax": "compact", "draft_tokens": 16,
                         "prompt_example": False}}
    assert parse_config(path) == parse_config(str(path)) == parse_config(as_dict)


def test_docs_example_parses() -> None:
    # The TOML example of docs/config.md.
    text = (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text()
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    import tomllib

    parse_config(tomllib.loads(block))


def test_file_errors(tmp_path: Path, no_model: None) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        EditSession.from_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("backend = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        EditSession.from_config(bad)
    with pytest.raises(ConfigError, match="directory"):
        EditSession.from_config(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        EditSession.from_config(binary)
    table = tmp_path / "table.toml"
    table.write_text('[backend]\nbackend = "llamacpp"\n')
    with pytest.raises(ConfigError, match="top level"):
        EditSession.from_config(table)
    bad_value = tmp_path / "inf.toml"
    bad_value.write_text("max_new_tokens = inf\n")
    with pytest.raises(ConfigError, match="'max_new_tokens' = inf"):
        EditSession.from_config(bad_value)


# -- random valid configs ----------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)
valid_values: dict[str, st.SearchStrategy[object]] = {
    "engine": st.sampled_from(["llguidance", "outlines"]),
    "syntax": st.sampled_from(["lines", "compact", "search_replace"]),
    "temperature": st.one_of(st.integers(0, 10), finite.filter(lambda x: x >= 0)),
    "top_p": st.one_of(st.just(1), st.floats(0, 1, exclude_min=True)),
    "seed": st.integers(0, 2**63 - 1),
    "max_new_tokens": st.integers(1, 2**31),
    "splice_forced": st.booleans(),
    "draft_tokens": st.integers(0, 1000),
    "draft_ngram": st.integers(1, 10),
    "draft_adaptive": st.booleans(),
    "prompt_example": st.booleans(),
    "ordered_copies": st.booleans(),
    "copy_to_end": st.booleans(),
    "verify_copies": st.booleans(),
    "merge_retyped": st.booleans(),
    "body_heads": st.booleans(),
    "search_plan": st.booleans(),
    "retry_unchanged": st.booleans(),
    "touch_named": st.booleans(),
    "line_view": st.sampled_from(["pipe", "tab"]),
    "prompt_order": st.sampled_from(["instruction_first", "document_first"]),
    "search_scope": st.sampled_from(["lines", "unit", "head"]),
    "tie_tolerance": st.one_of(st.integers(0, 5), finite.filter(lambda x: x >= 0)),
    "mode": st.sampled_from(["program", "rewrite", "auto"]),
    "auto_rewrite_tokens": st.integers(0, 1 << 20),
    "auto_program_tokens": st.integers(0, 1 << 20),
    "focus_tokens": st.integers(0, 1 << 20),
    "tabs_as_spaces": st.booleans(),
    "auto_rewrite_languages": st.lists(st.sampled_from(["java", "cpp", "python", "rust"]),
                                       unique=True, max_size=3).map(tuple),
    "on_damage": st.sampled_from(["rewrite", "error", "keep"]),
    "backend": st.just("llamacpp"),
    "model": st.sampled_from([*catalog.model_names(), "default", "/models/m.gguf", "~/x.GGUF"]),
    "device": st.sampled_from(["auto", "cpu", "cuda"]),
    "n_ctx": st.integers(1, 1 << 20),
    "n_threads": st.integers(1, 512),
    "batch_invariant": st.sampled_from([True, False, "auto"]),
    "cost_curve": st.just(str(Path(__file__).resolve())),  # any existing file parses
    "rpc_servers": st.lists(st.builds("{}:{}".format, st.sampled_from(
        ["127.0.0.1", "10.0.0.2", "gpu-box.lan"]), st.integers(1, 65535)),
        unique=True, max_size=3).map(tuple),
    "prefix_cache_mb": st.integers(0, 1 << 16),
}
assert set(valid_values) | {"dtype"} == set(CONFIG_KEYS)  # dtype: drawn with transformers


@st.composite
def configs(draw: st.DrawFn) -> dict[str, object]:
    keys = draw(st.sets(st.sampled_from(sorted(valid_values))))
    config = {key: draw(valid_values[key]) for key in keys}
    if config.get("copy_to_end") and config.get("ordered_copies") is False:
        del config["copy_to_end"]  # refused: the end is known only with ordered copies
    # No syntax: program mode's default, blocks on llguidance and copy tags on outlines.
    syntax = config.get("syntax", "lines" if config.get("engine") == "outlines"
                        else "search_replace")
    if syntax != "search_replace":
        for key in ("merge_retyped", "search_plan", "search_scope",
                    "retry_unchanged", "touch_named"):  # refused: blocks' options
            config.pop(key, None)
    else:
        # Refused with blocks (tests/decode/test_search_replace.py): copy-tag options, outlines.
        for key in ("copy_to_end", "verify_copies", "line_view"):
            config.pop(key, None)
        if config.get("ordered_copies") is False:
            del config["ordered_copies"]
        config["engine"] = "llguidance"
    if config.get("batch_invariant") is True and config.get("device") == "cuda":
        del config["batch_invariant"]  # refused: llama.cpp's CUDA kernels are not invariant
    if draw(st.booleans()):
        config.pop("batch_invariant", None)  # refused with transformers
        config.pop("rpc_servers", None)  # llama.cpp's
        if config.get("prefix_cache_mb"):
            config["prefix_cache_mb"] = 0  # snapshots of the KV cache are llama.cpp's
        config["backend"] = "transformers"
        config["dtype"] = draw(st.sampled_from(["auto", "float32", "bfloat16", "float16"]))
    return config


def _toml(config: dict[str, object]) -> str:
    """TOML of strings, bools, ints and finite floats (JSON's spelling is TOML's here): the top
    keys, then the route keys under [route]."""
    def lines(keys: list[str]) -> str:
        return "".join(f"{key} = {json.dumps(config[key])}\n" for key in keys)

    route = [key for key in config if key in ROUTE_KEYS]
    return (lines([key for key in config if key not in ROUTE_KEYS])
            + ("[route]\n" + lines(route) if route else ""))


@given(configs())
def test_random_valid_configs_round_trip(config: dict[str, object]) -> None:
    parsed = parse_config(written(**config))
    assert isinstance(parsed, Config)
    assert parse_config(parsed.to_dict()) == parsed
    for key, value in config.items():
        part = parsed.session if key in SESSION_KEYS else parsed.backend
        if key == "batch_invariant" and value == "auto" and (
                config.get("backend") == "transformers" or config.get("device") == "cuda"):
            value = False  # no batch-invariant kernels there; the parsed config says so
        assert getattr(part, key) == value
    import tomllib

    assert parse_config(tomllib.loads(_toml(config))) == parsed


ROUTES = sorted((Path(__file__).resolve().parent.parent / "docs" / "routes").glob("*.toml"))


def test_the_documented_routes_are_there() -> None:
    assert len(ROUTES) >= 10 and {"search_replace_head", "copy_tags"} <= {r.stem for r in ROUTES}


@pytest.mark.parametrize("route", ROUTES, ids=lambda path: path.stem)
def test_every_documented_route_is_a_config_of_its_own(route: Path) -> None:
    # A route that left out an option its syntax needs would fail here, or run the default
    # route under another name (docs/quality.md's commands would not reproduce its figures).
    config = parse_config(route).session
    # search_replace_head.toml names program mode's default route (docs/routes/README.md).
    assert (config == parse_config({}).session) == (route.stem == "search_replace_head")


def test_docs_tables_list_the_keys_where_they_go() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text()

    def keys(title: str) -> list[str]:
        section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
        return [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]

    assert keys("Session keys") + keys("Backend keys") == [
        key for key in (*SESSION_KEYS, *BACKEND_KEYS) if key in TOP_KEYS]
    assert sorted(keys("Route keys")) == sorted(ROUTE_KEYS)


def test_route_arguments_read_toml_values_and_bare_words() -> None:
    from copygram.config import route_arguments

    table = route_arguments(["prompt_order=document_first", "draft_tokens = 32",
                             "ordered_copies=false", 'syntax="search_replace"'])
    assert table == {"prompt_order": "document_first", "draft_tokens": 32,
                     "ordered_copies": False, "syntax": "search_replace"}
    table.pop("ordered_copies")  # refused with blocks, the syntax named
    assert parse_config({"route": table}).session.prompt_order == "document_first"
    for bad in ("prompt_order", "=document_first"):
        with pytest.raises(ConfigError, match="KEY=VALUE"):
            route_arguments([bad])
    with pytest.raises(ConfigError, match="prompt_order"):
        parse_config({"route": route_arguments(["prompt_order=sideways"])})
