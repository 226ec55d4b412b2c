"""Make the Chinese font the package ships (forge_kernel/widgets/fonts/forge-cjk.woff2) from a source font.

    python3 scripts/make_cjk_font.py [SOURCE]   # default: WenQuanYi Micro Hei (Debian's fonts-wqy-microhei)

The font holds GB2312 level 1 (the 3,755 common characters), CJK punctuation and full-width forms, and every CJK
character of the bundled packages, verifiers and the kernel's own text: run it again when a package brings a character
the font lacks (tests/widgets/test_fonts.py names it). It takes a few seconds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fontTools.ttLib import TTFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from forge_kernel.widgets._fonts import CJK, FONT, cjk_characters, subset  # noqa: E402

SOURCE = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
TEXTS = ("task_packages/**/*.yaml", "task_packages/**/*.json", "verifiers/**/*.yaml", "forge_kernel/**/*.yaml")
SOURCE_LACKS = "䓬"
"""Characters the packages use that WenQuanYi Micro Hei has no glyph for (U+44EC, of 苯二氮䓬, benzodiazepine: the
packages also write 苯二氮卓): they show in whatever font the reader's machine has."""
PUNCTUATION = [chr(c) for c in range(0x3000, 0x3040)] + [chr(c) for c in range(0xFF01, 0xFF5F)]


def gb2312_level1() -> set[str]:
    """The 3,755 characters of GB2312 level 1: rows 0xB0-0xD7, columns 0xA1-0xFE (row 0xD7 ends at 0xF9)."""
    return {
        bytes([row, col]).decode("gb2312")
        for row in range(0xB0, 0xD8)
        for col in range(0xA1, 0xFF)
        if row < 0xD7 or col <= 0xF9
    }


def bundled_characters(root: Path = ROOT) -> set[str]:
    """Every CJK character of the bundled packages (public and hidden halves, fixtures), the kernel's tables and its
    Python sources (the planners' and the widgets' text)."""
    found: set[str] = set()
    for path in [p for pattern in TEXTS for p in root.glob(pattern)]:
        found |= cjk_characters(path.read_text(encoding="utf-8"))
    for path in root.glob("forge_kernel/**/*.py"):  # as written: an escape in code is a regex's range, not text
        found |= set(CJK.findall(path.read_text(encoding="utf-8")))
    return found


def main(argv: list[str]) -> None:
    source = Path(argv[0]) if argv else SOURCE
    start = time.perf_counter()
    characters = gb2312_level1() | bundled_characters() | set(PUNCTUATION)
    FONT.write_bytes(subset(characters, source))
    lacking = bundled_characters() - {chr(c) for c in TTFont(FONT).getBestCmap()}
    if lacking - set(SOURCE_LACKS):
        print(f"{source.name} has no glyph for {''.join(sorted(lacking))}: add them to SOURCE_LACKS")
    seconds = time.perf_counter() - start
    print(f"{FONT.relative_to(ROOT)}: {len(characters)} characters, {FONT.stat().st_size // 1024} KB, {seconds:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
