"""Time building the Delassus matrix K = J H⁻¹ Jᵀ of m point contacts three ways, in the
same run, as the number of bodies N (and of contacts) grows:

* ``contact.delassus``: seed 000 §2.8's Θ recursion, one Λ_ab = J_a H⁻¹ J_bᵀ per pair of
  contact bodies, mapped to the points (never forming H);
* ``contact.delassus_dense``: the point Jacobians, H by CRBA and a dense solve;
* ``pinocchio.computeDelassusMatrix`` (C++; it answers in each contact's local frame,
  rotated here for the comparison, outside the timing).

Every result is checked against the dense one before it is timed. This script reports;
it never fails on timings.

    .venv/bin/python benchmarks/bench_delassus.py [--repeat 7] [--min-time 0.2]
"""

import numpy as np
import pinocchio as pin

import rbdlearn as rbd
from _common import arguments, best_time
from rbdlearn import contact as ct
from rbdlearn import interop

SIZES = (8, 16, 32, 64)


def case(n, floating):
    """A random tree of n bodies (revolute and spherical joints), floating or fixed, with
    one ground contact on each of its n/4 deepest bodies."""
    model = rbd.random_tree(n, seed=n, joint_types=("revolute", "spherical"), p_chain=0.7)
    if floating:
        model = rbd.floating_base(model, rbd.random_tree(1, seed=1).I[1])
    rng = np.random.default_rng(n)
    q = rbd.random_q(model, rng)
    deepest = sorted(range(1, model.N + 1), key=lambda i: -len(model.ancestors(i)))
    contacts = [ct.Contact(i, rng.uniform(-0.2, 0.2, 3), mu=0.5)
                for i in deepest[:max(2, n // 4)]]
    return model, q, contacts


def pinocchio_delassus(model, q, contacts):
    """A timed call of pinocchio.computeDelassusMatrix, and its result in world axes."""
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for c in contacts:
        f = pm.frames[pm.getFrameId(model.body_names[c.body], pin.FrameType.BODY)]
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, f.parentJoint,
                                      f.placement * pin.SE3(np.eye(3), np.asarray(c.point)),
                                      pin.LOCAL_WORLD_ALIGNED)
        cms.append(cm)
        cds.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, cms, cds)
    qp = interop.q_to_pin(model, pm, q)

    def call():
        return pin.computeDelassusMatrix(pm, pd, qp, cms, cds, 0.0)

    K_local = call()
    R = np.zeros_like(K_local)
    for k, cm in enumerate(cms):
        R[3 * k:3 * k + 3, 3 * k:3 * k + 3] = (pd.oMi[cm.joint1_id]
                                                * cm.joint1_placement).rotation
    return call, R @ K_local @ R.T


def main(args):
    print(__doc__.split("\n\n")[0] + "\n")
    for floating in (False, True):
        print(f"{'floating' if floating else 'fixed'} base: time per call (µs), and ratios")
        head = (f"{'N':>4} {'nv':>4} {'m':>3} {'Θ':>10} {'dense':>10} {'pinocchio':>10} "
                f"{'Θ/dense':>8} {'Θ/pin':>8}  {'max rel. diff':>13}")
        print(head)
        print("-" * len(head))
        for n in SIZES:
            model, q, contacts = case(n, floating)
            K_dense = ct.delassus_dense(model, q, contacts)
            pin_call, K_pin = pinocchio_delassus(model, q, contacts)
            scale = np.abs(K_dense).max()
            diff = max(np.abs(ct.delassus(model, q, contacts) - K_dense).max(),
                       np.abs(K_pin - K_dense).max()) / scale
            t = [best_time(f, args.repeat, args.min_time) * 1e6
                 for f in (lambda: ct.delassus(model, q, contacts),
                           lambda: ct.delassus_dense(model, q, contacts), pin_call)]
            print(f"{model.N:>4} {model.nv:>4} {len(contacts):>3} {t[0]:>10.0f} "
                  f"{t[1]:>10.0f} {t[2]:>10.1f} {t[0] / t[1]:>7.2f}x {t[0] / t[2]:>7.0f}x"
                  f"  {diff:>13.1e}")
        print()


if __name__ == "__main__":
    main(arguments(__doc__))
