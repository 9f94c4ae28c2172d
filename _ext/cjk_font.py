"""The web font for the book's Japanese text, served from the book itself.

`make book` runs ``python3 _ext/cjk_font.py SRC DEST book``: SRC is the installed
@fontsource/noto-sans-jp package (pinned in package.json), DEST a folder of the build's
static files, and the last arguments the folders whose text the book shows. The package
splits Noto Sans JP (regular, 400) into ~120 slices, each a small woff2 file with the
``unicode-range`` it covers, so that a browser downloads only the slices of the
characters a page uses. Some slices also cover Latin letters and punctuation; here every
slice's range is cut down to the CJK characters of the book's sources (kana, kanji, CJK
punctuation, full-width forms; or to the whole CJK blocks below if no folder is given),
slices left empty are dropped, and the font gets a family name of its own. A stylesheet
puts that family first in the theme's font lists: those characters come from the
bundled font on every machine, and all other text keeps the theme's fonts.
"""

import re
import shutil
import sys
from pathlib import Path

FAMILY = "rbdlearn Noto Sans JP"
CSS_NAME = "noto-sans-jp.css"
# Unicode blocks of Japanese text: CJK symbols and punctuation, hiragana, katakana
# (with its phonetic extensions), CJK unified ideographs (extension A, the main block,
# compatibility ideographs), half- and full-width forms, and the supplementary
# ideographic planes.
CJK = [(0x3000, 0x30FF), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
       (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x2FA1F)]
FACE = re.compile(r"@font-face\s*\{(?P<body>[^}]*)\}")
SOURCE_SUFFIXES = (".md", ".ipynb", ".bib", ".yml")


def characters_in(folders):
    """The CJK code points in the book's source files under ``folders``."""
    points = set()
    for folder in map(Path, folders):
        files = [folder] if folder.is_file() else sorted(folder.rglob("*"))
        for path in files:
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                points.update(ord(c) for c in path.read_text(encoding="utf-8")
                              if any(lo <= ord(c) <= hi for lo, hi in CJK))
    return points


def parse_ranges(text):
    """``U+41-5a,U+3001`` -> [(0x41, 0x5a), (0x3001, 0x3001)]."""
    ranges = []
    for part in text.split(","):
        first, _, last = part.strip().removeprefix("U+").partition("-")
        ranges.append((int(first, 16), int(last or first, 16)))
    return ranges


def cjk_only(ranges, points=None):
    """The parts of ``ranges`` inside the CJK blocks (and, if given, among ``points``),
    merged and sorted."""
    kept = sorted((max(a, lo), min(b, hi)) for a, b in ranges for lo, hi in CJK
                  if max(a, lo) <= min(b, hi))
    if points is not None:
        kept = [(c, c) for c in sorted(points) if any(a <= c <= b for a, b in kept)]
    merged = []
    for a, b in kept:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def format_ranges(ranges):
    return ",".join(f"U+{a:x}" if a == b else f"U+{a:x}-{b:x}" for a, b in ranges)


def build(src, dest, sources=()):
    """Copy the slices of the regular weight that hold CJK characters (those used in the
    files under ``sources``, if given) to ``dest`` and write the stylesheet; return the
    number of slices."""
    src, dest = Path(src), Path(dest)
    points = characters_in(sources) if sources else None
    dest.mkdir(parents=True, exist_ok=True)
    faces = []
    for match in FACE.finditer((src / "400.css").read_text(encoding="utf-8")):
        body = match.group("body")
        woff2 = re.search(r"url\(\./files/([^)]+\.woff2)\)", body).group(1)
        ranges = cjk_only(parse_ranges(re.search(r"unicode-range:\s*([^;]+);",
                                                 body).group(1)), points)
        if not ranges:
            continue
        shutil.copyfile(src / "files" / woff2, dest / woff2)
        faces.append(f"@font-face {{\n  font-family: \"{FAMILY}\";\n  font-style: normal;\n"
                     f"  font-weight: 400;\n  font-display: swap;\n"
                     f"  src: url(\"{woff2}\") format(\"woff2\");\n"
                     f"  unicode-range: {format_ranges(ranges)};\n}}\n")
    family = f'"{FAMILY}"'
    rules = (":root {\n"
             f"  --pst-font-family-base: {family}, var(--pst-font-family-base-system);\n"
             f"  --pst-font-family-heading: {family}, var(--pst-font-family-base-system);\n"
             f"  --pst-font-family-monospace: {family}, "
             f"var(--pst-font-family-monospace-system);\n}}\n")
    header = ("/* Noto Sans JP (SIL Open Font License 1.1), from @fontsource/noto-sans-jp,\n"
              "   cut to its CJK characters by _ext/cjk_font.py: only the slices a page\n"
              "   uses are downloaded, and Latin text keeps the theme's fonts. */\n")
    (dest / CSS_NAME).write_text(header + "\n".join(faces) + "\n" + rules, encoding="utf-8")
    license_file = src / "LICENSE"
    if license_file.is_file():
        shutil.copyfile(license_file, dest / "LICENSE-noto-sans-jp.txt")
    return len(faces)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(f"usage: {sys.argv[0]} FONTSOURCE_PACKAGE DEST_FOLDER [SOURCE_FOLDER...]")
    count = build(sys.argv[1], sys.argv[2], sys.argv[3:])
    print(f"{count} font slices (CJK characters of {' '.join(sys.argv[3:]) or 'all'}) "
          f"in {sys.argv[2]}")
