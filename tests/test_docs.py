"""The documentation: the MkDocs site builds with --strict (a dead link fails it), its CLI reference names every
command and option of the ``forge`` click group, and no page loads anything from the network; the README stays
short and its relative links lead to files that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import click
import pytest

from forge_kernel.cli import main

ROOT = Path(__file__).resolve().parents[1]
README_LINES = 150
LINKED = ["README.md", "benchmarks/README.md"]
"""Markdown files read on their own (not through the site): every relative link in them must lead to a file."""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built from this tree with ``mkdocs build --strict`` into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def commands(group: click.Group) -> list[tuple[str, click.Command, click.Context]]:
    """Every command and subcommand of the group, with its full path (``forge mcp serve``) and a context."""
    found = []

    def walk(command: click.Command, ctx: click.Context) -> None:
        found.append((ctx.command_path, command, ctx))
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if not sub.hidden:
                    walk(sub, click.Context(sub, info_name=name, parent=ctx))

    walk(group, click.Context(group, info_name="forge"))
    return found


def test_site_builds_strict(site):
    for page in [
        "index.html",
        "getting-started/index.html",
        "agents/index.html",
        "task-packages/index.html",
        "grading/index.html",
        "trust-model/index.html",
        "releases/index.html",
        "workbench/index.html",
        "run-store/index.html",
        "cli/index.html",
        "benchmarks/index.html",
        "benchmarks/history/index.html",
        "benchmarks/results/index.html",
        "design/architecture/index.html",
    ]:
        assert (site / page).is_file(), page


def test_cli_reference_names_every_command_and_option(site):
    page = (site / "cli" / "index.html").read_text(encoding="utf-8")
    sections = re.split(r'(?=<h[2-6] id="forge[^"]*")', page)
    by_id = {re.match(r'<h[2-6] id="([^"]+)"', s).group(1): s for s in sections if s.startswith("<h")}
    listed = commands(main)
    assert len(listed) > 15, "the forge group lost its commands?"
    for path, command, ctx in listed:
        anchor = path.replace(" ", "-")
        assert anchor in by_id, f"{path}: no section in the CLI reference"
        section = by_id[anchor]
        assert f"<code>{path}</code>" in section, path
        first = (command.help or "").split("\n")[0].split("(")[0].strip()[:30]
        assert first in section.replace("\n", " "), f"{path}: its help is not in the reference"
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and not param.hidden:
                flag = max(param.opts, key=len)
                assert flag in section, f"{path}: option {flag} is not in the reference"


class Loads(HTMLParser):
    """What a page makes the browser fetch: scripts, style sheets, fonts, icons, images, frames, media."""

    FETCHING: ClassVar[dict[str, list[str]]] = {
        "script": ["src"],
        "link": ["href"],
        "img": ["src", "srcset"],
        "iframe": ["src"],
        "frame": ["src"],
        "source": ["src", "srcset"],
        "video": ["src", "poster"],
        "audio": ["src"],
        "embed": ["src"],
        "object": ["data"],
        "track": ["src"],
        "input": ["src"],
    }

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.styles: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and name in self.FETCHING.get(tag, []):
                self.urls.append(value)
            if name == "style" and value:
                self.styles.append(value)
        self.in_style = tag == "style"

    def handle_endtag(self, tag):
        self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.styles.append(data)


REMOTE = re.compile(r"^\s*(https?:)?//", re.I)
CSS_REMOTE = re.compile(r"""(url\(\s*['"]?\s*(https?:)?//|@import\s+['"]?\s*(https?:)?//)""", re.I)


def test_site_loads_nothing_from_the_network(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        parser = Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        remote = [u for u in parser.urls if any(REMOTE.match(part) for part in u.split(","))]
        assert not remote, f"{page.relative_to(site)} loads from the network: {remote}"
        assert not [s for s in parser.styles if CSS_REMOTE.search(s)], f"{page.relative_to(site)}: remote CSS"
    for sheet in site.rglob("*.css"):
        found = CSS_REMOTE.search(sheet.read_text(encoding="utf-8", errors="replace"))
        assert not found, f"{sheet.relative_to(site)} loads {found.group(0)!r} from the network"


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines; the manual belongs in docs/"


def relative_links(markdown: str) -> list[str]:
    """The targets of the Markdown and HTML links and images in the text, fenced code and code spans left out,
    that are not URLs or anchors of the page itself."""
    text = re.sub(r"^(```|~~~).*?^\1", "", markdown, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)
    targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", text, flags=re.M)
    targets += re.findall(r"""(?:href|src)\s*=\s*["']([^"']+)["']""", text)
    return [t for t in targets if not re.match(r"^([a-z][a-z0-9+.-]*:|#)", t, re.I)]


@pytest.mark.parametrize("name", LINKED)
def test_relative_links_lead_to_files(name):
    source = ROOT / name
    links = relative_links(source.read_text(encoding="utf-8"))
    if name == "README.md":
        assert links, "README.md links to nothing?"
    dead = [t for t in links if not (source.parent / t.split("#")[0]).exists()]
    assert not dead, f"{name}: links to files that do not exist: {dead}"


def test_relative_links_finds_what_it_should():
    """The link reader itself: it sees inline, reference and HTML links, and passes over URLs, anchors and code."""
    text = (
        '[a](docs/a.md) [b](docs/b.md#x "title") ![c](img/c.png)\n[d]: docs/d.md\n'
        '[e](https://example.org) [f](#top) `[g](g.md)` <a href="h.md">h</a>\n```\n[i](i.md)\n```\n'
    )
    assert sorted(relative_links(text)) == ["docs/a.md", "docs/b.md#x", "docs/d.md", "h.md", "img/c.png"]
