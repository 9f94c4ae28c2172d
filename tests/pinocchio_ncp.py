"""An independent reference for contact impulses: Pinocchio's own constraint solvers.

``pinocchio_ncp(K, v_free, normals, mus)`` solves the Coulomb-friction contact problem of
one impulse step with ``pinocchio.ADMMConstraintSolver`` (or ``PGSConstraintSolver``),
everything in world axes; ``coulomb_residuals`` measures how well impulses P satisfy it.

The problem (the Coulomb NCP, with maximal dissipation): find P (m x 3) with
v⁺ = v_free + K P such that, at each contact k (unit normal n, friction coefficient μ),

    0 ≤ n·P ⊥ n·v⁺ ≥ 0,   |P_t| ≤ μ n·P,   P_t = -μ (n·P) v⁺_t/|v⁺_t| when v⁺_t ≠ 0,

where ·_t is the part orthogonal to n. Pinocchio's cones have their normal along the
local z axis, so each contact's 3 rows and columns are rotated into a frame (t1, t2, n)
before the solve and P is rotated back.

What Pinocchio solves (read in its sources, checked by tests/test_pinocchio_ncp.py):
with ``solve_ncp=True`` the ADMM adds the De Saxcé shift μ|v⁺_t| to the normal velocity
(``CoulombFrictionCone.computeNormalCorrection``), whose fixed points are exactly the
NCP above; with ``solve_ncp=False`` it solves the convex CCP (Anitescu) relaxation, whose
sliding contacts separate with n·v⁺ = μ|v⁺_t|. The PGS projects the normal impulse onto
n·P ≥ 0, then the tangential one onto the disc: its fixed points are the NCP whatever
``solve_ncp`` (which there only changes the recorded stats).
"""

import numpy as np
import pinocchio as pin

_SOLVERS = {"admm": (pin.ADMMConstraintSolver, pin.ADMMSolverSettings, pin.ADMMSolverResult),
            "pgs": (pin.PGSConstraintSolver, pin.PGSSolverSettings, pin.PGSSolverResult)}


def contact_frames(normals):
    """m rotations R_k = [t1 t2 n_k] (columns, world axes): local z along the normal."""
    frames = []
    for n in np.asarray(normals, float).reshape(-1, 3):
        n = n / np.linalg.norm(n)
        t1 = np.cross(n, np.eye(3)[np.argmin(abs(n))])      # any axis not along n
        t1 /= np.linalg.norm(t1)
        frames.append(np.column_stack([t1, np.cross(n, t1), n]))
    return frames


def pinocchio_ncp(K, v_free, normals, mus, solver="admm", tol=1e-12, max_iter=100_000,
                  solve_ncp=True):
    """Solve the Coulomb-cone contact problem with Pinocchio's ADMMConstraintSolver
    (or PGSConstraintSolver for solver="pgs"), solve_ncp=True.

    K: the 3m x 3m Delassus matrix in world axes, contact by contact (rows 3k..3k+2 are
    contact k's x, y, z); v_free: 3m (or m x 3) free contact velocities, world axes;
    normals: m unit 3-vectors (world); mus: m friction coefficients ≥ 0.
    Returns P (m x 3, world axes) and Pinocchio's convergence info: a dict with
    converged, iterations, primal_feasibility, dual_feasibility, complementarity (as
    Pinocchio measures them, in its own stopping tests) and time_us. Check
    info["converged"] (or coulomb_residuals): nothing is raised when it is False.
    solve_ncp=False asks the ADMM for the CCP relaxation instead (for comparison only).
    """
    frames = contact_frames(normals)
    m = len(frames)
    R = np.zeros((3 * m, 3 * m))
    for k, Rk in enumerate(frames):
        R[3 * k:3 * k + 3, 3 * k:3 * k + 3] = Rk
    K_local = R.T @ np.asarray(K, float) @ R
    g_local = R.T @ np.asarray(v_free, float).reshape(3 * m)

    model = pin.Model()                      # an empty model: the constraints only carry cones
    cmodels, cdatas = pin.StdVec_ConstraintModel(), pin.StdVec_ConstraintData()
    for mu in np.broadcast_to(np.asarray(mus, float), (m,)):
        point = pin.PointContactConstraintModel(model)
        point.setFriction(float(mu))
        cmodels.append(pin.ConstraintModel(point))
        cdatas.append(cmodels[-1].createData())

    Solver, Settings, Result = _SOLVERS[solver]
    settings = Settings()
    settings.max_iterations = max_iter
    settings.absolute_feasibility_tol = settings.relative_feasibility_tol = tol
    settings.absolute_complementarity_tol = settings.relative_complementarity_tol = tol
    settings.solve_ncp = solve_ncp
    settings.measure_timings = True
    solver, result = Solver(3 * m), Result()
    # a fresh Delassus operator each time: the ADMM adds its damping to it in place
    solver.solve(pin.DelassusOperatorDense(K_local), g_local, cmodels, cdatas, settings, result)
    P = (R @ result.retrieveConstraintImpulses()).reshape(m, 3)
    info = {name: getattr(result, name) for name in
            ("converged", "iterations", "primal_feasibility", "dual_feasibility",
             "complementarity")}
    return P, info | {"time_us": solver.getElapsedTime()}


def coulomb_residuals(K, v_free, normals, mus, P):
    """How far P (m x 3, world) is from solving the Coulomb NCP, made dimensionless with
    v_scale = max(|v_free|, |v⁺|) and P_scale = max(|P|, |v_free|/|K|) (max norms, |K| the
    2-norm). Returns the worst contact's: normal_P (-n·P if > 0), normal_v (-n·v⁺ if > 0),
    complementarity |n·P n·v⁺|, disc (|P_t| - μ n·P if > 0) and dissipation
    |P_t |v⁺_t| + μ (n·P) v⁺_t|, zero iff v⁺_t = 0 or P_t = -μ (n·P) v⁺_t/|v⁺_t|.
    """
    K = np.asarray(K, float)
    P = np.asarray(P, float).reshape(-1, 3)
    v_free = np.asarray(v_free, float).reshape(-1, 3)
    v = v_free + (K @ P.reshape(-1)).reshape(-1, 3)
    n = np.asarray(normals, float).reshape(-1, 3)
    n = n / np.linalg.norm(n, axis=1, keepdims=True)
    mu = np.broadcast_to(np.asarray(mus, float), (len(n),))
    Pn, vn = np.sum(P * n, axis=1), np.sum(v * n, axis=1)
    Pt, vt = P - Pn[:, None] * n, v - vn[:, None] * n
    v_scale = max(abs(v_free).max(), abs(v).max(), 1e-300)
    p_scale = max(abs(P).max(), abs(v_free).max() / np.linalg.norm(K, 2), 1e-300)
    res = {
        "normal_P": np.maximum(-Pn, 0) / p_scale,
        "normal_v": np.maximum(-vn, 0) / v_scale,
        "complementarity": abs(Pn * vn) / (p_scale * v_scale),
        "disc": np.maximum(np.linalg.norm(Pt, axis=1) - mu * Pn, 0) / p_scale,
        "dissipation": np.linalg.norm(Pt * np.linalg.norm(vt, axis=1)[:, None]
                                      + (mu * Pn)[:, None] * vt, axis=1) / (p_scale * v_scale),
    }
    return {name: float(r.max()) for name, r in res.items()}
