"""Time rbdlearn.crba against pinocchio.crba in the same run, compare the four ways of
computing H in rbdlearn, and time them as the number of bodies grows.

Budget (BOOK_GUIDE §9, issue 4): CRBA on a 30-body model within 100x of Pinocchio's Python
call; the unit-vector method at least 2x slower than CRBA on a 30-link chain (the source
reports about 2x for RoKi's unit-vector and Jacobian methods). This script reports; it
never fails on timings.

    .venv/bin/python benchmarks/bench_crba.py [--repeat 7] [--min-time 0.2]
"""

import numpy as np
import pinocchio as pin

import rbdlearn as rbd
from _common import arguments, best_time, inputs, ratio_table
from rbdlearn import crb, interop

METHODS = {"crba": crb.crba, "crba_3vector": crb.crba_3vector,
           "unit_vector_method": crb.unit_vector_method,
           "jacobian_method": crb.jacobian_method}
SIZES = (16, 32, 64, 128)
SHAPES = {"chain": rbd.planar_chain,
          "branched tree": lambda n: rbd.random_tree(n, seed=0, joint_types=("revolute",),
                                                     p_chain=0.3)}


def method_ratios(n, args):
    """Each method's time on an n-link chain, and its ratio to crba's."""
    model = rbd.planar_chain(n)
    q = inputs(model)[0]
    H = crb.crba(model, q)
    print(f"\nThe four methods on a {n}-link chain (target: unit-vector / crba >= 2)")
    head = f"{'method':<20} {'µs':>10} {'/ crba':>8}  {'max |H − H_crba|':>17}  flops"
    print(head)
    print("-" * len(head))
    counts = crb.operation_counts(model)
    t_crba = None
    for name, f in METHODS.items():
        err = np.abs(f(model, q) - H).max()
        t = best_time(lambda: f(model, q), args.repeat, args.min_time) * 1e6
        t_crba = t_crba or t
        verdict = ("  PASS" if t / t_crba >= 2 else "  FAIL") if name == "unit_vector_method" \
            else ""
        print(f"{name:<20} {t:>10.1f} {t / t_crba:>7.1f}x  {err:>17.1e}  "
              f"{counts.get(name, '—'):>9}{verdict}")


def growth(args):
    """Time every method for chains and branched trees of SIZES bodies; fit time ∝ N^k."""
    for shape, make in SHAPES.items():
        print(f"\nTime (µs) vs N, {shape}; last column: fitted k of time ∝ N^k")
        head = f"{'method':<20} " + " ".join(f"{'N=' + str(n):>10}" for n in SIZES) + \
            f" {'k':>6}"
        print(head)
        print("-" * len(head))
        models = {n: make(n) for n in SIZES}
        qs = {n: inputs(models[n])[0] for n in SIZES}
        for name, f in METHODS.items():
            ts = [best_time(lambda: f(models[n], qs[n]), args.repeat, args.min_time) * 1e6
                  for n in SIZES]
            k = float(np.polyfit(np.log(SIZES), np.log(ts), 1)[0])
            print(f"{name:<20} " + " ".join(f"{t:>10.0f}" for t in ts) + f" {k:>6.2f}")
        print(f"{'crba flops':<20} " + " ".join(
            f"{crb.operation_counts(models[n])['crba']:>10}" for n in SIZES))


if __name__ == "__main__":
    args = arguments(__doc__)
    ratio_table("CRBA", lambda model, q, qd, x: crb.crba(model, q),
                lambda pm, pd, qp, vp, xp: pin.crba(pm, pd, qp), args,
                from_pin=interop.H_from_pin)
    method_ratios(30, args)
    growth(args)
