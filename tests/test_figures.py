"""Every figure of the built book is numbered, captioned and described.

A figure is an image that a notebook's code cell draws (a matplotlib plot, saved by the
build under _images/). myst-nb wraps it in a <figure> when the cell carries figure
metadata (test_notebooks_clean.py checks the metadata): Sphinx numbers it ("Fig. 12",
numbered through the whole book, as the book's table of contents is not numbered), the
caption follows it, and the <img> gets the cell's alt text. Images that a cell's HTML
output carries inline (data: URIs, or none until a script sets it: the frames of an
animation, the kernel-free views of the explorers) are not figures in this sense and are
not counted.

Marked `book`: reads the HTML of the session's build, or $RBDLEARN_BOOK_HTML.
"""

import re
from html.parser import HTMLParser

import nbformat
import pytest

from test_notebooks_clean import ROOT, toc_entries

VOID = {"img", "br", "hr", "meta", "link", "input", "source", "wbr", "area", "col",
        "embed", "param", "track"}
FIG_NUMBER = re.compile(r"^Fig\. (\d+)\s*$")


class _Figures(HTMLParser):
    """The images of a page's cell outputs, each with the figure around it (if any):
    dicts with src, alt, in_figure, number (the caption's "Fig. N") and caption."""

    def __init__(self):
        super().__init__()
        self.stack, self.figures, self.images = [], [], []

    def classes(self, attrs):
        return (dict(attrs).get("class") or "").split()

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            attrs = dict(attrs)
            in_output = any(t == "div" and "cell_output" in c for t, c in self.stack)
            if in_output:
                image = {"src": attrs.get("src", ""), "alt": attrs.get("alt"),
                         "in_figure": bool(self.figures), "number": "", "caption": ""}
                self.images.append(image)
                if self.figures:
                    self.figures[-1]["images"].append(image)
            return
        if tag in VOID:
            return
        self.stack.append((tag, self.classes(attrs)))
        if tag == "figure":
            self.figures.append({"images": [], "number": "", "caption": ""})

    def handle_endtag(self, tag):
        if tag in VOID or not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            t, _ = self.stack.pop()
            if t == "figure" and self.figures:
                figure = self.figures.pop()
                for image in figure["images"]:
                    image["number"] = figure["number"].strip()
                    image["caption"] = " ".join(figure["caption"].split())
            if t == tag:
                break

    def handle_data(self, data):
        if not self.figures:
            return
        if any(t == "span" and "caption-number" in c for t, c in self.stack):
            self.figures[-1]["number"] += data
        elif any(t == "figcaption" for t, _ in self.stack):
            self.figures[-1]["caption"] += data


def output_images(html):
    """The figures (not data: URIs) among the images of a page's cell outputs."""
    parser = _Figures()
    parser.feed(html)
    return [image for image in parser.images
            if image["src"] and not image["src"].startswith("data:")]


def figure_problems(images, alt_texts):
    """What is wrong with each image: no numbered figure, no caption, an alt text that is
    not one of ``alt_texts`` (the page's notebook's)."""
    problems = []
    for image in images:
        where = image["src"].rsplit("/", 1)[-1]
        if not image["in_figure"]:
            problems.append(f"{where}: not in a <figure>")
        elif not FIG_NUMBER.match(image["number"]):
            problems.append(f"{where}: no figure number ({image['number']!r})")
        elif not image["caption"]:
            problems.append(f"{where}: no caption")
        if image["alt"] not in alt_texts:
            problems.append(f"{where}: alt text {image['alt']!r} is not the cell's")
    return problems


def notebook_alt_texts(entry):
    path = ROOT / f"{entry}.ipynb"
    if not path.is_file():
        return set()
    return {cell.metadata["mystnb"]["image"]["alt"]
            for cell in nbformat.read(path, as_version=4).cells
            if cell.metadata.get("mystnb", {}).get("image", {}).get("alt")}


def test_the_figure_check_finds_what_is_wrong():
    # Guards the book test below: today's output of a cell without figure metadata
    # (alt text = the image's path), a figure without number, and a good figure.
    bare = ('<div class="cell_output docutils container"><img alt="../_build/jupyter_'
            'execute/a_1_0.png" src="../_images/a_1_0.png" /></div>')
    unnumbered = ('<div class="cell_output"><figure><img alt="A plot of y" src="b.png" />'
                  '<figcaption><p><span class="caption-text">y</span></p></figcaption>'
                  '</figure></div>')
    good = ('<div class="cell_output"><figure id="fig-c"><img alt="A plot of y" '
            'src="c.png" /><figcaption><p><span class="caption-number">Fig. 3 </span>'
            '<span class="caption-text">What y does.</span></p></figcaption></figure>'
            '</div><img alt="" src="data:image/png;base64,AAAA" />'
            '<div class="cell_output"><img src="data:image/png;base64,AAAA" /></div>'
            '<div class="cell_output"><img id="_anim_img1" /></div>')
    alts = {"A plot of y"}
    assert len(figure_problems(output_images(bare), alts)) == 2
    assert figure_problems(output_images(unnumbered), alts) == [
        "b.png: no figure number ('')"]
    images = output_images(good)
    assert [(i["number"], i["caption"]) for i in images] == [("Fig. 3", "What y does.")]
    assert figure_problems(images, alts) == []


@pytest.mark.book
def test_every_figure_is_numbered_captioned_and_described():
    from book_build import book_html
    html = book_html()
    numbers, problems, cells = [], [], 0
    for entry in toc_entries():
        page = html / f"{entry}.html"
        images = output_images(page.read_text(encoding="utf-8"))
        alts = notebook_alt_texts(entry)
        cells += len(alts)
        problems += [f"{entry}: {p}" for p in figure_problems(images, alts)]
        numbers += [FIG_NUMBER.match(i["number"]).group(1) for i in images
                    if FIG_NUMBER.match(i["number"])]
        if len(images) != len(alts):
            problems.append(f"{entry}: {len(images)} figures for {len(alts)} described "
                            "cells")
    print(f"{len(numbers)} numbered figures")
    assert len(numbers) >= 60 and not problems, "\n".join(problems)
    assert len(numbers) == cells
    # numbered through the book: each number once
    assert sorted(map(int, numbers)) == list(range(1, len(numbers) + 1)), numbers
