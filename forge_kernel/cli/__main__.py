"""``python -m forge_kernel.cli``: the ``forge`` command."""

from . import main

main(prog_name="forge")
