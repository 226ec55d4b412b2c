"""The workbench in JupyterLab: started on loopback with a token, without the news pop-up.

``python -m forge_kernel.widgets.lab [ROOT]`` prints the URL with its token, then runs Lab until interrupted.
"""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import sys
from pathlib import Path

QUIET = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
"""Lab settings that keep it from asking to fetch news or check for updates (both would leave the machine)."""


def quiet_lab(prefix: str | Path = sys.prefix) -> Path:
    """Write QUIET into the Lab settings overrides of this environment (keeping other overrides); their path."""
    path = Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    settings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    merged = {**settings, **{plugin: {**settings.get(plugin, {}), **values} for plugin, values in QUIET.items()}}
    if merged != settings:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    return path


def free_port(start: int = 8888) -> int:
    """The first port from ``start`` on that 127.0.0.1 can bind."""
    for port in range(start, start + 100):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port on 127.0.0.1 in {start}-{start + 99}")


def lab_command(root: str | Path, port: int, token: str) -> list[str]:
    """The command that starts Lab on 127.0.0.1:port over ``root``, with ``token`` required."""
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--ServerApp.allow_root=True",
    ]


def main(root: str | Path = ".") -> None:
    quiet_lab()
    port, token = free_port(), secrets.token_hex(24)
    print(f"JupyterLab (synthetic data only): http://127.0.0.1:{port}/lab?token={token}", flush=True)
    try:
        subprocess.run(lab_command(Path(root).resolve(), port, token), check=False)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main(*sys.argv[1:2])
