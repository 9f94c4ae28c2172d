"""rbdlearn.viz.table: the numeric tables of the book's pages."""

from rbdlearn.viz import table


def test_table_formats_numbers_per_column_and_aligns_them():
    md = table([("body", ""), ("$f_y$ [N]", "+.3f"), ("error", ".1e")],
               [("link 1", -1e-9, 6.2e-15), ("a|b", 2.5, 1e-3)], caption="Forces").data
    lines = md.split("\n")
    assert lines[0] == "Forces" and lines[1] == ""
    assert lines[2] == "| body | $f_y$ [N] | error |"
    assert lines[3] == "|:---|---:|---:|"                 # text left, numbers right
    assert lines[4] == "| link 1 | 0.000 | 6.2e-15 |"     # rounds to zero: no sign
    assert lines[5] == "| a\\|b | +2.500 | 1.0e-03 |"      # a | in text is escaped


def test_table_without_caption_starts_with_the_header():
    assert table([("n", "d")], [(3,)]).data == "| n |\n|---:|\n| 3 |"
