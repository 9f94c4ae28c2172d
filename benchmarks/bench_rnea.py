"""Time rbdlearn.rnea against pinocchio.rnea in the same run, and show how RNEA grows with
the number of bodies.

Budget (BOOK_GUIDE §9): RNEA on a 30-body model within 100x of Pinocchio's Python call, and
linear growth with the number of bodies. This script reports; it never fails on timings.

    .venv/bin/python benchmarks/bench_rnea.py [--repeat 7] [--min-time 0.2]
"""

import argparse
import timeit

import numpy as np

import rbdlearn as rbd

TARGET = 100.0          # rbdlearn may be at most this many times slower than Pinocchio


def best_time(fn, repeat, min_time):
    """Best per-call time in seconds: timeit's autorange sizes the loop to run for at least
    ``min_time``, then the best of ``repeat`` such loops is kept."""
    timer = timeit.Timer(fn)
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_time:
            break
        number *= 2 if t <= 0 else max(2, min(10, int(min_time / t) + 1))
    return min(timer.repeat(repeat=repeat, number=number)) / number


def inputs(model, seed=0):
    rng = np.random.default_rng(seed)
    return rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def compare(models, repeat, min_time):
    import pinocchio as pin
    from rbdlearn import interop

    rows = []
    for label, model in models:
        pm = interop.to_pinocchio(model)
        pd = pm.createData()
        q, qd, qdd = inputs(model)
        qp, vp, ap = (interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
                      interop.v_to_pin(model, pm, qdd))
        # same inputs, same answer: otherwise the timing compares different work
        tau = rbd.rnea(model, q, qd, qdd)
        tau_pin = interop.v_from_pin(model, pm, pin.rnea(pm, pd, qp, vp, ap))
        err = np.abs(tau - tau_pin).max() / max(1.0, np.abs(tau_pin).max())
        t_rbd = best_time(lambda: rbd.rnea(model, q, qd, qdd), repeat, min_time)
        t_pin = best_time(lambda: pin.rnea(pm, pd, qp, vp, ap), repeat, min_time)
        rows.append((label, model.N, model.nv, t_rbd * 1e6, t_pin * 1e6, t_rbd / t_pin, err))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timing repeats (best is kept)")
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="seconds each repeat runs for, at least")
    args = ap.parse_args()

    models = [("random tree, revolute", rbd.random_tree(30, seed=0, joint_types=("revolute",))),
              ("planar chain", rbd.planar_chain(30)),
              ("random tree, all joint types", rbd.random_tree(30, seed=0))]
    print(f"RNEA: rbdlearn vs pinocchio (Python call), best of {args.repeat} repeats")
    print(f"target: rbdlearn within {TARGET:.0f}x of pinocchio\n")
    head = (f"{'model':<30} {'N':>3} {'nv':>3} {'rbdlearn µs':>12} {'pinocchio µs':>13} "
            f"{'ratio':>7}  {'rel. diff':>9}  result")
    print(head)
    print("-" * len(head))
    try:
        rows = compare(models, args.repeat, args.min_time)
    except ImportError:
        print("pinocchio is not installed: skipping the comparison")
        rows = []
    for label, n, nv, t_rbd, t_pin, ratio, err in rows:
        verdict = f"PASS (within {TARGET:.0f}x)" if ratio <= TARGET else \
            f"FAIL (over {TARGET:.0f}x)"
        print(f"{label:<30} {n:>3} {nv:>3} {t_rbd:>12.1f} {t_pin:>13.2f} {ratio:>6.1f}x  "
              f"{err:>9.1e}  {verdict}")

    print("\nrbdlearn RNEA growth with the number of bodies (random revolute trees)")
    head = f"{'N':>4} {'rbdlearn µs':>12} {'µs per body':>12}"
    print(head)
    print("-" * len(head))
    for n in (10, 20, 40, 80):
        model = rbd.random_tree(n, seed=0, joint_types=("revolute",))
        q, qd, qdd = inputs(model)
        t = best_time(lambda: rbd.rnea(model, q, qd, qdd), args.repeat, args.min_time) * 1e6
        print(f"{n:>4} {t:>12.1f} {t / n:>12.2f}")
    print("\n(linear growth: µs per body roughly constant)")


if __name__ == "__main__":
    main()
