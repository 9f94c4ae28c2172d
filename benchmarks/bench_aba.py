"""Time rbdlearn.aba against pinocchio.aba in the same run, and fit how ABA grows with the
number of bodies.

Budget (BOOK_GUIDE §9, issue 3): ABA on a 30-body model within 100x of Pinocchio's Python
call, and time ∝ N^k with k in 0.8–1.2 (linear) for 16 … 256 bodies. This script reports;
it never fails on timings.

    .venv/bin/python benchmarks/bench_aba.py [--repeat 7] [--min-time 0.2]
"""

import argparse
import timeit

import numpy as np

import rbdlearn as rbd

TARGET = 100.0          # rbdlearn may be at most this many times slower than Pinocchio
EXPONENT = (0.8, 1.2)   # the fitted k of time ∝ N^k must lie in this range
SIZES = (16, 32, 64, 128, 256)


def best_time(fn, repeat, min_time):
    """Best per-call time in seconds: the loop is sized to run for at least ``min_time``,
    then the best of ``repeat`` such loops is kept."""
    timer = timeit.Timer(fn)
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_time:
            break
        number *= 2 if t <= 0 else max(2, min(10, int(min_time / t) + 1))
    return min(timer.repeat(repeat=repeat, number=number)) / number


def inputs(model, seed=0):
    """A random (q, qd, tau)."""
    rng = np.random.default_rng(seed)
    return rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def compare(models, repeat, min_time):
    import pinocchio as pin
    from rbdlearn import interop

    rows = []
    for label, model in models:
        pm = interop.to_pinocchio(model)
        pd = pm.createData()
        q, qd, tau = inputs(model)
        qp, vp, tp = (interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
                      interop.v_to_pin(model, pm, tau))
        # same inputs, same answer: otherwise the timing compares different work
        qdd = rbd.aba(model, q, qd, tau)
        qdd_pin = interop.v_from_pin(model, pm, pin.aba(pm, pd, qp, vp, tp))
        err = np.abs(qdd - qdd_pin).max() / max(1.0, np.abs(qdd_pin).max())
        t_rbd = best_time(lambda: rbd.aba(model, q, qd, tau), repeat, min_time)
        t_pin = best_time(lambda: pin.aba(pm, pd, qp, vp, tp), repeat, min_time)
        rows.append((label, model.N, model.nv, t_rbd * 1e6, t_pin * 1e6, t_rbd / t_pin, err))
    return rows


def growth_exponent(sizes, times):
    """k of time ∝ N^k: the least-squares slope of log(time) against log(N)."""
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timing repeats (best is kept)")
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="seconds each repeat runs for, at least")
    args = ap.parse_args()

    models = [("planar chain", rbd.planar_chain(30)),
              ("random tree, revolute", rbd.random_tree(30, seed=0, joint_types=("revolute",))),
              ("random tree, all joint types", rbd.random_tree(30, seed=0))]
    print(f"ABA: rbdlearn vs pinocchio (Python call), best of {args.repeat} repeats")
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

    families = {"random revolute tree": lambda n: rbd.random_tree(n, seed=0,
                                                                  joint_types=("revolute",)),
                "planar chain": rbd.planar_chain}
    print("\nrbdlearn ABA growth with the number of bodies N, time ∝ N^k "
          f"(target k in {EXPONENT[0]}–{EXPONENT[1]}, linear)")
    head = f"{'N':>4} " + " ".join(f"{name + ' µs':>24}" for name in families)
    print(head)
    print("-" * len(head))
    times = {name: [] for name in families}
    for n in SIZES:
        for name, make in families.items():
            model = make(n)
            q, qd, tau = inputs(model)
            times[name].append(best_time(lambda: rbd.aba(model, q, qd, tau),
                                         args.repeat, args.min_time) * 1e6)
        print(f"{n:>4} " + " ".join(f"{times[name][-1]:>24.1f}" for name in families))
    print()
    for name in families:
        k = growth_exponent(SIZES, times[name])
        verdict = "PASS" if EXPONENT[0] <= k <= EXPONENT[1] else "FAIL"
        print(f"{name:<22} fitted exponent k = {k:.2f}  "
              f"(target {EXPONENT[0]}–{EXPONENT[1]})  {verdict}")


if __name__ == "__main__":
    main()
