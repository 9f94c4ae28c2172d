"""An independent reference for contact impulses: Pinocchio's own constraint solvers.

``pinocchio_ncp(K, v_free, normals, mus)`` solves the Coulomb-friction contact problem of
one impulse step with ``pinocchio.ADMMConstraintSolver`` (or ``PGSConstraintSolver``),
everything in world axes; ``coulomb_residuals`` measures, without Pinocchio, how well
impulses P satisfy it.

The problem (the Coulomb NCP, with maximal dissipation): find P (m x 3) with
v⁺ = v_free + K P such that, at each contact k (unit normal n, friction coefficient μ),

    0 ≤ n·P ⊥ n·v⁺ ≥ 0,   |P_t| ≤ μ n·P,   P_t = -μ (n·P) v⁺_t/|v⁺_t| when v⁺_t ≠ 0,

·_t being the part orthogonal to n. Pinocchio's cones have their normal along the local
z axis, so each contact's rows and columns go to a frame (t1, t2, n) and P comes back.

What Pinocchio solves (read in its sources, checked by tests/test_pinocchio_ncp.py):
with ``solve_ncp=True`` the ADMM adds the De Saxcé shift μ|v⁺_t| to the normal velocity
(``CoulombFrictionCone.computeNormalCorrection``): its fixed points are exactly the NCP
above. With ``solve_ncp=False`` it solves the convex CCP (Anitescu) relaxation instead,
whose sliding contacts lift off with n·v⁺ = μ|v⁺_t|. The PGS projects the normal impulse
on n·P ≥ 0, then the tangential one on the disc: its fixed points are the NCP whatever
``solve_ncp`` (which there only changes recorded statistics).

Neither converges always (see the caveats in pinocchio_ncp); both return their last
iterate, so check ``info["converged"]`` and ``info["residual"]``.
"""

import numpy as np
import pinocchio as pin

_SOLVERS = {"admm": (pin.ADMMConstraintSolver, pin.ADMMSolverSettings, pin.ADMMSolverResult),
            "pgs": (pin.PGSConstraintSolver, pin.PGSSolverSettings, pin.PGSSolverResult)}
# Settings tried in turn until Pinocchio reports convergence. On random problems (well-
# and ill-conditioned or rank-deficient K) the spectral rho rule with Anderson
# acceleration converged most often, in the fewest iterations; spectral alone, then
# Pinocchio's defaults (OSQP rule, no Anderson) rescue a few more.
_ATTEMPTS = {"admm": ({"admm_update_rule": pin.ADMMUpdateRule.SPECTRAL, "anderson_capacity": 5},
                      {"admm_update_rule": pin.ADMMUpdateRule.SPECTRAL}, {}),
             "pgs": ({},)}


def contact_frames(normals):
    """m rotations R_k = [t1 t2 n_k] (columns, world axes): local z along the normal."""
    frames = []
    for n in np.asarray(normals, float).reshape(-1, 3):
        n = n / np.linalg.norm(n)
        t1 = np.cross(n, np.eye(3)[np.argmin(abs(n))])      # any axis not along n
        t1 /= np.linalg.norm(t1)
        frames.append(np.column_stack([t1, np.cross(n, t1), n]))
    return frames


