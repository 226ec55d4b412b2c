"""MkDocs hook: the CLI reference, written at build time from the ``forge`` click group.

``docs/cli.md`` holds the hand-written part and the marker ``<!-- forge-cli-reference -->``; this hook puts in its
place one section per command and subcommand (its help, usage and options), as ``forge ... --help`` prints them.
The group is imported as ``from forge_kernel.cli import main`` from the repository that holds mkdocs.yml.
"""

from __future__ import annotations

import html
import inspect
import re
import sys
from pathlib import Path

import click

MARKER = "<!-- forge-cli-reference -->"
SPECIAL = re.compile(r"([\\`*_\[\]{}#|])")


def load_group(config) -> click.Group:
    """The ``forge`` group of the repository beside mkdocs.yml (put first on sys.path, so that its code is read)."""
    root = str(Path(config.config_file_path).resolve().parent)
    if sys.path[0] != root:
        sys.path.insert(0, root)
    from forge_kernel.cli import main

    return main


def text(value: str) -> str:
    """Help text as Markdown that shows it literally: no markup, no HTML."""
    return SPECIAL.sub(r"\\\1", html.escape(value, quote=False))


def help_text(command: click.Command) -> str:
    """The command's help as click shows it: its docstring up to ``\\f``, paragraphs kept."""
    raw = inspect.cleandoc(command.help or "").split("\f")[0]
    return "\n\n".join(text(" ".join(p.split())) for p in raw.replace("\b\n", "").split("\n\n") if p.strip())


def walk(command: click.Command, ctx: click.Context, depth: int):
    """(command, context, depth) for the command and every subcommand below it, in the order --help lists them."""
    yield command, ctx, depth
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from walk(sub, click.Context(sub, info_name=name, parent=ctx), depth + 1)


def section(command: click.Command, ctx: click.Context, depth: int) -> str:
    """One command: heading, help, usage, then its arguments and options."""
    path = ctx.command_path
    lines = [
        f"{'#' * min(depth + 2, 6)} `{path}`",
        "",
        help_text(command),
        "",
        "```text",
        command.get_usage(ctx).strip(),
        "```",
        "",
    ]
    arguments = [p for p in command.get_params(ctx) if isinstance(p, click.Argument)]
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]
    if arguments:
        lines += ["Arguments:", ""]
        for argument in arguments:
            extra = [] if argument.required else ["optional"]
            if argument.nargs == -1:
                extra.append("one or more" if argument.required else "any number")
            lines.append(f"- `{argument.human_readable_name}`" + (f": {', '.join(extra)}" if extra else ""))
        lines.append("")
    if options:
        lines += ["Options:", ""]
        for option in options:
            record = option.get_help_record(ctx)
            if record is None:
                continue
            flags, what = record
            lines.append(f"- `{flags}`" + (f": {text(' '.join(what.split()))}" if what else ""))
        lines.append("")
    if isinstance(command, click.Group):
        subs = [n for n in command.list_commands(ctx) if not command.get_command(ctx, n).hidden]
        lines += ["Commands: " + ", ".join(f"`{path} {n}`" for n in subs), ""]
    return "\n".join(lines)


def reference(group: click.Group) -> str:
    """The reference of the whole group, as Markdown."""
    root = click.Context(group, info_name="forge")
    return "\n".join(section(command, ctx, depth) for command, ctx, depth in walk(group, root, 0))


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference(load_group(config)))
