"""The docs and `--help` say what the parser does: every `memory-sim VERB ...` shown in README.md or docs/*.md names
a verb that exists and only flags that verb takes; a synopsis shows a flag outside brackets only where the parser
requires it, and `FLAG X ...` only where the flag takes several values; and every `(default N)` in `--help` is
the parser's default."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from memory_sim.cli import build_parser
from tests.docs.test_code_blocks import FENCE, PAGES, ROOT
from tests.test_cli_json import verbs

GLOBAL_WITH_VALUE = {"--data", "--backend", "--d1-engine", "--model"}
# Flags a verb's handler requires in one of its forms (argparse cannot say "ids or --npc").
REQUIRED_BY_HANDLER = {("forget", "--npc")}
PARSER = build_parser()
VERBS = dict(verbs(PARSER))


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


def _verb_of(tokens: list[str]) -> tuple[str | None, list[str]]:
    """The longest verb path the tokens start with (global options and their values skipped), and the rest."""
    rest = list(tokens)
    while rest and rest[0] in GLOBAL_WITH_VALUE | {"--json"}:
        rest = rest[2:] if rest[0] in GLOBAL_WITH_VALUE else rest[1:]
    words: list[str] = []
    while rest and any(v == " ".join([*words, rest[0]]) or v.startswith(" ".join([*words, rest[0]]) + " ")
                       for v in VERBS):
        words.append(rest.pop(0))
    name = " ".join(words)
    return (name if name in VERBS else None), rest


def _shown_commands() -> Iterator[tuple[str, str, bool]]:
    """(page, the command shown, whether it is a synopsis) for each `memory-sim` command at the start of a line (or
    after `$ `, or after several spaces in a synopsis) of a code block."""
    for page in PAGES:
        for info, body in FENCE.findall(page.read_text(encoding="utf-8")):
            for line in body.splitlines():
                # a synopsis names its values by placeholders: NPC, TEXT, X
                synopsis = info.strip() == "text" and line.startswith("memory-sim ") and bool(
                    re.search(r"\b[A-Z][A-Z0-9_]*\b", line))
                command = re.sub(r"^\$ (?:\w+=\S+ )*", "", line)
                if not command.startswith("memory-sim "):
                    continue
                for part in re.split(r"\s{3,}(?=memory-sim )", command):
                    shown = re.split(r"\s{3,}|\s+#|\s*[|&;>]\s", part)[0] if not synopsis else part.split("  ")[0]
                    yield page.relative_to(ROOT).as_posix(), shown.strip(), synopsis


SHOWN = sorted(set(_shown_commands()))


def test_the_walk_finds_the_commands_the_docs_show() -> None:
    assert len(SHOWN) > 40
    assert ("docs/memory.md", "memory-sim diary NPC --day D [--write]", True) in SHOWN


@pytest.mark.parametrize(("page", "shown", "synopsis"), SHOWN, ids=[f"{p}: {s}" for p, s, _ in SHOWN])
def test_each_command_shown_names_a_verb_and_flags_it_takes(page: str, shown: str, synopsis: bool) -> None:
    tokens = [t for t in shown.split()[1:] if not re.fullmatch(r"\[--(data|model|backend|d1-engine)|[A-Z]+\]", t)]
    alternatives = tokens[1].split("|") if len(tokens) > 1 and tokens[0] in {"vectorize", "d1"} else [tokens[1:2]]
    for alternative in alternatives if len(alternatives) > 1 else [None]:
        words = tokens if alternative is None else [tokens[0], alternative, *tokens[2:]]
        _check_command(page, shown, synopsis, words)


def _check_command(page: str, shown: str, synopsis: bool, tokens: list[str]) -> None:
    verb, rest = _verb_of(tokens)
    assert verb is not None, f"{page}: {shown!r} names no verb of memory-sim"
    parser = VERBS[verb]
    options = _options(parser)
    flags = [t.strip("[]") for t in rest if t.strip("[]").startswith("--")]
    unknown = [f.split("=")[0] for f in flags if f.split("=")[0] not in options]
    assert not unknown, f"{page}: {shown!r}: `memory-sim {verb}` takes no {unknown}"
    if synopsis:
        _check_synopsis(page, shown, verb, rest, options, _required(parser, verb))


def _required(parser: argparse.ArgumentParser, verb: str) -> set[str]:
    """The flags a user must give: required ones, the members of a required one-of group, the handler's."""
    flags = {f for a in parser._actions if a.required for f in a.option_strings}
    for group in parser._mutually_exclusive_groups:
        if group.required:
            flags |= {f for a in group._group_actions for f in a.option_strings}
    return flags | {flag for v, flag in REQUIRED_BY_HANDLER if v == verb}


def _check_synopsis(page: str, shown: str, verb: str, rest: list[str], options: dict[str, argparse.Action],
                    required: set[str]) -> None:
    depth = 0
    for i, token in enumerate(rest):
        flag = token.lstrip("[").rstrip("]").split("=")[0]
        opens = len(token) - len(token.lstrip("["))
        if flag.startswith("--") and flag in options:
            action = options[flag]
            outside = depth + opens == 0
            assert outside == (flag in required), (
                f"{page}: {shown!r} shows {flag} as {'required' if outside else 'optional'}; "
                f"`memory-sim {verb}` has it {'required' if flag in required else 'optional'}"
            )
            repeated = i + 2 < len(rest) and rest[i + 2].startswith("...")
            many = isinstance(action, argparse._AppendAction) or action.nargs in ("*", "+")
            assert not repeated or many, f"{page}: {shown!r} shows {flag} repeated; it takes one value"
        depth += token.count("[") - token.count("]")


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_help_states_the_parsers_defaults(verb: str) -> None:
    parser = VERBS[verb]
    parser.format_help()  # every verb's --help renders
    for action in parser._actions:
        for said in re.findall(r"\(default:? ([0-9][0-9.]*)\)", action.help or ""):
            assert float(said) == float(action.default), (
                f"`memory-sim {verb} --help` says {action.option_strings} defaults to {said}; it is {action.default!r}"
            )


def test_the_synopsis_check_can_fail() -> None:
    options = _options(VERBS["remember"])
    with pytest.raises(AssertionError, match="shows --importance as required"):
        _check_synopsis("p", "s", "remember", ["NPC", "TEXT", "--importance", "X"], options, set())
    with pytest.raises(AssertionError, match="shows --about repeated"):
        _check_synopsis("p", "s", "remember", ["[--about", "NPC", "...]"], options, set())
    with pytest.raises(AssertionError, match="shows --day as optional"):
        _check_synopsis("p", "s", "diary", ["NPC", "[--day", "D]"], _options(VERBS["diary"]), {"--day"})
