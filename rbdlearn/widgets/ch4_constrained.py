"""Explorer of Chapter 4 (§4, beyond the paper): the paper's 2-link arm sliding on the floor,
re-simulated as its torques, friction and start move (:func:`floor_arm_explorer`)."""

import ipywidgets as W
import numpy as np

from ..constrained import contact_state, floor_arm_run
from ..viz import draw_floor_arm
from .core import Picture, explorer_box, grid_values, num, readout, slider, vec

__all__ = ["floor_arm_explorer", "floor_arm_contact", "floor_arm_readout"]


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
