"""What an instruction asks, read from its words: the names it commands an edit of, lists
together, asks to remove or rename, introduces or quotes for the file, and whether it asks for
documentation only. :mod:`copygram.language.targets` reads them against a document (its
definitions) to tell what a program must reach and whether an edit missed it. Pure functions of
the instruction's text (microseconds); the words are English (the edit-kinds rows' and the usual
editor's phrasing), and a reading that finds nothing leaves the checks to what the document
shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_BACKTICKS = re.compile(r"`[^`]*`")


# "Remove the unused function f", "delete `g`": the name right after the verb and its
# describing words. "Remove the print call from f" names ``print``, no definition: nothing.
_REMOVE = re.compile(r"\b(?:remove|delete|drop)\s+(?:(?:the|a|an|unused|dead|old|function|"
                     r"method|class|constant|variable|field|helper|definition|global)\s+)*"
                     r"`?([A-Za-z_$][A-Za-z0-9_$]*)", re.IGNORECASE)


def removed_names(instruction: str) -> list[str]:
    """The names ``instruction`` asks to remove (:data:`_REMOVE`)."""
    return [match.group(1) for match in _REMOVE.finditer(instruction)]


def commanded_removals(instruction: str) -> list[str]:
    """What each sentence or joined command of ``instruction`` that opens with a removal
    ("Remove the debug branch at the start of f", "... , and remove it from g") asks to remove:
    the word after the verb and its describing words (:data:`_REMOVE`: ``debug``, ``it``), in
    order; a removal the instruction only mentions ("Fix f so that it does not drop zeros") is
    none."""
    found = []
    for part in _commands(instruction):
        match = _REMOVE.match(part.strip())
        if match is not None:
            found.append(match.group(1))
    return found


def commanded(instruction: str, defined: Mapping[str, object]) -> list[list[str]]:
    """For each sentence of ``instruction`` that commands an edit of what it names (it starts
    with a verb of :data:`_EDIT_COMMAND`), the document's definitions it names, where it names
    any, or the one it edits where it says which (:func:`_object`): "Add a last parameter
    calls=None to f: ... Give g a parameter calls too and pass it on in its call of f" asks for
    an edit in ``f`` and one in ``g``; "Fix f: use g as h does" for one in ``f`` (to use is no
    edit of ``g``); "Update the callers of f and g" for one in ``f`` or ``g``; "Add a function
    h like f" for none (:func:`added_definitions`: a new unit). What the instruction quotes
    for the file (docstrings, block comments) is left out."""
    groups: list[list[str]] = []
    for part in _commands(instruction):
        if not _EDIT_COMMAND.match(part.strip()) or added_definitions(part):
            # A sentence that adds a definition commands a new unit, not an edit of what it
            # names ("Add a function g like f").
            continue
        names = list(dict.fromkeys(name for name in _WORD.findall(part) if name in defined))
        aimed = _object(part.strip(), defined)
        names = [aimed] if aimed is not None else names
        if names and names not in groups:
            groups.append(names)
    return groups


# "Rename the function f to g", "rename `f` as `g`".
_RENAME = re.compile(r"\brename\s+(?:(?:the|function|method|class|constant|variable|field|"
                     r"helper|global)\s+)*`?([A-Za-z_$][A-Za-z0-9_$]*)`?\s+(?:to|as|into)\s+`?"
                     r"([A-Za-z_$][A-Za-z0-9_$]*)", re.IGNORECASE)


# "Add a function prod_signs(arr): ...", "Add a function vector<int> sum_product(vector<int> v)",
# "add a new method `area`", "Add a class called Shape": the new definition's name is the word
# right before its parameters' parenthesis, else the word right after the noun.
_ADD_NOUN = (r"\b(?:add|write|implement|create|define)\s+(?:(?:a|an|the|new)\s+)*"
             r"(?:function|method|class|helper|procedure)\s+(?:(?:called|named)\s+)?")
_ADD_CALL = re.compile(_ADD_NOUN + r"(?:[^`(:\n.]*?[\s*&>])?([A-Za-z_$][A-Za-z0-9_$]*)\s*\(",
                       re.IGNORECASE)
_ADD_NAME = re.compile(_ADD_NOUN + r"`?([A-Za-z_$][A-Za-z0-9_$]*)", re.IGNORECASE)
# Words that follow "add a function" and name nothing: "Add a function to parse the file".
_NOT_NAMES = frozenset({"to", "that", "which", "for", "with", "in", "of", "and", "the", "so",
                        "returning", "taking", "computing", "is"})


# A sentence that asks for something new: "Add the constant ...", "Insert an import of os".
_ADD_COMMAND = re.compile(r"(?:add|insert|create|define|implement|introduce|declare|write)\b",
                          re.IGNORECASE)


def asks_to_add(instruction: str) -> bool:
    """Whether a sentence of ``instruction`` opens with a verb that asks for something new
    (:data:`_ADD_COMMAND`: "Add the global constant ...", "Insert ..."), or it names a definition
    to add (:func:`added_definitions`). "Fix bugs in closest_integer" asks for none, whatever
    the file holds."""
    words = FOR_FILE.sub(" ", instruction)
    return bool(added_definitions(instruction)) or any(
        _ADD_COMMAND.match(part.strip()) for part in _SENTENCE_END.split(words))


def added_definitions(instruction: str) -> list[str]:
    """The names of the definitions ``instruction`` asks to add (:data:`_ADD_CALL`, else
    :data:`_ADD_NAME`), whatever the document holds."""
    found = [match.group(1) for match in _ADD_CALL.finditer(instruction)]
    if not found:
        found = [match.group(1) for match in _ADD_NAME.finditer(instruction)
                 if match.group(1).lower() not in _NOT_NAMES]
    return found


_AT_TOP = re.compile(r"\b(?:at|to|near)\s+the\s+(?:very\s+)?(?:top|beginning|start|head)\b|"
                     r"\bafter\s+(?:the|its)\s+(?:imports?|#?includes?|using)\b", re.IGNORECASE)
_AT_END = re.compile(r"\b(?:at|to|near)\s+the\s+(?:very\s+)?(?:end|bottom)\b", re.IGNORECASE)


def placed_at(instruction: str) -> str | None:
    """Where ``instruction`` says new code goes: ``"top"`` ("at the top of the file", "right
    after the imports"), ``"end"`` ("at the end of the module"), ``None`` where it says neither
    or both."""
    top, end = bool(_AT_TOP.search(instruction)), bool(_AT_END.search(instruction))
    return "top" if top and not end else "end" if end and not top else None


_EVERY_DEFINITION = re.compile(r"\b(?:every|all|each)\s+(?:of\s+the\s+)?(?:top-level\s+|"
                               r"public\s+)?(?:functions?|methods?|classes|definitions?)\b",
                               re.IGNORECASE)


def names_every_definition(instruction: str) -> bool:
    """Whether ``instruction`` speaks of every definition of the file ("an __all__ list that
    names every top-level function"): the model must see their names."""
    return bool(_EVERY_DEFINITION.search(instruction))


def introduced(instruction: str) -> set[str]:
    """The words of ``instruction`` written as code (module doc), and the names of the
    definitions it asks to add (:func:`added_definitions`: "Add a function fib(n)")."""
    found = set(added_definitions(instruction))
    for match in _BACKTICKS.finditer(instruction):
        found.update(_WORD.findall(match.group()))
    # A name given a value ("a parameter calls=None", "int* calls = nullptr") is code however
    # plainly it is spelled; not on an example's lines (">>> x = f(1)": the example's names).
    found.update(_ASSIGNED.findall(_EXAMPLE_LINE.sub("", instruction)))
    for word in _WORD.findall(instruction):
        if ("_" in word.strip("_") or word.startswith("__")
                or (word[0].islower() and re.search(r"[a-z][A-Z]", word))):
            found.add(word)
    return found


_EXAMPLE_LINE = re.compile(r"^\s*(?:>>>|\.\.\.).*$", re.MULTILINE)
_ASSIGNED = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)\s*=(?!=)\s*\S")


# What an instruction quotes for the file to hold: a docstring, a block comment.
FOR_FILE = re.compile(r'"""([\s\S]*?)"""|\'\'\'([\s\S]*?)\'\'\'|/\*([\s\S]*?)\*/')


_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+")


ECHO_WORDS = 6


"""A sentence of the instruction this long or longer, written into the file, is an echo."""


def flat(text: str) -> str:
    """``text`` with every run of white space one space, stripped."""
    return " ".join(text.split())


def quoted_for_file(instruction: str) -> list[str]:
    """The docstrings and block comments ``instruction`` quotes, each as :func:`flat` text
    (module doc)."""
    return [text for match in FOR_FILE.finditer(instruction)
            if (text := flat(next(part for part in match.groups() if part is not None)))]


# A sentence that tells the editor what to do, not what the code does: "Add a last parameter
# ...", "Give caller_1 ...". What an instruction describes ("Given a positive integer n, return
# ...") may well become a new function's docstring.
_EDIT_VERBS = ("add", "remove", "delete", "drop", "give", "change", "rename", "replace", "fix",
               "update", "move", "insert", "refactor", "implement")


_COMMAND = re.compile(rf"(?:{'|'.join(_EDIT_VERBS)}|make|pass|set|use|write)\b", re.IGNORECASE)


# The verbs of _COMMAND that edit what they name ("use g", "pass it to g", "make it call g"
# name what the edit uses).
_EDIT_COMMAND = re.compile(rf"(?:{'|'.join(_EDIT_VERBS)})\b", re.IGNORECASE)


# A command joined to the one before it in a sentence ("Remove the parameter calls from f, and
# remove it from g too"): the edit of another definition, as a sentence of its own would be.
_CLAUSE = re.compile(rf"[,;]\s+(?:and\s+|then\s+)*(?=(?:{'|'.join(_EDIT_VERBS)})\b)",
                     re.IGNORECASE)


def _commands(instruction: str) -> list[str]:
    """``instruction``'s own words (what it quotes for the file left out) cut into sentences and
    each sentence into its joined commands (:data:`_CLAUSE`)."""
    words = FOR_FILE.sub(" ", instruction)
    return [clause for sentence in _SENTENCE_END.split(words)
            for clause in _CLAUSE.split(sentence)]


# What a command edits: the name right after its verb and describing words ("Give g a
# parameter", "Fix the function f"), else the one it puts something into ("Add a last parameter
# calls=None to f", "Insert a check in f") or takes something out of ("Remove the parameter
# calls from f").
_DESCRIBING = (r"(?:the|a|an|its|function|method|class|constant|variable|field|helper|definition|"
               r"global|docstring|comment|bugs?|in|of|above)")


_OBJECT = re.compile(rf"^(?:{'|'.join(_EDIT_VERBS)})\s+(?:{_DESCRIBING}\s+)*`?"
                     r"([A-Za-z_$][A-Za-z0-9_$]*)", re.IGNORECASE)


_INTO = re.compile(r"\b(?:to|into|in|inside|from)\s+(?:(?:the|function|method|class)\s+)*`?"
                   r"([A-Za-z_$][A-Za-z0-9_$]*)", re.IGNORECASE)


def _object(sentence: str, defined: Mapping[str, object]) -> str | None:
    """The definition a command ``sentence`` edits (:data:`_OBJECT`, then :data:`_INTO`), where
    it names one that way: "Give g a keyword parameter calls=None too and pass it on in its call
    of f" edits ``g`` (a program that changed ``f`` alone missed it); ``None`` where neither
    reads a definition ("Update the callers of f": the edit may be in any it names)."""
    match = _OBJECT.match(sentence)
    if match is not None and match.group(1) in defined:
        return match.group(1)
    for match in _INTO.finditer(sentence):
        if match.group(1) in defined:
            return match.group(1)
    return None


def command_sentences(instruction: str) -> list[str]:
    """The sentences of ``instruction``'s own words (what it quotes left out) that command the
    edit (:data:`_COMMAND`) in :data:`ECHO_WORDS` or more words, as :func:`flat` text."""
    words = _QUOTED.sub(" ", instruction)
    return [flat(part) for part in _SENTENCE_END.split(words)
            if len(part.split()) >= ECHO_WORDS and _COMMAND.match(part.strip())]


_LIST_GAP = re.compile(r"^[`'\"]?(?:\s*,\s*|\s*,?\s+(?:and|&)\s+)[`'\"]?$")


def listed_together(instruction: str, defined: Mapping[str, object]) -> list[list[str]]:
    """Runs of two or more of the document's definitions the instruction lists together ("Fix
    bugs in parse and render", "a, b and c"): each is a target, where one name in a sentence may
    be a passing mention."""
    groups: list[list[str]] = []
    run: list[str] = []
    end = -1
    for match in _WORD.finditer(instruction):
        name = match.group()
        if name not in defined:
            continue  # the gap to the next defined name says whether the run goes on
        if run and _LIST_GAP.match(instruction[end:match.start()]):
            run.append(name)
        else:
            run = [name]
            groups.append(run)
        end = match.end()
    return [group for group in groups if len(set(group)) > 1]


_DOCS = re.compile(r"\b(?:docstrings?|comments?|documentation)\b", re.IGNORECASE)


_CODE_WORK = re.compile(r"\b(?:fix(?:es|ed)?|bugs?|rename|implement|refactor|optimi[sz]e|handle|"
                        r"raise|return)\b", re.IGNORECASE)


# What an instruction quotes (the new docstring's text, a comment, code): not its own words.
_QUOTED = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|/\*[\s\S]*?\*/|`[^`]*`|"[^"\n]*"')


def documentation_only(instruction: str) -> bool:
    """Whether ``instruction`` asks for docstrings or comments and no code work (module doc).
    Microseconds."""
    words = _QUOTED.sub(" ", instruction)
    return bool(_DOCS.search(words)) and not _CODE_WORK.search(words)


def asked_renames(instruction: str) -> list[tuple[str, str]]:
    """The ``(old, new)`` names of each rename ``instruction`` asks (:data:`_RENAME`), whatever
    the document holds."""
    return [(match.group(1), match.group(2)) for match in _RENAME.finditer(instruction)]


__all__ = ["ECHO_WORDS", "FOR_FILE", "added_definitions", "asked_renames", "asks_to_add",
           "command_sentences", "commanded", "commanded_removals", "documentation_only", "flat",
           "introduced", "listed_together", "names_every_definition", "placed_at",
           "quoted_for_file", "removed_names"]
