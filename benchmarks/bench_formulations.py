"""Why rbdlearn's single-call RNEA and ABA stay over 50x Pinocchio: the book's functions
against two other ways of writing the same algorithms, timed in the same run.

Issue 16 asks for single calls within 50x of Pinocchio on talos_reduced without slowing
what the book runs (small arms, one state at a time) or the batches (at most 5x Pinocchio
per state). This script writes, for comparison only, the two alternatives that were tried
(they are experiments, not part of the package):

* "bare": the same body-coordinate sweeps as ``rbd.rnea`` / ``rbd.aba``, with every
  helper inlined: ``ndarray.dot`` instead of ``mv``/``mm``, cross products from Python
  floats, no input checks, no batches, no sympy. This is about the fastest the book's
  form can run in numpy, one numpy call per line.
* "base coordinates": every quantity expressed in the base frame, where the sweeps need
  no transforms (⁰v_i = ⁰v_λ + ⁰S_i q̇_i, I^A_λ += I^a, ...). RNEA then has no recursion
  at all besides the forward kinematics: velocities and accelerations are sums over each
  body's path, the joint forces sums over each subtree (one matrix product each).
  ABA keeps its inward and outward sweeps, without the transforms.

Each is checked against ``rbd.rnea`` / ``rbd.aba`` before it is timed. Models: talos_reduced
(floating base, N = 33) and the UR5 arm (N = 6, the size of the book's arms). Batches: K = 10³
states, time per state. This script reports; it never fails on timings.

    .venv/bin/python benchmarks/bench_formulations.py [--repeat 7] [--min-time 0.2]
"""

import numpy as np
import pinocchio as pin

import rbdlearn as rbd
from _common import arguments, best_time
from bench_batch import states, talos, to_pin
from rbdlearn import interop, urdf
from rbdlearn.kinematics import (base_transforms, joint_transforms, motion_subspaces,
                                 stacked_inertias)
from rbdlearn.model import check_state
from rbdlearn.spatial import cross_force, cross_motion, inv_X, mtv, mv

K = 1000


# ------------------------------------------------------------- bare body-coordinate sweeps

def _crm(v, m):
    """v × m from Python floats."""
    w1, w2, w3, v1, v2, v3 = v.tolist()
    a1, a2, a3, b1, b2, b3 = m.tolist()
    return np.array([w2 * a3 - w3 * a2, w3 * a1 - w1 * a3, w1 * a2 - w2 * a1,
                     w2 * b3 - w3 * b2 + v2 * a3 - v3 * a2, w3 * b1 - w1 * b3 + v3 * a1 - v1 * a3,
                     w1 * b2 - w2 * b1 + v1 * a2 - v2 * a1])


def _crf(v, f):
    """v ×* f from Python floats."""
    w1, w2, w3, v1, v2, v3 = v.tolist()
    n1, n2, n3, f1, f2, f3 = f.tolist()
    return np.array([w2 * n3 - w3 * n2 + v2 * f3 - v3 * f2, w3 * n1 - w1 * n3 + v3 * f1 - v1 * f3,
                     w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1,
                     w2 * f3 - w3 * f2, w3 * f1 - w1 * f3, w1 * f2 - w2 * f1])


def _inv(D):
    """D⁻¹; a division for one-DOF joints."""
    return 1.0 / D if D.shape == (1, 1) else np.linalg.inv(D)


def rnea_bare(model, q, qd, qdd):
    N, parent, Xup = model.N, model.parent, joint_transforms(model, q)
    S = [None] + [model.joints[i].S(q[model.q_slices[i]]) for i in range(1, N + 1)]
    v, a, f = [np.zeros(6)] + [None] * N, [-model.gravity] + [None] * N, [None] * (N + 1)
    for i in range(1, N + 1):
        sl, X, I = model.v_slices[i], Xup[i], model.I[i]
        vJ = S[i].dot(qd[sl])
        v[i] = X.dot(v[parent[i]]) + vJ
        a[i] = X.dot(a[parent[i]]) + S[i].dot(qdd[sl]) + _crm(v[i], vJ)
        f[i] = I.dot(a[i]) + _crf(v[i], I.dot(v[i]))
    tau = [None] * (N + 1)
    for i in range(N, 0, -1):
        tau[i] = S[i].T.dot(f[i])
        if parent[i] > 0:
            f[parent[i]] = f[parent[i]] + Xup[i].T.dot(f[i])
    return np.concatenate(tau[1:])


