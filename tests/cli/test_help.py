"""Every flag explains itself (issue 25): each option and positional of every sub-command has
help text, and an option with a default says it (``%(default)s`` or the value itself)."""

import argparse

from memlens.cli.main import build_parser

NO_DEFAULT = (None, False, True, "", [], argparse.SUPPRESS)
"""Defaults that are not worth stating: unset, a switch's off / on state, an empty list."""


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("memlens",)):
    """(command path, parser, action) for every argument of every (sub-)command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            yield path, parser, action


def shown_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help text as ``--help`` prints it (``%(default)s`` expanded, the formatter's own
    default suffix included)."""
    return parser._get_formatter()._expand_help(action)


def states_default(text: str, default) -> bool:
    """True when ``text`` says "default" and shows ``default`` (as written, with thousands
    separators, or %g)."""
    forms = {str(default)}
    if isinstance(default, int | float) and not isinstance(default, bool):
        forms |= {f"{default:,}", f"{default:g}"}
    if isinstance(default, list | tuple):
        forms |= {sep.join(map(str, default)) for sep in (",", ", ", " ")}
    return "default" in text.lower() and any(form in text for form in forms)


def test_walk_sees_every_subcommand():
    paths = {" ".join(path) for path, _, _ in walk(build_parser())}
    assert {"memlens audit", "memlens report", "memlens plan", "memlens tooldrift run",
            "memlens ontology refine", "memlens store export"} <= paths


def test_every_argument_has_help():
    missing = [f"{' '.join(path)} {action.option_strings[0] if action.option_strings else action.dest}"
               for path, _, action in walk(build_parser())
               if not (action.help or "").strip() or action.help == argparse.SUPPRESS]
    assert missing == [], "arguments without help text"


def test_every_default_is_shown():
    hidden = []
    for path, parser, action in walk(build_parser()):
        if not action.option_strings or action.default in NO_DEFAULT or not action.help:
            continue
        if not states_default(shown_help(parser, action), action.default):
            hidden.append(f"{' '.join(path)} {action.option_strings[0]} "
                          f"(default {action.default!r})")
    assert hidden == [], "options whose help does not show their default"


def test_the_checks_catch_a_bare_flag():
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--k", type=int, default=10_000, help="replicates (default %(default)s)")
    parser.add_argument("--b", type=int, default=10_000, help="replicates, default 10,000")
    parser.add_argument("--s", type=int, default=1, help="1: verbatim; 2: via a framework")
    actions = {a.dest: a for _, _, a in walk(parser)}
    assert not actions["n"].help  # caught by test_every_argument_has_help
    assert states_default(shown_help(parser, actions["k"]), 10_000)
    assert states_default(shown_help(parser, actions["b"]), 10_000)
    assert not states_default(shown_help(parser, actions["s"]), 1)  # "1" alone is no default
