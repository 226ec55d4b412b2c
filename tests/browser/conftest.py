"""Headless Debian Chromium through Playwright, offline: every request not to 127.0.0.1, data: or blob: is aborted.

Skipped, with the reason, where chromium is missing outside CI; CI installs it (.ci/run) and never skips.
Screenshots are kept as test artefacts in tmp/artefacts/browser/ (or $FORGE_ARTEFACTS), listed at the end of the run.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("FORGE_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
ARTEFACTS = Path(os.environ.get("FORGE_ARTEFACTS", Path(__file__).resolve().parents[2] / "tmp" / "artefacts")) / "browser"
SHOTS: list[Path] = []
"""Every screenshot this session kept, listed at the end of the run."""

if not Path(CHROMIUM).exists() and not os.environ.get("CI"):
    pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)",
                allow_module_level=True)


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
            tmp_path_factory.mktemp("chromium-profile"), executable_path=shutil.which(CHROMIUM) or CHROMIUM,
            args=FLAGS, headless=True, viewport={"width": 1360, "height": 1000}, locale="zh-CN")
        try:
            yield Browser(context, ARTEFACTS)
        finally:
            context.close()


def pytest_terminal_summary(terminalreporter):
    for path in SHOTS:
        terminalreporter.write_line(f"screenshot: {path}")
