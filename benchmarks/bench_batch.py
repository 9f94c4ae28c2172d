"""Time rbdlearn's RNEA, ABA and CRBA on the talos_reduced humanoid against Pinocchio in the
same run: single calls, then batches of K states through the same functions (time per
state, against Pinocchio's single calls in a Python loop), the memory a batch of 10⁴ states
needs, and how the time per state of a batch grows with the number of bodies N.

Targets (issue 16): single calls at most 50x Pinocchio's; batched time per state at
K = 10⁴ at most 5x Pinocchio's single call (stretch: 3x). This script reports; it never
fails on timings. The machine's load changes the figures: read them as measured.

    .venv/bin/python benchmarks/bench_batch.py [--repeat 7] [--min-time 0.2] [--quick]
"""

import os
import platform
import sys
import tracemalloc

import numpy as np
import pinocchio as pin

import rbdlearn as rbd
from _common import best_time
from rbdlearn import interop, urdf

SINGLE_TARGET, BATCH_TARGET, BATCH_STRETCH = 50.0, 5.0, 3.0
KS = (10, 1000, 10000)
GROWTH_SIZES, GROWTH_K = (16, 32, 64, 128), 1000


def arguments():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timing repeats (best is kept)")
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="seconds each repeat runs for, at least")
    ap.add_argument("--quick", action="store_true", help="fewer repeats, K up to 10³")
    ap.add_argument("--single", action="store_true",
                    help="single calls only (also runs on an rbdlearn without batches)")
    return ap.parse_args()


def talos():
    path = urdf.example_robot_path("talos_data/robots/talos_reduced.urdf")
    return urdf.load(path, floating_base=True, mimic=False)


def states(model, K, seed=0):
    rng = np.random.default_rng(seed)
    q = np.array([rbd.random_q(model, rng) for _ in range(K)])
    return q, rng.normal(size=(K, model.nv)), rng.normal(size=(K, model.nv))


def algorithms(model, pm, pd):
    """name → (rbdlearn function of (q, qd, x), Pinocchio function of (qp, vp, xp),
    Pinocchio's result in rbdlearn's layout)."""
    v_from = lambda r: interop.v_from_pin(model, pm, r)            # noqa: E731
    return {
        "RNEA": (lambda q, qd, x: rbd.rnea(model, q, qd, x),
                 lambda qp, vp, xp: pin.rnea(pm, pd, qp, vp, xp), v_from),
        "ABA": (lambda q, qd, x: rbd.aba(model, q, qd, x),
                lambda qp, vp, xp: pin.aba(pm, pd, qp, vp, xp), v_from),
        "CRBA": (lambda q, qd, x: rbd.crba(model, q),
                 lambda qp, vp, xp: pin.crba(pm, pd, qp),
                 lambda H: interop.H_from_pin(model, pm, H)),
    }


def to_pin(model, pm, q, qd, x):
    return ([interop.q_to_pin(model, pm, s) for s in q],
            [interop.v_to_pin(model, pm, s) for s in qd],
            [interop.v_to_pin(model, pm, s) for s in x])


def check(ours, theirs, convert, q, qd, x, qp, vp, xp):
    """Largest relative difference between the batched result and Pinocchio's, per state."""
    mine = ours(q, qd, x)
    err = 0.0
    for k in range(len(qp)):
        ref = convert(np.array(theirs(qp[k], vp[k], xp[k])))
        err = max(err, np.abs(mine[k] - ref).max() / max(1.0, np.abs(ref).max()))
    return err


def single_calls(model, pm, algos, args):
    print(f"Single calls on talos_reduced (N = {model.N} bodies, nv = {model.nv}), "
          f"best of {args.repeat} repeats; target: within {SINGLE_TARGET:.0f}x of Pinocchio")
    head = f"{'':<6} {'rbdlearn µs':>12} {'pinocchio µs':>13} {'ratio':>8}  verdict"
    print(head + "\n" + "-" * len(head))
    q, qd, x = (a[0] for a in states(model, 1))
    qp, vp, xp = (a[0] for a in to_pin(model, pm, [q], [qd], [x]))
    for name, (ours, theirs, _) in algos.items():
        t_ours = best_time(lambda: ours(q, qd, x), args.repeat, args.min_time) * 1e6
        t_pin = best_time(lambda: theirs(qp, vp, xp), args.repeat, args.min_time) * 1e6
        r = t_ours / t_pin
        verdict = "PASS" if r <= SINGLE_TARGET else "over target"
        print(f"{name:<6} {t_ours:>12.1f} {t_pin:>13.2f} {r:>7.1f}x  {verdict}")


