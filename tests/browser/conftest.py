"""Headless Debian Chromium through Playwright, offline: every request not to 127.0.0.1, data: or blob: is aborted.
Chromium sees none of the machine's CJK fonts (``no_cjk_fonts``): the zh text renders in the font the package ships,
as on a machine that has none (tests/browser/test_chinese_fonts.py checks it).

Skipped, with the reason, where chromium is missing outside CI; CI installs it (.ci/run) and never skips.
Screenshots are kept as test artefacts in tmp/artefacts/browser/ (or $FORGE_ARTEFACTS), listed at the end of the run.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from forge_kernel.widgets.lab import free_port, lab_command, quiet_lab

CHROMIUM = os.environ.get("FORGE_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
ARTEFACTS = (
    Path(os.environ.get("FORGE_ARTEFACTS", Path(__file__).resolve().parents[2] / "tmp" / "artefacts")) / "browser"
)
CJK_FONT_FILES = ("*wqy*", "*Noto*CJK*", "*SourceHan*", "*DroidSansFallback*", "*uming*", "*ukai*", "*arphic*")
"""Globs for CJK font files fontconfig would otherwise offer (fc-list names the rest, where it is installed)."""
SHOTS: list[Path] = []
"""Every screenshot this session kept, listed at the end of the run."""

if not Path(CHROMIUM).exists() and not os.environ.get("CI"):
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)",
        allow_module_level=True,
    )


def no_cjk_fonts(folder: Path) -> dict[str, str]:
    """The environment for a Chromium whose fontconfig sees the machine's fonts less every CJK one: a fonts.conf of its
    own in ``folder`` (with its own cache), the system's (its folders and aliases) and a rule rejecting them."""
    found = set()
    if shutil.which("fc-list"):
        for lang in ("zh", "ja", "ko"):
            listed = subprocess.run(["fc-list", f":lang={lang}", "file"], capture_output=True, text=True).stdout
            found |= {line.split(":")[0].strip() for line in listed.splitlines() if line.strip()}
    rejected = "".join(f"<glob>{pattern}</glob>" for pattern in [*CJK_FONT_FILES, *sorted(found)])
    folder.mkdir(parents=True, exist_ok=True)
    conf = folder / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>'
        f"<cachedir>{folder / 'cache'}</cachedir>"
        '<include ignore_missing="yes">/etc/fonts/fonts.conf</include><dir>/usr/share/fonts</dir>'
        f"<selectfont><rejectfont>{rejected}</rejectfont></selectfont>"
        "</fontconfig>\n",
        encoding="utf-8",
    )
    return {**os.environ, "FONTCONFIG_FILE": str(conf)}


class Browser:
    """One Chromium profile for a test module; what its pages asked for beyond the machine, and their errors."""

    def __init__(self, context, shots: Path):
        self.context, self.shots = context, shots
        self.blocked: list[str] = []
        self.errors: list[str] = []
        context.route("**/*", self._route)

    def _route(self, route):
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def page(self):
        page = self.context.new_page()
        page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        return page

    def shot(self, page, name: str, **where) -> Path:
        """Keep a screenshot as a test artefact (its path is printed at the end of the run)."""
        path = self.shots / f"{name}.png"
        (where.pop("locator", None) or page).screenshot(path=path, **where)
        SHOTS.append(path)
        return path


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"),
            executable_path=shutil.which(CHROMIUM) or CHROMIUM,
            args=FLAGS,
            headless=True,
            viewport={"width": 1360, "height": 1000},
            locale="zh-CN",
            env=no_cjk_fonts(tmp_path_factory.mktemp("fontconfig")),
        )
        try:
            yield Browser(context, ARTEFACTS)
        finally:
            context.close()


@dataclass(frozen=True)
class Lab:
    """A JupyterLab server over ``root``; put notebooks there and open ``url(name)``."""

    root: Path
    base: str
    token: str

    def url(self, name: str, workspace: str | None = None) -> str:
        """The notebook's URL; a workspace of its own keeps other notebooks' tabs from being restored beside it."""
        where = f"workspaces/{workspace}/tree" if workspace else "tree"
        return f"{self.base}/lab/{where}/{name}?token={self.token}"

    def run_all(self, page, name: str, ready: str, count: int = 1, workspace: str | None = None) -> None:
        """Open a notebook, run all its cells, and wait until ``count`` elements match ``ready`` and the kernel is
        idle again."""
        page.goto(self.url(name, workspace))
        page.get_by_text("| Idle").first.wait_for(timeout=60_000)
        page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()  # fold the file browser away
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        page.locator(ready).nth(count - 1).wait_for(timeout=120_000)
        page.get_by_text("| Idle").first.wait_for(timeout=60_000)
        page.wait_for_timeout(500)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """One JupyterLab for the session, on a free loopback port with a token, with settings and workspaces of its own."""
    root = tmp_path_factory.mktemp("lab")
    quiet_lab()
    # a random start: other Labs on this machine (other test sessions) start from 8888 or 18888
    port, token = free_port(20000 + random.randrange(400) * 100), os.urandom(12).hex()
    home = {
        variable: str(root / f".{variable.lower()}")
        for variable in (  # a Lab of its own: no saved layout
            "JUPYTER_CONFIG_DIR",
            "JUPYTER_DATA_DIR",
            "JUPYTER_RUNTIME_DIR",
            "JUPYTERLAB_WORKSPACES_DIR",
            "JUPYTERLAB_SETTINGS_DIR",
        )
    }
    server = subprocess.Popen(
        lab_command(root, port, token), env={**os.environ, **home}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 60
    while True:
        try:
            opener.open(f"{base}/api/status?token={token}", timeout=2).read()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"JupyterLab did not start on {base} (exit {server.poll()})")
            time.sleep(0.3)
    try:
        yield Lab(root, base, token)
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


def pytest_terminal_summary(terminalreporter):
    for path in SHOTS:
        terminalreporter.write_line(f"screenshot: {path}")
