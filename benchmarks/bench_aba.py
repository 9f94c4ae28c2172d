"""Time rbdlearn.aba against pinocchio.aba in the same run, and fit how ABA grows with the
number of bodies.

Budget (BOOK_GUIDE §9, issue 3): ABA on a 30-body model within 100x of Pinocchio's Python
call, and time ∝ N^k with k in 0.8–1.2 (linear) for 16 … 256 bodies. This script reports;
it never fails on timings.

    .venv/bin/python benchmarks/bench_aba.py [--repeat 7] [--min-time 0.2]
"""

import pinocchio as pin

import rbdlearn as rbd
from _common import FAMILIES, arguments, growth_table, ratio_table

if __name__ == "__main__":
    args = arguments(__doc__)
    ratio_table("ABA", rbd.aba, pin.aba, args)
    growth_table("rbdlearn ABA growth with the number of bodies N", rbd.aba, FAMILIES,
                 (16, 32, 64, 128, 256), args)