def batches(model, pm, algos, Ks, args):
    print(f"\nBatches of K states on talos_reduced: rbdlearn's batched call, and Pinocchio's "
          f"single calls in a Python loop, in µs per state;\ntarget: batch at K = 10⁴ within "
          f"{BATCH_TARGET:.0f}x of Pinocchio (stretch {BATCH_STRETCH:.0f}x)")
    head = (f"{'':<6} {'K':>6} {'rbdlearn µs/state':>18} {'pinocchio µs/state':>19} "
            f"{'ratio':>7}  {'rel. diff':>9}")
    print(head + "\n" + "-" * len(head))
    for name, (ours, theirs, convert) in algos.items():
        for K in Ks:
            q, qd, x = states(model, K)
            qp, vp, xp = to_pin(model, pm, q, qd, x)
            err = check(ours, theirs, convert, q[:10], qd[:10], x[:10], qp[:10], vp[:10],
                        xp[:10])
            repeat = args.repeat if K < 10000 else max(2, args.repeat // 3)
            t_ours = best_time(lambda: ours(q, qd, x), repeat, args.min_time) * 1e6 / K

            def loop():
                for k in range(K):
                    theirs(qp[k], vp[k], xp[k])
            t_pin = best_time(loop, repeat, args.min_time) * 1e6 / K
            print(f"{name:<6} {K:>6} {t_ours:>18.2f} {t_pin:>19.2f} {t_ours / t_pin:>6.1f}x  "
                  f"{err:>9.1e}")


def memory(model, K):
    """Peak memory numpy allocates (traced by tracemalloc) for one batched call."""
    print(f"\nPeak memory of one batched call at K = {K} on talos_reduced "
          f"(numpy's allocations, tracemalloc; inputs excluded)")
    q, qd, x = states(model, K)
    for name, f in (("RNEA", lambda: rbd.rnea(model, q, qd, x)),
                    ("ABA", lambda: rbd.aba(model, q, qd, x)),
                    ("CRBA", lambda: rbd.crba(model, q))):
        tracemalloc.start()
        f()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{name:<6} {peak / 2**20:8.0f} MiB  ({peak / K / 1024:.1f} KiB per state)")


def growth(args, K):
    print(f"\nGrowth with the number of bodies N: batched time per state at K = {K}, "
          f"random revolute trees, µs (fitted k of time ∝ N^k)")
    head = f"{'N':>4} {'RNEA':>9} {'ABA':>9} {'CRBA':>9}"
    print(head + "\n" + "-" * len(head))
    times = {"RNEA": [], "ABA": [], "CRBA": []}
    for n in GROWTH_SIZES:
        model = rbd.random_tree(n, seed=0, joint_types=("revolute",))
        q, qd, x = states(model, K)
        for name, f in (("RNEA", lambda: rbd.rnea(model, q, qd, x)),
                        ("ABA", lambda: rbd.aba(model, q, qd, x)),
                        ("CRBA", lambda: rbd.crba(model, q))):
            times[name].append(best_time(f, max(2, args.repeat // 2), args.min_time) * 1e6 / K)
        print(f"{n:>4} " + " ".join(f"{times[k][-1]:>9.2f}" for k in times))
    print("fitted k: " + ", ".join(
        f"{k} {np.polyfit(np.log(GROWTH_SIZES), np.log(t), 1)[0]:.2f}" for k, t in times.items()))


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"machine: {cpu}, {os.cpu_count()} cores visible, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; Python {sys.version.split()[0]}, "
          f"numpy {np.__version__}, pinocchio {pin.__version__}; one BLAS thread\n")


if __name__ == "__main__":
    args = arguments()
    if args.quick:
        args.repeat, args.min_time = 3, 0.05
    machine()
    model = talos()
    pm = interop.to_pinocchio(model)
    algos = algorithms(model, pm, pm.createData())
    single_calls(model, pm, algos, args)
    if args.single:
        sys.exit(0)
    batches(model, pm, algos, KS[:2] if args.quick else KS, args)
    memory(model, 1000 if args.quick else 10000)
    growth(args, 100 if args.quick else GROWTH_K)
