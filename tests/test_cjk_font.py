"""The Japanese text of the book comes from a bundled web font, Noto Sans JP, served by
the book itself (_ext/cjk_font.py, the Makefile, _config.yml's html_css_files).

Without a browser: the font is pinned, the stylesheet applies it to CJK characters only
(Latin text keeps the theme's fonts), and it covers every CJK character the book uses.
In the built book (headless Chromium, markers `book` and `browser`): the glossary's
Japanese is drawn with the bundled font, loaded from the book's own folder, and Latin
text is not.
"""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import cjk_font  # noqa: E402
import pdf as book_pdf  # noqa: E402  (_ext/pdf.py: its Site serves the built book)
from test_browser import CHROMIUM  # noqa: E402  (the browser the book's pages are tested in)

PACKAGE = ROOT / "node_modules" / "@fontsource" / "noto-sans-jp"
CJK_CHAR = re.compile(r"[\u3000-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                      r"\uf900-\ufaff\uff00-\uffef\U00020000-\U0002fa1f]")


def book_cjk_characters():
    """Every CJK character in the book's sources."""
    text = "".join(p.read_text(encoding="utf-8") for pattern in ("*.md", "*.ipynb", "*.bib")
                   for p in (ROOT / "book").rglob(pattern))
    return set(CJK_CHAR.findall(text))


@pytest.fixture(scope="module")
def stylesheet(tmp_path_factory):
    if not (PACKAGE / "400.css").is_file():
        pytest.skip("node_modules/@fontsource/noto-sans-jp is not installed (make offline)")
    dest = tmp_path_factory.mktemp("fonts")
    cjk_font.build(PACKAGE, dest, [ROOT / "book"])     # as the Makefile does
    return dest, (dest / cjk_font.CSS_NAME).read_text(encoding="utf-8")


def test_the_font_is_pinned():
    version = json.loads((ROOT / "package.json").read_text())["dependencies"][
        "@fontsource/noto-sans-jp"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"not an exact version: {version}"


def test_the_book_has_japanese_text():
    # Guards the coverage test below against passing vacuously.
    assert {"日", "本", "語"} <= book_cjk_characters()


@pytest.mark.book          # needs the installed web font (make offline)
def test_only_cjk_characters_use_the_font(stylesheet):
    dest, css = stylesheet
    ranges = [r for block in re.findall(r"unicode-range:\s*([^;]+);", css)
              for r in cjk_font.parse_ranges(block)]
    assert ranges, "no @font-face rule"
    outside = [(a, b) for a, b in ranges
               if not any(lo <= a and b <= hi for lo, hi in cjk_font.CJK)]
    assert not outside, [f"U+{a:x}-{b:x}" for a, b in outside[:5]]
    for name in re.findall(r'url\("([^"]+)"\)', css):
        assert (dest / name).is_file(), name
    assert re.search(rf'--pst-font-family-base:\s*"{cjk_font.FAMILY}",', css)


@pytest.mark.book          # needs the installed web font (make offline)
def test_every_japanese_character_of_the_book_is_covered(stylesheet):
    _, css = stylesheet
    ranges = [r for block in re.findall(r"unicode-range:\s*([^;]+);", css)
              for r in cjk_font.parse_ranges(block)]
    missing = sorted(c for c in book_cjk_characters()
                     if not any(a <= ord(c) <= b for a, b in ranges))
    assert not missing, f"not in the bundled font: {''.join(missing)}"


@pytest.mark.book
@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs {CHROMIUM}")
def test_glossary_japanese_uses_the_bundled_font():
    from book_build import book_html
    from playwright.sync_api import sync_playwright

    html = book_html()
    if not (html / "book" / "appendix" / "glossary.html").is_file():
        pytest.fail(f"no built book in {html}")
    fonts = []
    with book_pdf.Site(html) as site, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                    args=["--no-sandbox"])
        page = browser.new_page()
        page.on("requestfinished", lambda r: r.url.endswith(".woff2")
                and "noto-sans-jp" in r.url and fonts.append(r.url))
        page.goto(site.base + "book/appendix/glossary.html", wait_until="load")
        found = page.evaluate(f"""async () => {{
            await document.fonts.ready;
            const family = '{cjk_font.FAMILY}';
            const width = (text, font) => {{
                const c = document.createElement('canvas').getContext('2d');
                c.font = font; return c.measureText(text).width; }};
            const base = getComputedStyle(document.body).fontFamily;
            return {{
                base: base,
                japanese: document.fonts.check(`16px "${{family}}"`, '日本語'),
                loaded: [...document.fonts].filter(f => f.family.includes(family)
                                                   && f.status === 'loaded').length,
                latin_same: width('Spatial vectors', `16px "${{family}}", serif`)
                            === width('Spatial vectors', '16px serif'),
            }};
        }}""")
        browser.close()
    assert cjk_font.FAMILY in found["base"], found
    assert found["japanese"] and found["loaded"] > 0, found
    assert found["latin_same"], "Latin text would change font"
    assert fonts and all(u.startswith("http://127.0.0.1") for u in fonts), fonts
