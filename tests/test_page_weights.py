"""The table of page weights in DEVELOPING.md ("What a reader downloads"): how
_ext/page_weights.py makes it from the browser tests' figures, and that the documented one
is what the last measurement gives (_build/page-weights.json, written by
tests/test_browser.py::test_page_weight_within_budget; without it that check is skipped,
and the weight test itself checks each page against the documented ranges)."""

import importlib.util
import json

import pytest

from test_notebooks_clean import ROOT

_spec = importlib.util.spec_from_file_location("page_weights", ROOT / "_ext" / "page_weights.py")
page_weights = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(page_weights)


def entry(page, gz, interactive=False, next_gz=10_000):
    return {"page": page, "interactive": interactive, "gzip": gz, "raw": 3 * gz, "files": 9,
            "next_page": "intro", "next_page_gzip": next_gz, "next_page_files": 1}


def test_the_last_line_of_a_page_counts(tmp_path):
    path = tmp_path / "w.json"
    path.write_text("\n".join(json.dumps(e) for e in [
        entry("a", 2_000_000), entry("b", 900_000), entry("a", 1_000_000)]) + "\n")
    found = page_weights.latest(path)
    assert sorted(found) == ["a", "b"] and found["a"]["gzip"] == 1_000_000


def test_the_table_gives_each_kind_its_range_median_heaviest_page_and_next_page():
    weights = {e["page"]: e for e in [
        entry("t1", 700_000), entry("t2", 1_310_000, next_gz=400_000), entry("t3", 900_000),
        entry("w1", 2_400_000, True, 130_000), entry("w2", 1_200_000, True, 20_000)]}
    text = page_weights.table(weights).splitlines()
    assert len(text) == 4
    assert text[2] == "| text | 3 | 0.70–1.31 | 0.90 | `t2` | 0.01–0.40 | 1.5 |"
    assert text[3] == ("| with an explorer, animation or 3-D view | 2 | 1.20–2.40 | 1.80 | `w1` "
                       "| 0.02–0.13 | 3.0 |")


def test_tables_agree_within_the_tolerance_only():
    row = "| text | 3 | 0.70–1.31 | 0.90 | `t2` | 0.01–0.40 | 1.5 |"
    assert page_weights.same_table(row, row.replace("1.31", "1.35")) is True
    assert "1.31 against 1.37" in page_weights.same_table(row, row.replace("1.31", "1.37"))
    assert page_weights.same_table(row, row.replace("`t2`", "`t3`")) is not True
    assert page_weights.same_table(row, row.replace("| 3 |", "| 4 |")) is not True
    assert page_weights.same_table(row, row + "\n" + row) is not True


def test_writing_replaces_only_the_table(tmp_path):
    doc = tmp_path / "D.md"
    doc.write_text(f"before\n{page_weights.START}\nold\n{page_weights.END}\nafter\n")
    page_weights.write("| new |", doc)
    assert doc.read_text() == (f"before\n{page_weights.START}\n| new |\n"
                               f"{page_weights.END}\nafter\n")
    assert page_weights.documented(doc).strip() == "| new |"


def documented_ranges():
    """{interactive: ((lo, hi) of a first visit, (lo, hi) of the next page)} in bytes,
    from DEVELOPING.md's table."""
    ranges = {}
    for line in page_weights.documented().strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        first, after = ([float(x) * 1e6 for x in cells[k].split("–")] for k in (2, 5))
        interactive = next(i for i, name, _ in page_weights.KINDS if name == cells[0])
        ranges[interactive] = (first, after)
    return ranges


def test_developing_md_gives_the_measured_weights():
    if not page_weights.WEIGHTS.is_file():
        pytest.skip(f"no {page_weights.WEIGHTS} (the browser tests' weight test writes it)")
    measured = page_weights.table(page_weights.latest())
    same = page_weights.same_table(page_weights.documented(), measured)
    assert same is True, (f"DEVELOPING.md's page weights are not the measured ones ({same}):"
                          f" run `python _ext/page_weights.py --write`")
