"""Explorer of Chapter 4 (§4, beyond the paper): the paper's 2-link arm sliding on the floor,
re-simulated as its torques, friction and start move (:func:`floor_arm_explorer`); the same
arm in 3-D with the floor's normal and friction forces (:func:`floor_arm_scene`, from
:func:`floor_arm_contact` and :func:`floor_arm_readout`). Its bodies are drawn by
:func:`tree_shapes` (``rbdlearn.viz.shapes3d``, with chapter 5's), exported here too."""

import ipywidgets as W
import numpy as np

from ..constrained import contact_state, floor_arm_run
from ..viz import draw_floor_arm
from ..viz import scene3d as s3
from ..viz.shapes3d import box_of_inertia, tree_shapes  # noqa: F401  (exported here too)
from .core import Picture, explorer_box, grid_values, num, readout, slider, vec

__all__ = ["floor_arm_explorer", "floor_arm_contact", "floor_arm_readout", "floor_arm_scene",
           "box_of_inertia", "tree_shapes"]


def floor_arm_explorer(t_end=1.2, dt=0.05):
    """Widget for Chapter 4: the paper's 2-link arm sliding on the floor. Sliders for the
    torques τ₁, τ₂, the friction K and the hand's initial y (the posture follows by
    :func:`floor_arm_posture`) re-run the short simulation (``t_end`` s at ``dt``,
    :func:`floor_arm_run`); the time slider only moves the picture along the run. Only
    the moving artists are redrawn over a stored background (blitting); the axes are
    redrawn when a new run needs other force ranges."""
    pic = Picture((7.6, 3.6))
    grid = pic.fig.add_gridspec(2, 2, width_ratios=[1.05, 1])
    ax_arm = pic.fig.add_subplot(grid[:, 0])
    ax_z, ax_y = pic.fig.add_subplot(grid[0, 1]), pic.fig.add_subplot(grid[1, 1])
    ax_arm.set_title("$^0f_i$ (green), $f_n$ (red), $10\\,f_t$ (orange)", fontsize=10)
    show = draw_floor_arm(ax_arm, ax_z, ax_y, friction_scale=10.0)
    pic.fig.tight_layout()
    c = {"tau1": slider("τ1 [N m]", 0.0, -15, 15), "tau2": slider("τ2 [N m]", -1.225, -5, 5),
         "K": slider("K", 0.01, 0.0, 0.5), "y0": slider("hand y0", 0.966, 0.2, 0.98),
         "t": slider("t [s]", 0.0, 0.0, t_end, step=dt)}
    html = W.HTML()
    state = {"key": None}
    # the last runs, by (τ1, τ2, K, y0): a run comes back without a new simulation (the
    # kernel-free form visits each K once for every t)
    runs = {}
    canvas = pic.fig.canvas

    def blit():
        canvas.restore_region(state["background"])
        for artist in show.artists:
            pic.fig.draw_artist(artist)

    def update():
        key = (c["tau1"].value, c["tau2"].value, c["K"].value, c["y0"].value)
        if key != state["key"]:
            if key not in runs:
                try:
                    runs[key] = floor_arm_run(key[:2], key[2], key[3], t_end, dt)
                except ValueError as err:      # a singular posture, or a run that blew up
                    html.value = readout(err, error=True)
                    return
                if len(runs) > 16:
                    del runs[next(iter(runs))]             # the oldest
            arm, traj = runs[key]
            state.update(key=key, arm=arm, traj=traj, fresh=True)
        arm, traj = state["arm"], state["traj"]
        k = traj.at(c["t"].value)
        if show(arm, traj, k, new_run=state["fresh"]) or "background" not in state:
            for artist in show.artists:           # moving parts: drawn over the background
                artist.set_animated(True)
            canvas.draw()                         # the slow path: axes, ticks, labels
            state["background"] = canvas.copy_from_bbox(pic.fig.bbox)
        state["fresh"] = False
        pic.refresh(blit)
        f = traj.link_forces[k]
        html.value = readout(f"t = {traj.t[k]:.2f} s   q = {vec(traj.q[k])} rad\n"
                      f"hand y = {traj.r[k, 1]:.3f} m, |C| = {abs(traj.C[k]):.1e} m\n"
                      f"f_n = {num(traj.f_n[k], 3)} N   f_t = {num(traj.f_t[k, 1], 3)} N\n"
                      f"⁰f_1 (y, z) = {vec(f[0, 1:], 3)} N\n"
                      f"⁰f_2 (y, z) = {vec(f[1, 1:], 3)} N")

    return explorer_box(pic, c, html, update,
                views={"t": grid_values(0.0, t_end, 0.1), "K": [0.0, 0.01, 0.05, 0.1, 0.3]})


