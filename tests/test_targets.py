"""Whether an edit reached what its instruction names (copygram.language.targets)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from copygram.language.targets import (
    find_misses,
    introduces_names,
    named_reach,
    removal_targets,
    removes_part,
    renames,
    targets_definitions,
)

PY = '''import os

LIMIT = 3


def mean(values):
    """Average."""
    return sum(values) / len(values)


# The middle value.
def median(values):
    return sorted(values)[len(values) // 2]
'''

JS = '''/* Sum it. */
const total = (xs) => {
  return xs.reduce((a, b) => a + b, 0)
}

function double(x) {
  return 2 * x
}
'''


def test_a_named_definition_left_untouched_is_a_miss() -> None:
    wrong = PY.replace("sum(values) / len(values)", "sum(values) / max(1, len(values))")
    assert find_misses(PY, wrong, "Fix bugs in median.", "python") == (
        "the instruction names median and the edit left its definition as it was",)
    # One of the named definitions reached is enough (a name may be mentioned in passing).
    assert find_misses(PY, wrong, "Fix mean: unlike median it must not sort.", "python") == ()
    assert find_misses(PY, PY, "Fix mean and median.", "python") == (
        "the instruction names mean, median and the edit left each definition as it was",)
    right = PY.replace("// 2]", "// 2 - 1]")
    assert find_misses(PY, right, "Fix bugs in median.", "python") == ()
    # The comment block right above a definition is part of it; so is a module-level variable.
    commented = PY.replace("# The middle value.", "# The middle one.")
    assert find_misses(PY, commented, "Reword the comment of median.", "python") == ()
    assert find_misses(PY, PY.replace("LIMIT = 3", "LIMIT = 4"), "Set LIMIT to 4",
                       "python") == ()
    assert find_misses(PY, wrong, "Set LIMIT to 4", "python") != ()


def test_a_name_the_instruction_introduces_must_be_written() -> None:
    added = PY + "\n\ndef mode_of(values):\n    return max(values, key=values.count)\n"
    instruction = "Add a function mode_of(values) that returns the most common value."
    assert find_misses(PY, added, instruction, "python") == ()
    assert find_misses(PY, PY.replace("LIMIT = 3", "LIMIT = 5"), instruction, "python") == (
        "mode_of is introduced by the instruction and the edit never wrote it",)
    # Plain lowercase words are not taken for names: "values" and "sum" need not appear.
    assert find_misses(PY, added, "Add mode_of; like sum(values) it reads values", "python") == ()
    assert find_misses(PY, PY, "Add the constant `RETRIES = 2`.", None) != ()
    # A name given a value is code however plainly spelled ("a parameter calls=None"), unless
    # it is an example's (">>> x = ..."): the small add_parameter rows' programs, which missed.
    ask = "Add a last parameter calls=None to mean. Give median a parameter calls = None too."
    assert introduces_names(PY, ask) and not targets_definitions(PY, ask, "python")
    assert named_reach(PY, ask, "python") == (((6, 8),), ((11, 13),))
    assert not introduces_names(PY, "Make mean work like this:\n>>> x = mean([1])\n")
    assert not introduces_names(PY, "Fix mean: it must return total == 0 for empty lists.")


def test_javascript_definitions_and_their_comments() -> None:
    fixed = JS.replace("2 * x", "x + x")
    assert find_misses(JS, fixed, "Fix bugs in double.", "javascript") == ()
    assert find_misses(JS, fixed, "Fix bugs in total.", "javascript") == (
        "the instruction names total and the edit left its definition as it was",)
    reworded = JS.replace("/* Sum it. */", "/* The sum of xs. */")
    assert find_misses(JS, reworded, "Replace the comment above total.", "javascript") == ()


def test_lines_added_inside_or_right_after_a_definition_reach_it() -> None:
    inside = PY.replace('    """Average."""\n', '    """Average."""\n    assert values\n')
    assert find_misses(PY, inside, "Make mean refuse an empty list.", "python") == ()


@given(st.lists(st.sampled_from(["mean", "median", "LIMIT", "fix", "the", "new_name", "(", ","]),
                max_size=8))
def test_an_edit_that_changes_nothing_misses_whatever_it_names(words: list[str]) -> None:
    instruction = " ".join(words)
    misses = find_misses(PY, PY, instruction, "python")
    named = {"mean", "median", "LIMIT"} & set(words)
    assert bool(misses) == bool(named or "new_name" in words)


def test_an_instruction_targets_definitions_when_it_names_some_and_no_new_name() -> None:
    from copygram.language.targets import targets_definitions as targets

    assert targets(PY, "Fix bugs in median.", "python")
    assert targets(PY, "Set LIMIT to 4", "python")
    assert targets(PY, "Fix median: return the mean of the two middle values.", "python")
    assert not targets(PY, "Rename median to middle_value.", "python")  # a new name
    assert not targets(PY, "Make everything faster.", "python")  # nothing named
    assert targets(JS, "Fix bugs in double.", "javascript")


DOCS_ONLY = "the instruction asks for documentation only and the edit changed the code"


def test_a_documentation_edit_that_changes_code_is_a_miss() -> None:
    instruction = 'Replace the docstring of mean with the one-line docstring """Return it."""'
    right = PY.replace('"""Average."""', '"""Return it."""')
    assert find_misses(PY, right, instruction, "python") == ()
    # The program wrote the function again and changed its body too.
    wrong = right.replace("/ len(values)", "/ (len(values) or 1)")
    assert find_misses(PY, wrong, instruction, "python") == (DOCS_ONLY,)
    # A docstring added where there was none is documentation too.
    added = PY.replace("def median(values):\n", 'def median(values):\n    """Middle."""\n')
    assert find_misses(PY, added, "Add a docstring to median.", "python") == ()
    # An instruction that asks for code work as well is not documentation only; the quoted new
    # docstring's words ("Return it") are not the instruction's.
    assert find_misses(PY, wrong, "Fix mean and update its docstring.", "python") == ()


def test_comments_are_javascript_s_documentation() -> None:
    instruction = "Replace the comment above total with the one-line comment /* Add them up. */"
    right = JS.replace("/* Sum it. */", "/* Add them up. */")
    assert find_misses(JS, right, instruction, "javascript") == ()
    wrong = right.replace("a + b", "b + a")
    assert find_misses(JS, wrong, instruction, "javascript") == (DOCS_ONLY,)
    # No reader for the language, or a result that does not parse: nothing to compare.
    assert find_misses(JS, wrong, instruction, None) == ()
    assert find_misses(JS, wrong + "}\n", instruction, "javascript") == ()


@given(st.sampled_from(['"""New."""', '"""A longer\n    docstring."""', "# a comment"]))
def test_documentation_alone_never_counts_as_code(doc: str) -> None:
    # Whatever documentation replaces the old, the code is the same.
    edited = PY.replace('"""Average."""', doc)
    assert find_misses(PY, edited, "Rewrite the docstring of mean.", "python") == ()


CPP = '''#include<vector>
using namespace std;
const int LIMIT = 3;

/* Twice x. */
int twice(int x){
    int local = x;
    return 2 * local;
}

class Box { public: int size() { return 1; } };
int Box::area(int w) { return w; }
'''

JAVA = '''class Solution {
    public static final int LIMIT = 3;

    /**
     * Twice x.
     */
    public int twice(int x) {
        int local = x;
        return 2 * local;
    }

    public int other(int x) {
        return x;
    }
}
'''


def test_cpp_and_java_definitions_reach_the_checks_and_the_mode_choice() -> None:
    from copygram.language import parsers
    from copygram.language.definitions import definitions as _definitions
    from copygram.language.targets import targets_definitions

    for text, language in ((CPP, "cpp"), (JAVA, "java")):
        if parsers.parser(language) is None:
            continue  # the grammar is not installed here: nothing is read
        names = set(_definitions(text, language))
        assert {"twice", "LIMIT"} <= names and "local" not in names  # locals are nobody's
        assert targets_definitions(text, "Fix bugs in twice.", language)
        assert not targets_definitions(text, "Rename twice to doubled_value.", language)
        # The comment right above a definition belongs to it; a body edit reaches it.
        fixed = text.replace("return 2 * local;", "return local + local;")
        assert find_misses(text, fixed, "Fix bugs in twice.", language) == ()
        assert find_misses(text, fixed, "Fix bugs in LIMIT.", language) == (
            "the instruction names LIMIT and the edit left its definition as it was",)
    if parsers.parser("cpp") is not None:
        assert {"Box", "size", "area"} <= set(_definitions(CPP, "cpp"))
    if parsers.parser("java") is not None:
        assert {"Solution", "other"} <= set(_definitions(JAVA, "java"))
        short = JAVA.replace("    /**\n     * Twice x.\n     */", "    /** Twice x. */")
        ask = "Replace the Javadoc comment of twice with the one-line comment /** Twice x. */."
        assert find_misses(JAVA, short, ask, "java") == ()
        changed = short.replace("return x;", "return -x;")
        strayed = ("the instruction names twice and the edit also changed other, which it "
                   "does not name")
        assert find_misses(JAVA, changed, ask, "java") == (
            strayed, "the instruction asks for documentation only and the edit changed the code")


def test_names_listed_together_are_each_a_target_and_blank_lines_reach_nothing() -> None:
    fixed_mean = PY.replace("sum(values) / len(values)", "sum(values) / max(1, len(values))")
    assert find_misses(PY, fixed_mean, "Fix bugs in mean and median.", "python") == (
        "the instruction lists mean and median together and the edit left median as it was",)
    both = fixed_mean.replace("sorted(values)[len(values) // 2]", "sorted(values)[0]")
    for ask in ("Fix bugs in mean and median.", "Fix `mean`, `median`.",
                "Fix bugs in median, mean."):
        assert find_misses(PY, both, ask, "python") == ()
    # A name in passing stays a mention: one of them reached is enough.
    assert find_misses(PY, fixed_mean, "Fix mean: use median as the model does.",
                       "python") == ()
    # Only blank lines or trailing spaces changed inside median: it was not reached.
    spaced = PY.replace("def median(values):\n", "def median(values):  \n\n")
    assert find_misses(PY, spaced, "Fix bugs in median.", "python") == (
        "the instruction names median and the edit left its definition as it was",)


_BODIES = {"mean": "sum(values) / len(values)", "median": "sorted(values)[len(values) // 2]"}
_ASKS = ("Fix bugs in {a}.", "Fix bugs in {a} and {b}.", "Fix {a}: use {b} as the model does.",
         "Fix bugs in {b}, {a}.", "Fix `{a}`, `{b}`.", "Fix {a}. Update {b} to match.",
         "The {a} is wrong; it should use {b}.", "Fix {a}. Give {b} and {a} a comment.")


@given(st.sets(st.sampled_from(sorted(_BODIES))), st.sampled_from(_ASKS), st.booleans())
def test_the_reach_touch_named_holds_is_what_the_miss_check_asks(
        edited: set[str], ask: str, swap: bool) -> None:
    """A program meets every requirement of ``named_reach`` exactly where the miss check finds
    no named definition left as it was: the constraint takes away only programs the check
    would send to a rewrite."""
    a, b = ("median", "mean") if swap else ("mean", "median")
    instruction = ask.format(a=a, b=b)
    after = PY
    for name in edited:
        after = after.replace(_BODIES[name], _BODIES[name] + " + 0")
    changed = [number for number, (old, new) in enumerate(
        zip(PY.splitlines(), after.splitlines(), strict=True), start=1) if old != new]
    reach = named_reach(PY, instruction, "python")
    assert reach
    met = all(any(start <= line <= end for line in changed for start, end in spans)
              for spans in reach)
    left = [miss for miss in find_misses(PY, after, instruction, "python") if "as it was" in miss]
    assert met == (not left)


def test_each_sentence_that_commands_an_edit_is_a_target() -> None:
    # The add_parameter rows of the large bucket: a program that changed the caller alone.
    ask = ("Add a last parameter calls=None to median: when calls is not None, median first "
           "appends the tuple (values,) of its arguments to it. Give mean a keyword parameter "
           "calls=None too and pass it on in its call of median.")
    caller_only = PY.replace("def mean(values):", "def mean(values, calls=None):")
    left = "a sentence of the instruction asks for an edit in median and the edit left it as it was"
    assert find_misses(PY, caller_only, ask, "python") == (left,)
    both = caller_only.replace("def median(values):", "def median(values, calls=None):")
    assert find_misses(PY, both, ask, "python") == ()
    # "Give mean ...": the sentence edits the name after its verb, not the one it passes
    # things to (the large add_parameter rows: programs that changed the callee alone).
    callee_only = PY.replace("def median(values):", "def median(values, calls=None):")
    assert find_misses(PY, callee_only, ask, "python") == (
        "a sentence of the instruction asks for an edit in mean and the edit left it as it was",)
    assert named_reach(PY, ask, "python") == (((6, 8),), ((11, 13),))
    # Into what a sentence puts something ("Add ... to median"), and where neither reads a
    # definition ("Update the callers of median"), any one it names.
    assert named_reach(PY, "Add a call of mean to median.", "python") == (((11, 13),),)
    assert named_reach(PY, "Update the callers of median, like mean.", "python") == (
        ((6, 8), (11, 13)),)
    # Describing sentences ("when calls is not None, ...") and verbs of use name no target.
    assert find_misses(PY, callee_only, "Fix median: use mean as the model does. The mean is "
                       "right.", "python") == ()


def test_a_command_joined_to_another_in_one_sentence_is_a_target_too() -> None:
    # The remove_parameter rows: "..., and remove it from g too" edits g, and "from f" names
    # what the removal edits.
    ask = ("Remove the parameter calls from median, with the code in median that uses it, and "
           "remove it from mean too, which only passes it on to median.")
    assert named_reach(PY, ask, "python") == (((6, 8),), ((11, 13),))
    callee_only = PY.replace("return sorted(values)", "return sorted(values, key=None)")
    assert find_misses(PY, callee_only, ask, "python") == (
        "a sentence of the instruction asks for an edit in mean and the edit left it as it was",)
    # A clause that describes (", which only passes it on to median") commands nothing.
    assert named_reach(PY, "Fix mean, which only calls median.", "python") == (((6, 8),),)


def test_a_commanded_removal_of_no_definition_removes_part_of_one() -> None:
    assert removes_part(PY, "Remove the debug branch at the start of median.", "python")
    assert removes_part(PY, "Fix mean, and remove the parameter values from median.", "python")
    for whole in ("Remove the function median; nothing calls it.", "Delete `median`.",
                  "Remove median. Then drop it from the docs.",
                  "Fix median so that it does not remove zeros."):
        assert not removes_part(PY, whole, "python"), whole


def test_a_definition_the_instruction_asks_to_remove_must_be_gone() -> None:
    kept = PY.replace("return sorted(values)[len(values) // 2]", "return 0")
    gone = PY[: PY.index("# The middle value.")]
    miss = "the instruction asks to remove median and the edit kept its definition"
    for ask in ("Remove the function median; nothing calls it.", "Delete `median`.",
                "remove the unused helper median"):
        assert miss in find_misses(PY, kept, ask, "python")
        assert miss not in find_misses(PY, gone, ask, "python")
    # What the retry of an unchanged block reads (decode.unchanged): the definition's lines.
    assert removal_targets(PY, "Remove the function median; nothing calls it.", "python") == (
        (11, 13),)
    assert removal_targets(PY, "Fix median.", "python") == ()
    assert removal_targets(PY, "Remove the function nothing_here.", "python") == ()
    # A statement inside a definition is no definition to remove.
    assert not [m for m in find_misses(PY, kept, "Remove the sorted call from median.",
                                       "python") if "remove" in m]


def test_named_reach_holds_each_definition_listed_together_and_any_one_named() -> None:
    mean, median = ((6, 8),), ((11, 13),)  # each with the comment block above
    assert named_reach(PY, "Fix bugs in mean and median.", "python") == (mean, median)
    # A sentence that commands an edit asks for it in what it names ("Fix mean"); what the
    # rest names ("use median") is what the edit uses. Any one named where none is commanded.
    assert named_reach(PY, "Fix mean: use median as the model does.", "python") == (mean,)
    assert named_reach(PY, "The mean should use median as the model does.", "python") == (
        (mean[0], median[0]),)
    assert named_reach(PY, "Fix bugs in median.", "python") == (median,)
    # A new name: a rename reaches its definition and uses (the next test); an added function
    # one of its places (after the head's LIMIT = 3, or after median, the last definition),
    # whatever definition it names in passing; a mix of both, none.
    assert named_reach(PY, "Rename mean to `average_of`.", "python") == (mean,)
    assert named_reach(PY, "Add a function `average_of` like mean.", "python") == (
        ((3, 3), median[0]),)
    assert named_reach(PY, "Rename mean to `average_of` and add `mode_of`.", "python") == ()
    assert named_reach(PY, "Make it faster.", "python") == ()


@given(st.lists(st.sampled_from(["", "   ", "\t"]), min_size=1, max_size=4))
def test_blank_lines_alone_never_reach_a_definition(blanks: list[str]) -> None:
    lines = PY.splitlines(keepends=True)
    at = lines.index("def median(values):\n") + 1
    padded = "".join([*lines[:at], *(b + "\n" for b in blanks), *lines[at:]])
    assert find_misses(PY, padded, "Fix bugs in median.", "python") != ()


def test_an_edit_of_a_definition_the_instruction_does_not_name_is_a_miss() -> None:
    fixed = PY.replace("// 2]", "// 2 - 1]")
    strayed = fixed.replace("sum(values) / len(values)", "sum(values) / 2")
    assert find_misses(PY, strayed, "Fix bugs in median.", "python") == (
        "the instruction names median and the edit also changed mean, which it does not name",)
    # Lines outside every definition may change with it (an import, a constant), and a
    # definition may be added next to the named one.
    assert find_misses(PY, fixed.replace("import os", "import os\nimport math"),
                       "Fix bugs in median.", "python") == ()
    assert find_misses(PY, fixed.replace("LIMIT = 3", "LIMIT = 3\nSTEP = 1"),
                       "Fix bugs in median.", "python") == ()
    # Not where the instruction introduces a name (a new helper may take code from another),
    # nor where the named one was left as it was (that miss says enough).
    helped = strayed.replace("return sorted", "return middle_of(values) or sorted")
    assert find_misses(PY, helped, "Fix median with a helper `middle_of`.", "python") == ()
    left = "the instruction names median and the edit left its definition as it was"
    assert find_misses(PY, PY.replace("sum(values) / len(values)", "0"), "Fix bugs in median.",
                       "python") == (left,)
    klass = ("class Stats:\n    def mean(self, v):\n        return sum(v)\n\n"
             "    def median(self, v):\n        return v[0]\n\n\ndef other():\n    return 1\n")
    method_fixed = klass.replace("return v[0]", "return sorted(v)[len(v) // 2]")
    # The class that holds the named method is no stray; its other method is.
    assert find_misses(klass, method_fixed, "Fix bugs in median.", "python") == ()
    both = method_fixed.replace("return sum(v)", "return sum(v) / len(v)")
    assert find_misses(klass, both, "Fix bugs in median.", "python") == (
        "the instruction names median and the edit also changed mean, which it does not name",)


def test_a_docstring_or_comment_the_instruction_quotes_must_be_written() -> None:
    """Asked for a new docstring, the default model changed one line of the old one and the
    check passed it (a 1,049-line file): the text it quotes must now be in the file."""
    instruction = 'Replace the docstring of mean with the one-line docstring """The mean."""'
    right = PY.replace('"""Average."""', '"""The mean."""')
    assert find_misses(PY, right, instruction, "python") == ()
    assert find_misses(PY, right.replace('"""The mean."""', "'''  The\n  mean. '''"),
                       instruction, "python") == ()  # quotes and white space aside
    kept = PY.replace('"""Average."""', '"""Average value."""')
    assert find_misses(PY, kept, instruction, "python") == (
        "the instruction quotes 'The mean.' for the file and the edit never wrote it",)
    # A block comment: written as one, or as a line comment.
    ask = "Replace the comment above total with the one-line comment /* Add them up. */."
    assert find_misses(JS, JS.replace("/* Sum it. */", "/* Add them up. */"), ask,
                       "javascript") == ()
    assert find_misses(JS, JS.replace("/* Sum it. */", "// Add them up."), ask,
                       "javascript") == ()
    assert find_misses(JS, JS.replace("/* Sum it. */", "/* Add it up. */"), ask,
                       "javascript") != ()
    # Text the document holds already is not asked for (an instruction that removes it).
    assert find_misses(JS, JS.replace("/* Sum it. */\n", ""),
                       "Remove the comment /* Sum it. */ above total.", "javascript") == ()


def test_an_edit_that_writes_the_instruction_into_the_file_is_a_miss() -> None:
    """The default model once replaced a function's body by a docstring quoting the
    instruction (a 1,178-line file)."""
    instruction = ("Give median a keyword parameter calls=None. When calls is not None, "
                   "median first appends the tuple (values,) to it.")
    echoed = PY.replace("    return sorted(values)[len(values) // 2]",
                        f'    """{instruction}"""')
    misses = find_misses(PY, echoed, instruction, "python")
    assert any(miss.startswith("the edit wrote the instruction's words 'Give median a keyword")
               for miss in misses)
    # What the instruction describes may become a docstring: no echo.
    added = PY + '\n\ndef mode_of(values):\n    """Return the most common of the values."""\n'
    assert find_misses(PY, added + "    return max(values, key=values.count)\n",
                       "Add a function mode_of(values): Return the most common of the values.",
                       "python") == ()
    right = PY.replace("def median(values):\n",
                       "def median(values, calls=None):\n    if calls is not None:\n"
                       "        calls.append((values,))\n")
    assert find_misses(PY, right, instruction, "python") == ()
    # Short sentences and words the document held already are no echo.
    assert find_misses(PY, PY.replace("LIMIT = 3", "LIMIT = 4  # Set the limit"),
                       "Set the limit to 4.", "python") == ()


CALLERS = PY + '''

def spread(values):
    """Uses mean: not the mean() of statistics."""
    return max(values) - mean(values)


print(mean([1, 2]))  # mean of two
'''


def test_a_rename_reaches_the_definition_and_every_use() -> None:
    ask = "Rename the function mean to average and update every call of it."
    assert renames(CALLERS, ask, "python") == (("mean", "average"),)
    assert renames(CALLERS, "Rename mean to median.", "python") == ()  # not a new name
    assert renames(CALLERS, "Rename the function nothing to some.", "python") == ()
    # The definition, the function that calls it (its docstring's mention is none), the
    # module-level call.
    assert named_reach(CALLERS, ask, "python") == (((6, 8),), ((16, 18),), ((21, 21),))
    right = CALLERS.replace("mean(", "average(")
    assert find_misses(CALLERS, right, ask, "python") == ()
    # The definition alone renamed: the callers still use the old name.
    half = CALLERS.replace("def mean(", "def average(")
    assert find_misses(CALLERS, half, ask, "python") == (
        "the instruction renames mean to average and the edit left code that uses mean",)
    # What stays in documentation is no use.
    assert find_misses(CALLERS, right.replace("Uses average", "Uses mean"), ask, "python") == ()
    js = "/* >>> total([1]) */\nconst total = (xs) => xs.length\nconst twice = (xs) => 2 * total(xs)\n"
    js_ask = "Rename total to count and update every call of it."
    assert named_reach(js, js_ask, "javascript") == (((1, 2),), ((3, 3),))
    assert find_misses(js, js.replace("total(xs)", "count(xs)"), js_ask, "javascript") != ()
    assert find_misses(js, js.replace("total", "count"), js_ask, "javascript") == ()


_USES = ("def mean(", "centre = mean(", "print(mean(")


@given(st.sets(st.sampled_from(_USES)))
def test_a_rename_misses_exactly_where_code_keeps_the_old_name(renamed: set[str]) -> None:
    ask = "Rename mean to average_of and update every call of it."
    text = CALLERS.replace("return max(values) - mean(values)",
                           "centre = mean(values)\n    return max(values) - centre")
    after = text
    for use in renamed:
        after = after.replace(use, use.replace("mean", "average_of"))
    misses = find_misses(text, after, ask, "python")
    left = "the instruction renames mean to average_of and the edit left code that uses mean"
    assert (left in misses) == (renamed != set(_USES))
    # The reach holds the definition and each place that uses it, the documentation aside.
    assert named_reach(text, ask, "python")[0] == ((6, 8),)


def test_an_addition_is_held_to_its_places_and_a_new_parameter_to_its_definition() -> None:
    from copygram.language.targets import block_scope

    instruction = "Add a function mode_of(values) that returns the most common value."
    # After the head's last statement (LIMIT = 3) or after median, the last definition.
    assert named_reach(PY, instruction, "python") == (((3, 3), (11, 13)),)
    assert block_scope(PY, instruction, "python") == ((3, 3), (11, 13))
    # A new name that goes into a definition the document has: that definition, no scope.
    into = "Add a parameter max_len to median."
    assert named_reach(PY, into, "python") == (((11, 13),),)
    assert block_scope(PY, into, "python") == ()
    # A rename's scope is its uses, as before; a fix has none.
    assert block_scope(PY, "Rename median to middle_value.", "python") == ((12, 12),)
    assert block_scope(PY, "Fix bugs in median.", "python") == ()


BALLS = ("import math\n\n\ndef area(r):\n    return math.pi * r * r\n\n\n"
         "def circumference(r):\n    return 2 * math.pi * r\n")
ADD_VOLUME = "Add a function volume(r) that returns the volume of a ball of radius r."


@given(st.sampled_from(['    """The volume of a ball."""\n', "    # the volume\n    pass\n",
                        "    ...\n"]))
def test_an_added_function_with_nothing_in_its_body_is_a_miss(body: str) -> None:
    stub = BALLS + "\n\ndef volume(r):\n" + body
    assert find_misses(BALLS, stub, ADD_VOLUME, "python") == (
        "the edit added volume with nothing in its body",)
    done = BALLS + "\n\ndef volume(r):\n" + body + "    return 4 / 3 * math.pi * r ** 3\n"
    assert find_misses(BALLS, done, ADD_VOLUME, "python") == ()


def test_an_added_function_with_another_ones_body_is_a_miss() -> None:
    area = "/* The area. */\nconst area = (r) => {\n  return r * r;\n}\n"
    for language, document, copied, source in (
            ("python", BALLS, BALLS + "\n\ndef volume(r):\n    return 2 * math.pi * r\n",
             "circumference"),
            ("javascript", area, area + "const volume = (r) => {\n  return r * r;\n}\n", "area")):
        assert find_misses(document, copied, ADD_VOLUME, language) == (
            f"the edit added volume with the body of {source}",)
    # The same body under a name the instruction does not add is no miss of this kind.
    twin = BALLS + "\n\ndef perimeter(r):\n    return 2 * math.pi * r\n"
    assert not any("body" in miss for miss in find_misses(BALLS, twin, ADD_VOLUME, "python"))
