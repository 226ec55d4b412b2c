"""``python -m forge_kernel.cli``: the ``forge`` command."""

from . import main

if __name__ == "__main__":  # not when a process spawned by this one imports it again (a LocalCluster's workers)
    main(prog_name="forge")
