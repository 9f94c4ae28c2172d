"""Pictures of Chapter 4 (constrained motion, §4 "beyond the paper"): the 2-link arm sliding
on the floor with its joint, normal and friction forces."""

import math

import numpy as np
from matplotlib.ticker import MaxNLocator

from .ch1_spatial import ChainDrawing

__all__ = ["draw_floor_arm"]


def draw_floor_arm(ax_arm, ax_z, ax_y, force_scale=0.03, friction_scale=1.0):
    """The arm on the floor (``ax_arm``) with the forces as arrows: ⁰f_i on link i at joint
    i (green), the normal force f_n (red) and the friction f_t (orange, drawn
    ``friction_scale`` times longer) at the hand; the z components of ⁰f_i with f_n
    (``ax_z``) and the y components with f_t (``ax_y``) against time, with a cursor.
    Returns ``show(arm, traj, k, new_run=True)``; with ``new_run=False`` only the arm,
    the arrows and the cursors move. ``show.artists`` lists every artist that moves."""
    ax_arm.axhline(0, color="0.4", lw=1.5)
    ax_arm.axhspan(0, 0.05, color="0.85")
    ax_arm.set(xlim=(-0.15, 1.1), ylim=(-0.8, 0.5), aspect="equal", xticks=[0, 0.5, 1],
               yticks=[-0.5, 0, 0.5])
    drawing = None
    arrows = ax_arm.quiver(np.zeros(4), np.zeros(4), np.zeros(4), np.zeros(4),
                           color=["C2", "C2", "C3", "C1"], angles="xy", scale_units="xy",
                           scale=1, width=0.012, zorder=6)
    label = ax_arm.text(-0.1, 0.4, "", fontsize=9)
    lines = {}
    for ax, c, name, hand in ((ax_z, 2, "z", "f_n"), (ax_y, 1, "y", "f_t")):
        lines[c] = [ax.plot([], [], color=f"C{i}", label=f"f{i + 1}{name}")[0]
                    for i in range(2)] + [ax.plot([], [], "k--", label=hand)[0]]
        lines[c, "cursor"] = ax.axvline(0, color="0.5", lw=0.8)
        ax.yaxis.set_major_locator(MaxNLocator(3))
        ax.legend(fontsize=8.5, ncol=3, loc="upper right", frameon=False)
        ax.set_title(f"{name} components [N]", fontsize=10, loc="left")
    ax_z.tick_params(labelbottom=False)
    ax_y.set_xlabel("t [s]")

    def show(arm, traj, k, new_run=True):
        """Show row k of ``traj``; returns True when an axis range changed."""
        nonlocal drawing
        changed = drawing is None
        if drawing is None:
            drawing = ChainDrawing(ax_arm, arm.model, traj.q[k])
            show.artists += drawing.links + [drawing.joints, drawing.coms]
        if new_run:
            for c, hand in ((2, traj.f_n), (1, traj.f_t[:, 1])):
                for i in range(2):
                    lines[c][i].set_data(traj.t, traj.link_forces[:, i, c])
                lines[c][2].set_data(traj.t, hand)
                ax = lines[c][0].axes
                data = np.concatenate([traj.link_forces[:, :, c].ravel(), hand])
                lo, hi = ax.get_ylim()
                span = max(np.ptp(data), 0.02)
                if changed or data.min() < lo or data.max() > hi or hi - lo > 4 * span:
                    step = 10.0 ** math.floor(math.log10(span))     # new range (slow redraw)
                    ax.set_ylim(math.floor(data.min() / step - 0.5) * step,
                                math.ceil(data.max() / step + 0.5) * step)
                    changed = True
                if ax.get_xlim() != (0, traj.t[-1]):
                    ax.set_xlim(0, traj.t[-1])
                    changed = True
        g = drawing.update(traj.q[k])
        f = traj.link_forces[k]
        hand = g["tips"][-1]
        arrows.set_offsets([g["origins"][1], g["origins"][2], hand, hand])
        arrows.set_UVC(force_scale * np.array([f[0, 1], f[1, 1], 0, friction_scale * traj.f_t[k, 1]]),
                       force_scale * np.array([f[0, 2], f[1, 2], traj.f_n[k], 0]))
        for c in (1, 2):
            lines[c, "cursor"].set_xdata([traj.t[k], traj.t[k]])
        label.set_text(f"t = {traj.t[k]:.2f} s")
        return changed

    # what moves (a widget redraws only these over a stored background)
    show.artists = [arrows, label] + lines[1] + lines[2] + [lines[1, "cursor"], lines[2, "cursor"]]
    return show
