"""The ``forge`` group: every command, each from the module of its group; a user's mistake, in the input or the
usage, exits 2 with one line."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import click

from ..spec import ForgeError, echo, printable
from ._change import select_change, trace_requirements
from ._grading import grade, regrade
from ._model import model_group
from ._packages import import_synthea, selftest, show_catalog, validate
from ._read import ablation, compare_runs, ledger, replay, summary
from ._release import keygen, release, signoff, verify_release
from ._run import run
from ._serve import fhir_commands, mcp_commands


@contextmanager
def user_errors():
    """Print a user's mistake (any ForgeError, or a usage error) as one line ``file: field: message``, and exit 2."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise  # plain ``forge``: the help
    except click.UsageError as exc:
        echo(usage_line(exc), err=True)
        sys.exit(2)
    except ForgeError as exc:
        echo(printable(str(exc)), err=True)  # one line, though it may quote a file's text
        sys.exit(2)


def usage_line(exc: click.UsageError) -> str:
    """A usage error as ``forge <command>: <option or argument>: message``, without the usage block."""
    param = getattr(exc, "param", None)
    if param is not None:
        field = param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
    else:
        field = getattr(exc, "option_name", None) or getattr(exc, "command_name", None) or "(usage)"
    message = (exc.message or "missing").rstrip(".")
    if possibilities := getattr(exc, "possibilities", None):  # a NoSuchOption's
        message += f" (did you mean {', '.join(possibilities)}?)"
    return f"{exc.ctx.command_path if exc.ctx else 'forge'}: {field}: {message}"


class Forge(click.Group):
    """The ``forge`` group: every command's mistakes, in its input or its usage, go through ``user_errors``."""

    def make_context(self, *args, **kwargs):
        with user_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with user_errors():
            return super().invoke(ctx)


@click.group(cls=Forge, name="forge")
@click.version_option(package_name="medagent-forge")
def main() -> None:
    """MedAgent Forge: grade what a medical agent did to a virtual EHR (synthetic data only)."""
    here = os.getcwd()
    if (
        here not in sys.path
    ):  # an agent of one's own (module:attribute) is found in this folder, as `python -m` finds it
        sys.path.append(here)


for command in (
    validate,
    run,
    model_group,
    summary,
    compare_runs,
    ablation,
    ledger,
    grade,
    mcp_commands,
    fhir_commands,
    regrade,
    replay,
    show_catalog,
    selftest,
    trace_requirements,
    select_change,
    import_synthea,
    release,
    keygen,
    signoff,
    verify_release,
):
    main.add_command(command)