# ------------------------------------------------------------------ the 3-D scene
def floor_arm_contact(arm, traj):
    """The surface's force on the hand along a run of :func:`~rbdlearn.constrained.simulate`,
    as the 3-D scene draws it: a dict of ``r`` (F, 3), the contact point (the hand);
    ``normal`` (F, 3), the normal force n̂ f_n; ``friction`` (F, 3), the friction force
    f_t of the run; ``f_n`` (F,); ``sliding`` (F,), whether the hand slides (the
    solver's sliding direction t̂ is defined: the paper's law gives friction only
    then). Everything is the solver's output except n̂ and t̂, which come from
    :func:`~rbdlearn.constrained.contact_state` at each saved state."""
    states = [contact_state(arm, q, qd) for q, qd in zip(traj.q, traj.qd)]
    n_hat = np.array([c.n_hat for c in states])
    sliding = np.array([bool(np.any(c.t_hat != 0)) for c in states])
    return {"r": np.array(traj.r), "normal": n_hat * traj.f_n[:, None],
            "friction": np.array(traj.f_t), "f_n": np.array(traj.f_n), "sliding": sliding}


def floor_arm_readout(contact, K, t):
    """One line per frame for the scene: t, f_n, |f_t|, K f_n and whether the hand
    slides (the paper's law has no static friction: at rest f_t = 0)."""
    lines = []
    for k, time in enumerate(t):
        f_t = float(np.linalg.norm(contact["friction"][k]))
        state = "sliding: |f_t| = K f_n" if contact["sliding"][k] else \
            "at rest: no friction (no static friction in the law)"
        lines.append(f"t = {time:.2f} s   f_n = {contact['f_n'][k]:.3f} N   "
                     f"|f_t| = {f_t:.4f} N   K·f_n = {K * contact['f_n'][k]:.4f} N   "
                     f"{state}")
    return lines


def floor_arm_scene(tau=(0.0, -1.225), frictions=(0.0, 0.01, 0.05, 0.1, 0.3), y0=0.966,
                    t_end=3.0, dt=0.01, every=3, index=1, force_scale=0.03,
                    friction_scale=0.1):
    """The paper's 2-link arm sliding on the floor, in 3-D (Chapter 4): one run of
    :func:`~rbdlearn.constrained.floor_arm_run` (torques ``tau``, hand at ``y0``, ``t_end``
    s at ``dt``) per friction coefficient K in ``frictions``, a slider over them (the
    run at ``index`` shown first), every ``every``-th saved state a frame. The links are
    capsules from the model's link lengths (:func:`tree_shapes`), the floor z = 0 a thin
    translucent slab above the arm (the arm hangs below it, its hand on the plane), and at
    the hand the normal force n̂ f_n (red, ``force_scale`` m/N) and the friction f_t
    (orange, ``friction_scale`` m/N), both from :func:`floor_arm_contact`. A plot of f_n,
    |f_t| and K f_n, and a readout per frame (:func:`floor_arm_readout`). Returns
    ``(scene, runs)``, ``runs`` a list of ``(arm, trajectory, contact)``, one per K."""
    runs = []
    for K in frictions:
        arm, traj = floor_arm_run(tau, K, y0, t_end, dt)
        runs.append((arm, traj, floor_arm_contact(arm, traj)))
    rows = slice(None, None, every)
    arm, traj, _ = runs[0]
    t = traj.t[rows]
    F = len(t)
    scene = s3.Scene("The paper's arm sliding on the floor", scrub=("t (s)", t),
                     camera={"position": [1.25, 1.5, 0.45], "target": [0.0, 0.45, -0.15]})
    scene.set_param("friction K", list(frictions), index=index)
    shapes = tree_shapes(arm.model, tips={arm.body: arm.point}, joints=True)
    scene.add_model(arm.model, [tr.q[rows] for _, tr, _ in runs], shapes, name="2-link arm",
                    source=None)

    def still(p):                           # the same pose in every frame of every run
        return [np.tile(np.r_[p, 1.0, 0.0, 0.0, 0.0], (F, 1))] * len(runs)

    scene.add_marker("floor z = 0", [s3.shape("box", size=(0.5, 1.6, 0.02), color="#b9b2a3",
                                              opacity=0.45)], still([0.0, 0.55, 0.01]))
    scene.add_marker("base", [s3.shape("box", size=(0.12, 0.08, 0.04), color="#555555")],
                     still([0.0, 0.0, 0.02]))
    for name, key, scale, colour in (
            ("normal force n̂ f_n", "normal", force_scale, "#d62728"),
            ("friction force f_t", "friction", friction_scale, "#ff7f0e")):
        drawn = [s3.arrow_poses(c["r"][rows], c[key][rows], scale) for _, _, c in runs]
        scene.add_marker(name, [s3.shape("arrow", radius=0.008, color=colour)],
                         [p for p, _ in drawn], [s for _, s in drawn])
    scene.add_marker("contact point", [s3.shape("sphere", radius=0.015, color="#222222")],
                     [np.column_stack([c["r"][rows], np.tile([1.0, 0, 0, 0], (F, 1))])
                      for _, _, c in runs])
    scene.add_plot("normal force (N)", {"f_n": [c["f_n"][rows] for _, _, c in runs]})
    scene.add_plot("friction (N)",
                   {"|f_t|": [np.linalg.norm(c["friction"][rows], axis=1) for _, _, c in runs],
                    "K·f_n": [K * c["f_n"][rows] for K, (_, _, c) in zip(frictions, runs)]})
    scene.set_readout([floor_arm_readout(c, K, tr.t)[rows]
                       for K, (_, tr, c) in zip(frictions, runs)])
    return scene, runs
