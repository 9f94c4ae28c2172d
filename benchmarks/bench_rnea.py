"""Time rbdlearn.rnea against pinocchio.rnea in the same run, and fit how RNEA grows with
the number of bodies.

Budget (BOOK_GUIDE §9): RNEA on a 30-body chain within 100x of Pinocchio's Python call, and
linear growth with the number of bodies. This script reports; it never fails on timings.

    .venv/bin/python benchmarks/bench_rnea.py [--repeat 7] [--min-time 0.2]
"""

import pinocchio as pin

import rbdlearn as rbd
from _common import FAMILIES, arguments, growth_table, ratio_table

if __name__ == "__main__":
    args = arguments(__doc__)
    ratio_table("RNEA", rbd.rnea, pin.rnea, args)
    growth_table("rbdlearn RNEA growth with the number of bodies N", rbd.rnea, FAMILIES,
                 (16, 32, 64, 128, 256), args)