def aba_bare(model, q, qd, tau):
    N, parent, Xup = model.N, model.parent, joint_transforms(model, q)
    S = [None] + [model.joints[i].S(q[model.q_slices[i]]) for i in range(1, N + 1)]
    v, c = [np.zeros(6)] + [None] * N, [None] * (N + 1)
    IA, pA = [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        vJ = S[i].dot(qd[model.v_slices[i]])
        v[i] = Xup[i].dot(v[parent[i]]) + vJ
        c[i] = _crm(v[i], vJ)
        IA[i] = model.I[i].copy()
        pA[i] = _crf(v[i], model.I[i].dot(v[i]))
    U, Dinv, u = [None] * (N + 1), [None] * (N + 1), [None] * (N + 1)
    for i in range(N, 0, -1):
        U[i] = IA[i].dot(S[i])
        Dinv[i] = _inv(S[i].T.dot(U[i]))
        u[i] = tau[model.v_slices[i]] - S[i].T.dot(pA[i])
        p = parent[i]
        if p > 0:
            Ia = IA[i] - U[i].dot(Dinv[i]).dot(U[i].T)
            pa = pA[i] + Ia.dot(c[i]) + U[i].dot(Dinv[i].dot(u[i]))
            IA[p] = IA[p] + Xup[i].T.dot(Ia).dot(Xup[i])
            pA[p] = pA[p] + Xup[i].T.dot(pa)
    a, qdd = [-model.gravity] + [None] * N, [None] * (N + 1)
    for i in range(1, N + 1):
        a_i = Xup[i].dot(a[parent[i]]) + c[i]
        qdd[i] = Dinv[i].dot(u[i] - U[i].T.dot(a_i))
        a[i] = a_i + S[i].dot(qdd[i])
    return np.concatenate(qdd[1:])


# --------------------------------------------------------------------- base coordinates

def _tree_matrices(model):
    """P (nv x N+1): velocity k belongs to body P's column; A (N+1 x N+1): A[i, j] = 1 when
    body j is on body i's path to the base (itself included)."""
    P = np.zeros((model.nv, model.N + 1))
    P[np.arange(model.nv), model.velocity_body] = 1.0
    A = np.eye(model.N + 1)
    for i in range(1, model.N + 1):
        A[i] += A[model.parent[i]]
    A[:, 0] = A[0] = 0.0
    return P, A


def _base_terms(model, q, qd):
    """ⁱX₀, ⁰X_i, S and the joint velocities ⁰S_i q̇_i and body velocities ⁰v_i, stacked
    (N+1, ..., 6), for one state or a batch (constant S only)."""
    P, A = model_tree[id(model)]
    X0 = base_transforms(model, joint_transforms(model, q))
    B = inv_X(X0)
    S = motion_subspaces(model, q)
    vJ0 = mv(B, np.moveaxis((S * qd[..., None, :]) @ P, -1, 0))
    v0 = (A @ vJ0.reshape(model.N + 1, -1)).reshape(vJ0.shape)          # sums over paths
    return X0, B, S, vJ0, v0


def rnea_base(model, q, qd, qdd):
    q, qd, qdd = check_state(model, batch=True, q=q, qd=qd, qdd=qdd)
    P, A = model_tree[id(model)]
    X0, B, S, vJ0, v0 = _base_terms(model, q, qd)
    aJ0 = mv(B, np.moveaxis((S * qdd[..., None, :]) @ P, -1, 0)) + cross_motion(v0, vJ0)
    a0 = (A @ aJ0.reshape(model.N + 1, -1)).reshape(aJ0.shape) - model.gravity
    v, a = mv(X0, v0), mv(X0, a0)                       # body coordinates for I_i
    I = stacked_inertias(model, v.shape[1:-1])
    f0 = mtv(X0, mv(I, a) + cross_force(v, mv(I, v)))
    F0 = (A.T @ f0.reshape(model.N + 1, -1)).reshape(f0.shape)          # sums over subtrees
    body = model.velocity_body
    S0 = mv(B[body], S.T.reshape((model.nv,) + (1,) * (v.ndim - 2) + (6,)))
    return np.moveaxis(np.einsum("k...i,k...i->k...", S0, F0[body]), 0, -1)


def aba_base(model, q, qd, tau):
    N, parent = model.N, model.parent
    X0, B, S, vJ0, v0 = _base_terms(model, q, qd)
    c0 = cross_motion(v0, vJ0)
    I0 = X0.transpose(0, 2, 1) @ stacked_inertias(model, ()) @ X0
    IA = I0.copy()
    pA = cross_force(v0, np.einsum("nij,nj->ni", I0, v0))
    S0 = [None] + [B[i].dot(S[:, model.v_slices[i]]) for i in range(1, N + 1)]
    U, Dinv, u = [None] * (N + 1), [None] * (N + 1), [None] * (N + 1)
    for i in range(N, 0, -1):
        U[i] = IA[i].dot(S0[i])
        Dinv[i] = _inv(S0[i].T.dot(U[i]))
        u[i] = tau[model.v_slices[i]] - S0[i].T.dot(pA[i])
        p = parent[i]
        if p > 0:                                   # no transform: one frame for all
            Ia = IA[i] - U[i].dot(Dinv[i]).dot(U[i].T)
            IA[p] += Ia
            pA[p] += pA[i] + Ia.dot(c0[i]) + U[i].dot(Dinv[i].dot(u[i]))
    a, qdd = np.empty_like(v0), [None] * (N + 1)
    a[0] = -model.gravity
    for i in range(1, N + 1):
        a_i = a[parent[i]] + c0[i]
        qdd[i] = Dinv[i].dot(u[i] - U[i].T.dot(a_i))
        a[i] = a_i + S0[i].dot(qdd[i])
    return np.concatenate(qdd[1:])


model_tree = {}


def main():
    args = arguments(__doc__)
    ur5 = urdf.load(urdf.example_robot_path("ur_description/urdf/ur5_robot.urdf"))
    print(f"{'':<5} {'model':<6} {'formulation':<17} {'one call µs':>11} {'ratio':>7} "
          f"{'batch µs/state':>15} {'ratio':>7}")
    for model, name in ((talos(), "talos"), (ur5, "ur5")):
        model_tree[id(model)] = _tree_matrices(model)
        pm = interop.to_pinocchio(model)
        pd = pm.createData()
        q, qd, x = states(model, K)
        qp, vp, xp = to_pin(model, pm, q[:1], qd[:1], x[:1])
        for algo, book, bare, base, theirs in (
                ("RNEA", rbd.rnea, rnea_bare, rnea_base, pin.rnea),
                ("ABA", rbd.aba, aba_bare, aba_base, pin.aba)):
            t_pin = best_time(lambda: theirs(pm, pd, qp[0], vp[0], xp[0]), args.repeat,
                              args.min_time) * 1e6
            ref = book(model, q[0], qd[0], x[0])
            for label, f, batched in (("book (rbdlearn)", book, True), ("bare", bare, False),
                                      ("base coordinates", base, algo == "RNEA")):
                err = np.abs(f(model, q[0], qd[0], x[0]) - ref).max()
                assert err < 1e-9 * max(1.0, np.abs(ref).max()), (algo, label, err)
                t1 = best_time(lambda: f(model, q[0], qd[0], x[0]), args.repeat,
                               args.min_time) * 1e6
                line = f"{algo:<5} {name:<6} {label:<17} {t1:>11.1f} {t1 / t_pin:>6.1f}x"
                if batched:
                    tb = best_time(lambda: f(model, q, qd, x), args.repeat, args.min_time)
                    line += f" {tb * 1e6 / K:>15.2f} {tb * 1e6 / K / t_pin:>6.1f}x"
                print(line)
            print(f"{algo:<5} {name:<6} {'pinocchio':<17} {t_pin:>11.2f}")


if __name__ == "__main__":
    main()
