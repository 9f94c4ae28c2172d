"""Count and time the contact solvers along trajectories (rbdlearn.contact).

1. The campaign of tests/test_contact_trajectories.py at full size: the book's scenes of
   ch2 §6 and random drops of a box (eight corner candidates) and of a small articulated
   body, h from 1 to 10 ms, μ from 0 to 5; every step's solve, and a sample of states
   solved again by every solver, perturbed at round-off (q̇* by 1e-15 to 1e-12; Lemke
   also on M and b). Each solve is judged by the test file's own check (written from the
   model, not from the solver). Printed: solves, warnings, failures and the worst
   residual per solver, and which of Lemke's guards each solve needed.
2. The cost per solve on the states of the book's box drop: Lemke (the LCP alone, and
   ``solve_contacts`` end to end), PGS on the pyramid and on the cone, and Pinocchio's
   ADMM on the same Delassus matrix (the cone; its own C++ solve time).

Run it again under another floating-point environment to see the same counts, e.g.
``OPENBLAS_CORETYPE=Prescott NPY_DISABLE_CPU_FEATURES=X86_V3``. It reports; it never
fails on timings.

    .venv/bin/python benchmarks/bench_contact.py [--seeds 16] [--duration 0.6]
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import test_contact_trajectories as camp                      # noqa: E402
from pinocchio_ncp import pinocchio_ncp                       # noqa: E402
from rbdlearn import contact as ct, lcp, one_blas_thread       # noqa: E402

one_blas_thread()   # time one thread of BLAS, as the book's timing cells do


def guard_counter():
    """Wrap the lemke that ct.solve_contacts calls to count which attempt each accepted
    solve needed."""
    counts = {"first walk": 0, "another covering vector": 0, "regularized": 0}
    lemke = ct.lemke

    def counted(*args, **kwargs):
        sol = lemke(*args, **kwargs)
        key = ("regularized" if sol.regularization else
               "another covering vector" if sol.covering else "first walk")
        counts[key] += 1
        return sol
    ct.lemke, counts["lemke"] = counted, lemke
    return counts


def campaign(seeds, duration):
    print(f"1. campaign: the book's scenes and {2 * seeds} random drops of {duration} s")
    counts = guard_counter()
    t0 = time.perf_counter()
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lcp.ContactWarning)      # counted by the campaign
        try:
            tally, n_states = camp.campaign(
                list(camp.book_scenes()) + list(camp.random_scenes(range(seeds), duration)),
                [camp.stacked(r) for r in (1, 4, 16)], keep_every=10)
        except ct.ContactError as err:                         # a solve that raised
            failures.append(err)
            tally, n_states = {}, 0
        finally:
            ct.lemke = counts.pop("lemke")
    print(f"   {n_states} states replayed, {time.perf_counter() - t0:.0f} s\n")
    head = f"   {'solver':<22} {'solves':>7} {'warned':>7} {'worst unwarned residual':>24}"
    print(head + "\n   " + "-" * (len(head) - 3))
    for name, (solves, warned, worst) in tally.items():
        print(f"   {name:<22} {solves:>7} {warned:>7} {worst:>24.1e}")
    total = sum(t[0] for t in tally.values())
    bad = sum(t[2] > camp.TOL for t in tally.values())
    print(f"   {'all':<22} {total:>7}; solvers with an unwarned residual > {camp.TOL:g}: "
          f"{bad}; solves that raised: {len(failures)}")
    for err in failures:
        print("   raised:", err)
    print("   Lemke's accepted attempts: "
          + ", ".join(f"{k} {v}" for k, v in counts.items() if k != "lemke") + "\n")


def per_call(fn, min_time=0.3):
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min_time:
        fn()
        n += 1
    return (time.perf_counter() - t0) / n


def costs():
    print("2. cost per solve on the book's box drop (4 corners, d = 4: LCPs of 24)")
    scene = next(camp.book_scenes())
    states = [s for s in camp.run_scene(scene, keep_every=1)[2] if len(s.contacts) == 4]
    resting, landing = states[-1], states[0]
    head = (f"   {'state':<10} {'lemke LCP':>10} {'solve_contacts':>15} {'pgs pyramid':>12} "
            f"{'pgs cone':>9} {'pinocchio ADMM':>15}   (ms; ADMM: its own C++ time)")
    print(head)
    for label, s in (("landing", landing), ("resting", resting)):
        K = ct.delassus(s.model, s.q, s.contacts)
        v = ct.contact_velocities(s.model, s.q, s.qd_free, s.contacts)
        M, b, _ = ct.contact_lcp(K, v, s.contacts, s.h)
        t = [per_call(lambda: lcp.lemke(M, b)),
             per_call(lambda: ct.solve_contacts(s.model, s.q, s.qd_free, s.contacts, s.h)),
             per_call(lambda: lcp.pgs(K, v, s.contacts, s.h)),
             per_call(lambda: lcp.pgs(K, v, s.contacts, s.h, friction="cone"))]
        normals = [c.normal for c in s.contacts]
        gaps = np.array([c.gap / s.h for c in s.contacts])
        _, info = pinocchio_ncp(K, v + gaps[:, None] * np.array(normals, float), normals,
                                [c.mu for c in s.contacts], tol=1e-10)
        print(f"   {label:<10} {t[0] * 1e3:>10.2f} {t[1] * 1e3:>15.2f} {t[2] * 1e3:>12.2f} "
              f"{t[3] * 1e3:>9.2f} {info['time_us'] / 1e3:>15.3f}"
              f"{'' if info['converged'] else ' (did not converge)'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=16, help="random drops per body kind")
    ap.add_argument("--duration", type=float, default=0.6, help="seconds per drop")
    args = ap.parse_args()
    campaign(args.seeds, args.duration)
    costs()
