"""Data files (copygram.language.data_files): JSON, TOML and YAML parsed by their own parsers,
so an edit that breaks one, or writes a key twice, is damage (copygram.language.damage)."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from copygram.language.damage import find_damage, guess_language, language_for_path, parses
from copygram.language.data_files import (
    DATA_FORMATS,
    data_error,
    kept_removals,
    key_counts,
    looks_like_json,
    lost_keys,
    repeated_keys,
)

PACKAGE = """{
  "name": "demo-app",
  "scripts": {
    "start": "node index.js",
    "test": "jest"
  },
  "devDependencies": {
    "jest": "^29.7.0"
  },
  "license": "MIT"
}
"""
# What Qwen2.5-Coder-1.5B's head block made of "Remove the license field.": the line gone, the
# comma before it kept.
NO_LICENSE = PACKAGE.replace('  "license": "MIT"\n', "")
CONFIG = """[server]
host = "127.0.0.1"
port = 8080

[database]
timeout = 30
"""
WORKFLOW = """name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make test
"""


def kinds(before: str, after: str, language: str | None) -> list[str]:
    return [d.kind for d in find_damage(before, after, language=language)]


def test_a_sound_edit_of_each_format_has_no_damage() -> None:
    assert find_damage(PACKAGE, PACKAGE.replace('"MIT"', '"Apache-2.0"'), language="json") == ()
    assert find_damage(CONFIG, CONFIG.replace("30", "60\nretries = 3"), language="toml") == ()
    assert find_damage(WORKFLOW, WORKFLOW + "      - run: make lint\n", language="yaml") == ()


def test_a_comma_left_before_a_removed_last_member_is_a_parse_error() -> None:
    damage = find_damage(PACKAGE, NO_LICENSE, language="json")
    assert [d.kind for d in damage] == ["parse"]
    assert damage[0].line == 10 and "JSON" in damage[0].detail
    # The file without the comma is sound.
    fixed = NO_LICENSE.replace("  },\n}", "  }\n}")
    assert json.loads(fixed) and find_damage(PACKAGE, fixed, language="json") == ()


def test_broken_toml_and_yaml_are_parse_errors_with_their_line() -> None:
    toml = find_damage(CONFIG, CONFIG.replace("port = 8080", "port = 8080,"), language="toml")
    assert [(d.kind, d.line) for d in toml] == [("parse", 3)]
    # A step that lost its list dash, beside one that kept it: no longer a mapping's value.
    broken = WORKFLOW.replace("      - run: make test", "      run: make test")
    yml = find_damage(WORKFLOW, broken, language="yaml")
    assert [d.kind for d in yml] == ["parse"] and yml[0].line == 8


def test_a_key_written_twice_is_a_duplicate_where_the_input_had_it_once() -> None:
    twice = PACKAGE.replace('"test": "jest"', '"test": "jest",\n    "start": "node ."')
    damage = find_damage(PACKAGE, twice, language="json")
    assert [d.kind for d in damage] == ["duplicate"]
    assert "'start'" in damage[0].detail and "scripts" in damage[0].detail
    steps = "steps:\n      - uses: actions/checkout@v4\n"
    yml = WORKFLOW.replace("runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    runs-on: x")
    damage = find_damage(WORKFLOW, yml, language="yaml")
    assert [(d.kind, d.line) for d in damage] == [("duplicate", 6)]
    assert "jobs.test" in damage[0].detail and steps in WORKFLOW
    # A key the input already wrote twice, written twice still, is not the edit's doing.
    before = '{"a": 1, "a": 2, "b": 3}\n'
    assert find_damage(before, before.replace("3", "4"), language="json") == ()
    assert kinds(before, '{"a": 1, "a": 2, "a": 3}\n', "json") == ["duplicate"]


def test_a_file_that_did_not_parse_before_gets_the_marker_check_alone() -> None:
    with_comments = '{\n  // the port\n  "port": 1\n}\n'
    assert find_damage(with_comments, with_comments.replace("1\n}", "1,\n}"),
                       language="json") == ()
    marker = find_damage(with_comments, with_comments + "=======\n", language="json")
    assert [d.kind for d in marker] == ["marker"]


def test_yaml_tags_merge_keys_and_recursive_anchors_are_read() -> None:
    tagged = "Resources:\n  Bucket:\n    Name: !Ref BucketName\n"
    assert data_error(tagged, "yaml") is None
    merged = "base: &b {x: 1}\nchild:\n  <<: *b\n  <<: *b\n  y: 2\n"
    assert repeated_keys(merged, "yaml") == {}
    recursive = "a: &a\n  - *a\n"
    assert data_error(recursive, "yaml") is None and repeated_keys(recursive, "yaml") == {}
    several = "a: 1\n---\na: 1\na: 2\n"
    assert repeated_keys(several, "yaml") == {("[1]", "a"): (2, 4)}


def test_the_format_comes_from_the_suffix_or_json_from_the_text() -> None:
    assert language_for_path("package.json") == "json"
    assert language_for_path("a/pyproject.TOML") == "toml"
    assert language_for_path(".github/workflows/ci.yml") == "yaml"
    assert language_for_path("k8s.yaml") == "yaml"
    assert guess_language(PACKAGE) == "json"
    assert guess_language("[1, 2]\n") == "json"
    # TOML and YAML are not guessed: prose and Markdown lists parse as YAML.
    assert guess_language(CONFIG) is None and guess_language(WORKFLOW) is None
    assert guess_language("- milk\n- eggs\n") is None
    assert not looks_like_json("{braces} in prose\n")
    assert all(parses(text, fmt) for text, fmt in
               ((PACKAGE, "json"), (CONFIG, "toml"), (WORKFLOW, "yaml")))
    assert not parses(NO_LICENSE, "json")


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown data format"):
        data_error("{}", "ini")
    assert DATA_FORMATS == ("json", "toml", "yaml")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12)


@given(json_values, st.data())
def test_parse_damage_is_exactly_a_json_that_no_longer_loads(value: object,
                                                              data: st.DataObject) -> None:
    before = json.dumps(value, indent=2) + "\n"
    lines = before.splitlines(keepends=True)
    cut = data.draw(st.integers(0, len(lines) - 1))
    after = "".join(lines[:cut] + lines[cut + 1:])
    try:
        json.loads(after)
        loads = True
    except json.JSONDecodeError:
        loads = False
    assert ("parse" in kinds(before, after, "json")) == (not loads)
    assert find_damage(before, before, language="json") == ()


@given(json_values)
def test_yaml_and_json_of_any_value_read_alike(value: object) -> None:
    # A value dumped by each format's own writer parses, and repeats no key.
    dumped = yaml.safe_dump(value)
    assert data_error(dumped, "yaml") is None and repeated_keys(dumped, "yaml") == {}
    text = json.dumps(value, indent=1)
    assert data_error(text, "json") is None and repeated_keys(text, "json") == {}


def test_keys_are_counted_at_every_depth_in_each_format() -> None:
    counts = key_counts(PACKAGE, "json")
    assert counts["test"] == 1 and counts["scripts"] == 1 and counts["jest"] == 1
    assert key_counts('{"a": {"a": 1}, "a": 2}', "json")["a"] == 3
    assert key_counts(CONFIG, "toml")["server"] == 1 and key_counts(CONFIG, "toml")["port"] == 1
    assert key_counts(WORKFLOW, "yaml")["steps"] == 1 and key_counts(WORKFLOW, "yaml")["run"] == 1
    assert key_counts(NO_LICENSE, "json") == {}


def test_a_key_asked_removed_and_kept_is_reported() -> None:
    jobs = WORKFLOW + "  docs:\n    steps:\n      - run: mkdocs build\n"
    # What Qwen2.5-Coder-1.5B's rewrite did with "Remove the docs job.": the file as it was.
    assert kept_removals(jobs, jobs, "Remove the docs job.", "yaml") == ["docs"]
    assert kept_removals(jobs, WORKFLOW, "Remove the docs job.", "yaml") == []
    assert kept_removals(PACKAGE, NO_LICENSE.replace("  },\n}", "  }\n}"),
                         "Remove the license field.", "json") == []
    assert kept_removals(PACKAGE, PACKAGE, "Delete the `license` field.", "json") == ["license"]
    # A name the file has no key of, no removal asked, or a result that does not parse: none.
    assert kept_removals(PACKAGE, PACKAGE, "Remove the footer.", "json") == []
    assert kept_removals(PACKAGE, PACKAGE, "Rename license to licence.", "json") == []
    assert kept_removals(PACKAGE, NO_LICENSE, "Remove the test script.", "json") == []
    assert kept_removals(CONFIG, CONFIG, "Drop the database table.", "toml") == ["database"]


def test_keys_an_edit_took_out_that_the_instruction_does_not_name_are_lost() -> None:
    messages = ('{\n  "home": {"home_title": "Home", "home_label": "Home"},\n'
                '  "billing": {"billing_title": "Billing", "billing_label": "Plan"}\n}\n')
    # What Qwen2.5-Coder-1.5B's rewrite did with "Remove the billing_label message.": every
    # section's label taken out.
    every = messages.replace(', "home_label": "Home"', "").replace(', "billing_label": "Plan"',
                                                                   "")
    assert lost_keys(messages, every, "Remove the billing_label message.", "json") == [
        "home.home_label"]
    asked = messages.replace(', "billing_label": "Plan"', "")
    assert lost_keys(messages, asked, "Remove the billing_label message.", "json") == []
    # A key taken out with the one that holds it is said once; a named holder takes its keys.
    jobs = WORKFLOW + "  docs:\n    steps:\n      - run: mkdocs build\n"
    assert lost_keys(jobs, WORKFLOW, "Remove the docs job.", "yaml") == []
    assert lost_keys(jobs, WORKFLOW, "Add a step to the test job.", "yaml") == ["jobs.docs"]
    # An instruction that names no key and adds nothing, or restructures, says nothing of what
    # may go; nor does a result that does not parse (the parse check's).
    assert lost_keys(jobs, WORKFLOW, "Make it shorter.", "yaml") == []
    assert lost_keys(jobs, WORKFLOW, "Merge the docs job into test.", "yaml") == []
    assert lost_keys(PACKAGE, NO_LICENSE, "Add a lint script.", "json") == []
    assert lost_keys(CONFIG, "[server]\nport = 1\n", "Set the server port to 1.", "toml") == [
        "database"]


def test_a_key_the_instruction_mentions_in_other_words_is_not_lost() -> None:
    jobs = WORKFLOW + "  Docs-Site:\n    steps:\n      - run: mkdocs build\n"
    for instruction in ("Remove the docs site job.", "Remove the DOCS_SITE job.",
                        "Remove the Docs-Site job."):
        assert lost_keys(jobs, WORKFLOW, instruction, "yaml") == [], instruction
    runs = WORKFLOW.replace("    runs-on: ubuntu-latest\n", "")
    assert lost_keys(WORKFLOW, runs, "Drop the runs on setting of the test job.", "yaml") == []
    assert lost_keys(WORKFLOW, runs, "Add a lint job.", "yaml") == [
        "jobs.test.runs-on"]
