"""What a reader downloads: the table of DEVELOPING.md ("What a reader downloads"), made
from the figures tests/test_browser.py measures (_build/page-weights.json, one line per
page and run: the last line of each page counts).

    python _ext/page_weights.py            # print the table
    python _ext/page_weights.py --write    # and put it into DEVELOPING.md, between
                                           # the two markers below

tests/test_page_weights.py checks that the table in DEVELOPING.md is the one the current
figures give (within TOLERANCE_MB: a page's weight moves by a few kB from run to run).
"""

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "_build" / "page-weights.json"
DOC = ROOT / "DEVELOPING.md"
START, END = "<!-- page-weights: made by _ext/page_weights.py -->", "<!-- /page-weights -->"
TOLERANCE_MB = 0.05
# (interactive, name, budget in MB: the book guide's, which the weight test applies)
KINDS = [(False, "text", 1.5), (True, "with an explorer, animation or 3-D view", 3.0)]


def latest(path=WEIGHTS):
    """{page: its last measurement} from the JSON lines at ``path``."""
    found = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            found[entry["page"]] = entry
    if not found:
        sys.exit(f"{path}: no measurements (run the browser tests' weight test)")
    return found


def _mb(x):
    return f"{x / 1e6:.2f}"


def table(weights):
    """The Markdown table: per kind of page, the number of pages, the first visit
    (smallest–largest, median) and the next page, in MB, gzip-compressed; and the
    heaviest page of each kind."""
    lines = ["| pages | count | first visit, MB | median | heaviest page | next page, MB "
             "| budget, MB |",
             "|:---|---:|---:|---:|:---|---:|---:|"]
    for interactive, name, budget in KINDS:
        pages = [w for w in weights.values() if w["interactive"] == interactive]
        if not pages:
            continue
        first = [w["gzip"] for w in pages]
        after = [w["next_page_gzip"] for w in pages]
        heaviest = max(pages, key=lambda w: w["gzip"])
        lines.append(f"| {name} | {len(pages)} | {_mb(min(first))}–{_mb(max(first))} "
                     f"| {_mb(statistics.median(first))} | `{heaviest['page']}` "
                     f"| {_mb(min(after))}–{_mb(max(after))} | {budget:.1f} |")
    return "\n".join(lines)


NUMBER = re.compile(r"\d+\.\d\d")


def same_table(documented, measured, tolerance=TOLERANCE_MB):
    """Whether two tables say the same, each figure within ``tolerance`` MB (the page
    names, counts and budgets exactly); or the first difference, as text."""
    a, b = documented.strip().splitlines(), measured.strip().splitlines()
    if len(a) != len(b):
        return f"{len(a)} lines documented, {len(b)} measured"
    for la, lb in zip(a, b):
        if NUMBER.sub("#", la) != NUMBER.sub("#", lb):
            return f"documented {la!r}, measured {lb!r}"
        for x, y in zip(NUMBER.findall(la), NUMBER.findall(lb)):
            if "." in x and abs(float(x) - float(y)) > tolerance + 1e-9:
                return f"documented {la!r}, measured {lb!r}: {x} against {y}"
    return True


def documented(doc=DOC):
    """The table between the markers of ``doc``."""
    text = Path(doc).read_text(encoding="utf-8")
    if START not in text or END not in text:
        sys.exit(f"{doc}: no {START} … {END}")
    return text.split(START, 1)[1].split(END, 1)[0]


def write(new, doc=DOC):
    text = Path(doc).read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    Path(doc).write_text(f"{head}{START}\n{new}\n{END}{rest.split(END, 1)[1]}",
                         encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"into {DOC.name}")
    args = parser.parse_args()
    made = table(latest())
    print(made)
    if args.write:
        write(made)
