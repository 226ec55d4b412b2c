"""MkDocs hook: pages the site shows from files that live elsewhere in the repository, so that they stay where
the code and the scripts expect them and are never copied by hand.

- ``design/<note>.md``: each design note of ``design/`` (the notes stay there; the site shows them as they are);
- ``benchmarks/results.md``: ``benchmarks/RESULTS.md``, which the benchmark scripts write.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File


def pages(root: Path) -> dict[str, Path]:
    """Site path -> repository file, for every page this hook adds."""
    found = {f"design/{note.name}": note for note in sorted((root / "design").glob("*.md"))}
    found["benchmarks/results.md"] = root / "benchmarks" / "RESULTS.md"
    return found


def on_files(files, config):
    root = Path(config.config_file_path).resolve().parent
    for uri, path in pages(root).items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
