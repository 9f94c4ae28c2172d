"""Shared machinery of the benchmark scripts: timing, the rbdlearn/Pinocchio ratio table
and the growth-exponent fit. Scripts report; they never fail on timings."""

import argparse
import timeit

import numpy as np

import rbdlearn as rbd

rbd.one_blas_thread()   # every script times one thread of BLAS, as the book's timing cells do

TARGET = 100.0          # rbdlearn may be at most this many times slower than Pinocchio
EXPONENT = (0.8, 1.2)   # a "linear" algorithm: the fitted k of time ∝ N^k lies in this range

THIRTY_BODY_MODELS = [
    ("planar chain", lambda: rbd.planar_chain(30)),
    ("random tree, revolute", lambda: rbd.random_tree(30, seed=0, joint_types=("revolute",))),
    ("random tree, all joint types", lambda: rbd.random_tree(30, seed=0)),
]


def arguments(doc):
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timing repeats (best is kept)")
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="seconds each repeat runs for, at least")
    return ap.parse_args()


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
    """A random (q, qd, x), x being qdd or tau."""
    rng = np.random.default_rng(seed)
    return rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def ratio_table(title, ours, theirs, args, from_pin=None):
    """Time ``ours(model, q, qd, x)`` and Pinocchio's ``theirs(pm, pd, qp, vp, xp)`` on the
    30-body models with the same inputs, check they agree, print the ratios.
    Both return a joint-space vector (τ or q̈), unless ``from_pin(model, pm, result)`` is
    given to bring Pinocchio's result (e.g. a matrix) into rbdlearn's layout."""
    print(f"{title}: rbdlearn vs pinocchio (Python call), best of {args.repeat} repeats")
    print(f"target: rbdlearn within {TARGET:.0f}x of pinocchio\n")
    head = (f"{'model':<30} {'N':>3} {'nv':>3} {'rbdlearn µs':>12} {'pinocchio µs':>13} "
            f"{'ratio':>7}  {'rel. diff':>9}  result")
    print(head)
    print("-" * len(head))
    from rbdlearn import interop
    for label, make in THIRTY_BODY_MODELS:
        model = make()
        pm = interop.to_pinocchio(model)
        pd = pm.createData()
        q, qd, x = inputs(model)
        qp, vp, xp = (interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
                      interop.v_to_pin(model, pm, x))
        # same inputs, same answer: otherwise the timing compares different work
        mine = ours(model, q, qd, x)
        ref = (from_pin or interop.v_from_pin)(model, pm, theirs(pm, pd, qp, vp, xp))
        err = np.abs(mine - ref).max() / max(1.0, np.abs(ref).max())
        t_rbd = best_time(lambda: ours(model, q, qd, x), args.repeat, args.min_time) * 1e6
        t_pin = best_time(lambda: theirs(pm, pd, qp, vp, xp), args.repeat, args.min_time) * 1e6
        ratio = t_rbd / t_pin
        verdict = f"PASS (within {TARGET:.0f}x)" if ratio <= TARGET else \
            f"FAIL (over {TARGET:.0f}x)"
        print(f"{label:<30} {model.N:>3} {model.nv:>3} {t_rbd:>12.1f} {t_pin:>13.2f} "
              f"{ratio:>6.1f}x  {err:>9.1e}  {verdict}")


def growth_table(title, ours, families, sizes, args):
    """Time ``ours(model, q, qd, x)`` for each model family at each size; print the times
    and the fitted exponent k of time ∝ N^k (least squares on log-log)."""
    print(f"\n{title}, time ∝ N^k (target k in {EXPONENT[0]}–{EXPONENT[1]}, linear)")
    head = f"{'N':>4} " + " ".join(f"{name + ' µs':>24}" for name in families)
    print(head)
    print("-" * len(head))
    times = {name: [] for name in families}
    for n in sizes:
        for name, make in families.items():
            model = make(n)
            q, qd, x = inputs(model)
            times[name].append(best_time(lambda: ours(model, q, qd, x),
                                         args.repeat, args.min_time) * 1e6)
        print(f"{n:>4} " + " ".join(f"{times[name][-1]:>24.1f}" for name in families))
    print()
    for name in families:
        k = float(np.polyfit(np.log(sizes), np.log(times[name]), 1)[0])
        verdict = "PASS" if EXPONENT[0] <= k <= EXPONENT[1] else "FAIL"
        print(f"{name:<22} fitted exponent k = {k:.2f}  "
              f"(target {EXPONENT[0]}–{EXPONENT[1]})  {verdict}")


FAMILIES = {"random revolute tree": lambda n: rbd.random_tree(n, seed=0,
                                                              joint_types=("revolute",)),
            "planar chain": rbd.planar_chain}
