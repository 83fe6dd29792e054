"""The command-line reference, generated from the ``segmetrics`` parser: ``{cli-reference}`` renders every
(sub)command of :func:`segmetrics_torch.app.cli_parser.build_parser` (or the ``module:function`` given as the
argument) as a section with its description, usage and options, in the words ``--help`` prints.

The help strings are written for a terminal, not as markup (``si*``, ```Segmentation`s``), so they are shown as plain
text: nothing in them can break the build or render as something else (sphinx-argparse parses them as reST, and its
markup errors bypass ``-W``).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator
from typing import Any, ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_id

DEFAULT_BUILDER = "segmetrics_torch.app.cli_parser:build_parser"


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(path, parser)`` of ``parser`` and every subcommand under it, depth first, in the parser's order; an alias
    (a second name of one subparser) is not listed again."""
    yield path or (parser.prog,), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from commands(sub, (*(path or (parser.prog,)), name))


def aliases(parser: argparse.ArgumentParser) -> dict[int, list[str]]:
    """The other names of each subparser of ``parser`` (by ``id``)."""
    names: dict[int, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                names.setdefault(id(sub), []).append(name)
    return {key: value[1:] for key, value in names.items()}


def _option_term(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if not action.option_strings:
        return formatter._get_default_metavar_for_positional(action) if action.metavar is None else str(action.metavar)
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
    return ", ".join(f"{option} {metavar}" for option in action.option_strings)


class CliReference(SphinxDirective):
    """``{cli-reference} [module:function]``: every command of the parser the function builds."""

    optional_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        module_name, function = (self.arguments[0] if self.arguments else DEFAULT_BUILDER).split(":")
        module = importlib.import_module(module_name)
        if module.__file__:
            self.env.note_dependency(module.__file__)
        parser = getattr(module, function)()
        result: list[nodes.Node] = []
        other_names: dict[int, list[str]] = {}
        for path, command in commands(parser):
            other_names.update(aliases(command))
            result.append(self._section(" ".join(path), command, other_names.get(id(command), [])))
        return result

    def _section(self, title: str, parser: argparse.ArgumentParser, other_names: list[str]) -> nodes.section:
        section = nodes.section(ids=[make_id(self.env, self.state.document, "cli", title)], classes=["cli-command"])
        section += nodes.title(text=title)
        if other_names:
            section += nodes.paragraph(text=f"Also called: {', '.join(other_names)}.")
        if parser.description:
            section += nodes.paragraph(text=parser.description)
        usage = parser.format_usage().strip()
        section += nodes.literal_block(usage, usage, classes=["cli-usage"])
        formatter = parser._get_formatter()
        for group in parser._action_groups:
            actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
            actions = [a for a in actions if not isinstance(a, argparse._SubParsersAction)]
            if not actions:
                continue
            section += nodes.rubric(text=group.title or "options")
            options = nodes.definition_list(classes=["cli-options"])
            for action in actions:
                term = nodes.term()
                term += nodes.literal(text=_option_term(action, formatter))
                definition = nodes.definition()
                if action.help:
                    definition += nodes.paragraph(text=formatter._expand_help(action))
                options += nodes.definition_list_item("", term, definition)
            section += options
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                section += nodes.rubric(text="subcommands")
                listing = nodes.definition_list(classes=["cli-subcommands"])
                for choice in action._choices_actions:
                    term = nodes.term()
                    term += nodes.literal(text=choice.dest)
                    listing += nodes.definition_list_item(
                        "", term, nodes.definition("", nodes.paragraph(text=choice.help or ""))
                    )
                section += listing
        return section


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("cli-reference", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