def pinocchio_ncp(K, v_free, normals, mus, solver="admm", tol=1e-12, max_iter=20_000,
                  solve_ncp=True):
    """Solve the Coulomb-cone contact problem with Pinocchio's ADMMConstraintSolver
    (or PGSConstraintSolver for solver="pgs"), solve_ncp=True.

    K: the 3m x 3m Delassus matrix in world axes, contact by contact (rows 3k..3k+2 are
    contact k's x, y, z); v_free: 3m (or m x 3) free contact velocities, world axes;
    normals: m unit 3-vectors (world); mus: m friction coefficients ≥ 0 (or one).
    tol: Pinocchio's absolute tolerances on feasibility and complementarity (in the units
    of v_free and P: meant for data of order 1) and, for the PGS only, the relative one
    on the change of P per sweep; max_iter: per attempt (_ATTEMPTS).

    Returns P (m x 3, world axes) and a dict: Pinocchio's converged, iterations,
    primal_feasibility, dual_feasibility, complementarity (its own stopping measures, of
    its last run), the PGS's restarts (see below), the settings used, and residual = max
    of coulomb_residuals (computed here, without Pinocchio) — of the first attempt that
    converged, else of the one with the smallest residual; time_us is Pinocchio's timer
    summed over all runs. Nothing is raised on failure. solve_ncp=False asks for the CCP
    relaxation instead (for comparison only).

    Changes to the plain call, all found necessary by experiment:
    - the ADMM's relative tolerances are 0: its relative tests (|Δx| ≤ tol·|x|, ...) also
      pass on iterates diverging to 1e150, which it then reports as converged;
    - the PGS measures each contact's residual right after updating that contact, before
      the rest of the sweep changes its velocity, so it can stop on a sweep that still
      moved P (with μ = 0 always after the first, P off by 10%): its P is accepted only
      if one more sweep leaves it unchanged (to tol, relative), else it goes on from there
      (up to 100 times; before this check, P collapsing to 0 or diverging to 1e155 were
      also reported converged);
    - a contact with μ > 1 is solved as μ' = 1 with P'_t = P_t/μ, v'_t = μ v_t (the
      columns and rows of its tangential directions scaled by μ), an exact change of
      variables (cone, complementarity and directions are unchanged). The ADMM's De
      Saxcé iteration otherwise diverges even for one sticking contact once μ ≳ 10.

    Measured on 300 random problems per kind (3 to 5 contacts): the ADMM converged on
    all with a well-conditioned or rank-deficient K (μ ≤ 1.5); on 90% with cond(K) = 1e8,
    though 99% had residual < 1e-8; on 2/3 with μ in [1, 1000], where the residual
    (μ-weighted) reaches 3e-7. The PGS converged on 89%, 48%, 70% and 56% of them.
    """
    frames = contact_frames(normals)
    m = len(frames)
    mus = np.broadcast_to(np.asarray(mus, float), (m,))
    T = np.zeros((3 * m, 3 * m))                  # P_world = T P', T = blockdiag(R_k D_k)
    for k, (Rk, mu) in enumerate(zip(frames, mus)):
        T[3 * k:3 * k + 3, 3 * k:3 * k + 3] = Rk * [max(mu, 1), max(mu, 1), 1]
    K_local = T.T @ np.asarray(K, float) @ T
    g_local = T.T @ np.asarray(v_free, float).reshape(3 * m)

    model = pin.Model()                      # an empty model: the constraints only carry cones
    cmodels, cdatas = pin.StdVec_ConstraintModel(), pin.StdVec_ConstraintData()
    for mu in mus:
        point = pin.PointContactConstraintModel(model)
        point.setFriction(min(mu, 1.0))
        cmodels.append(pin.ConstraintModel(point))
        cdatas.append(cmodels[-1].createData())

    Solver, Settings, Result = _SOLVERS[solver]
    time_us = 0.0

    def run(attempt, guess=None, iterations=max_iter):
        nonlocal time_us
        settings = Settings()
        settings.max_iterations = iterations                        # 0: a single sweep
        settings.absolute_feasibility_tol = settings.absolute_complementarity_tol = tol
        settings.relative_feasibility_tol = settings.relative_complementarity_tol = (
            tol if solver == "pgs" else 0.0)                            # see the docstring
        settings.solve_ncp = solve_ncp
        settings.measure_timings = True
        for name, value in attempt.items():
            setattr(settings, name, value)
        engine, result = Solver(3 * m), Result()
        if guess is not None:
            result.setConstraintImpulseGuess(guess)
        # a fresh Delassus operator each time: the ADMM adds its damping to it in place
        engine.solve(pin.DelassusOperatorDense(K_local), g_local, cmodels, cdatas,
                     settings, result)
        time_us += engine.getElapsedTime()
        return result

    best = None
    for attempt in _ATTEMPTS[solver]:
        result, restarts = run(attempt), 0
        while solver == "pgs" and result.converged and restarts < 100:   # see the docstring
            x = result.retrieveConstraintImpulses()
            swept = run(attempt, guess=x, iterations=0).retrieveConstraintImpulses()
            if abs(swept - x).max() <= tol * abs(x).max():
                break
            result, restarts = run(attempt, guess=swept), restarts + 1
        P = (T @ result.retrieveConstraintImpulses()).reshape(m, 3)
        info = {name: getattr(result, name) for name in
                ("converged", "iterations", "primal_feasibility", "dual_feasibility",
                 "complementarity")}
        info |= {"converged": result.converged and restarts < 100, "restarts": restarts,
                 "settings": attempt,
                 "residual": max(coulomb_residuals(K, v_free, normals, mus, P).values())}
        if best is None or info["residual"] < best[1]["residual"]:
            best = P, info
        if info["converged"]:
            break
    return best[0], best[1] | {"time_us": time_us}


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
    with np.errstate(over="ignore", invalid="ignore"):     # P may have diverged
        res = {
            "normal_P": np.maximum(-Pn, 0) / p_scale,
            "normal_v": np.maximum(-vn, 0) / v_scale,
            "complementarity": abs(Pn * vn) / (p_scale * v_scale),
            "disc": np.maximum(np.linalg.norm(Pt, axis=1) - mu * Pn, 0) / p_scale,
            "dissipation": np.linalg.norm(Pt * np.linalg.norm(vt, axis=1)[:, None]
                                          + (mu * Pn)[:, None] * vt, axis=1)
                           / (p_scale * v_scale),
        }
    return {name: float(np.nan_to_num(r.max(), nan=np.inf)) for name, r in res.items()}
