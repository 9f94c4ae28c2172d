"""Pictures of Chapter 2 (the ABA): frames propagated along a tree (§1), seed 000's socket
and plug (§2, Fig. 2), 6x6 inertias as heat maps (§2–3), the ball joint's swing and twist
(§4) and a contact impulse at an arm's tip (§5)."""

import math

import numpy as np

from .. import body_pose, contact_impulse, forward_kinematics, planar_chain
from ..articulated import local_C, local_X
from ..joints import swing_twist
from ..model import body_index
from ..spatial import cross3, inertia_params, rotx
from .ch1_spatial import ChainDrawing, draw_frame_2d

__all__ = ["socket_plug_frames", "draw_socket_plug", "draw_propagation", "draw_heatmap",
           "CONTACT_ARM", "CONTACT_TIP", "draw_contact", "draw_ball_joint"]

# ------------------------------------------------------------- socket and plug (§2)


def draw_socket_plug(ax, frames, size=0.15, fontsize=11):
    """Seed 000's Fig. 2 on a 3-D axes: the frames of :func:`socket_plug_frames` (axes
    x, y, z in red, green, blue; labelled p, j, j′, c) and the offsets r_pj (p → j),
    r_jj′ (j → j′) and r_cj′ (c → j′) as black arrows, each labelled with its symbol.
    Returns what was drawn: ``{"origins": {name: o}, "offsets": {name: (start, end)}}``
    in base coordinates."""
    names = {"p": "$p$", "j": "$j$", "j'": "$j'$", "c": "$c$"}
    origins = {}
    for name, (R, o) in frames.items():
        for k, color in enumerate(("C3", "C2", "C0")):
            ax.quiver(*o, *(size * R[:, k]), color=color, lw=1.6, arrow_length_ratio=0.25)
        ax.text(*(o - 0.35 * size * (R[:, 0] + R[:, 1])), names[name], fontsize=fontsize,
                ha="center", va="center")
        origins[name] = o
    offsets = {"$\\mathbf{r}_{pj}$": ("p", "j"), "$\\mathbf{r}_{jj'}$": ("j", "j'"),
               "$\\mathbf{r}_{cj'}$": ("c", "j'")}
    drawn = {}
    for label, (a, b) in offsets.items():
        start, end = origins[a], origins[b]
        ax.quiver(*start, *(end - start), color="k", lw=1.0, arrow_length_ratio=0.12)
        ax.text(*(0.5 * (start + end)), label, fontsize=fontsize, color="0.15")
        drawn[label] = (start, end)
    pts = np.array(list(origins.values()))
    centre, half = pts.mean(axis=0), (np.ptp(pts, axis=0).max() / 2 + size)
    ax.set(xlim=centre[0] + [-half, half], ylim=centre[1] + [-half, half],
           zlim=centre[2] + [-half, half], xlabel="x", ylabel="y", zlabel="z")
    ax.set_box_aspect((1, 1, 1))                      # equal scales: angles look right
    return {"origins": origins, "offsets": drawn}

# ------------------------------------------------------------ propagation (§1), Î and Ẑ (§2)


def draw_propagation(ax, arrow_scale=0.25):
    """Frames a and b in the y–z plane (rotations about x), for seed 000 §1.

    Frame a sits at the origin with angle ``θ_a`` and spins with ω_a; frame b is at
    ``r_ab`` in a's axes and moves with ``v_ab`` and spins with ω_ab relative to a.
    Returns ``update(θ_a, ω_a, r_ab, v_ab, ω_ab)`` (2-vectors: y, z components) that
    redraws the frames, the relative velocity and the two parts of C_ab (centripetal
    −|ω_a|² r_ab, Coriolis 2 ω_a × v_ab), and returns a dict with ``V_b``, ``C_ab``
    and ``A_b`` (eqs. 4, 9, at A_a = 0 and A_ab = 0; [linear; angular], b's axes).
    """
    frame_a = draw_frame_2d(ax, (0, 0), 0, "a")
    frame_b = draw_frame_2d(ax, (1, 0), 0, "b", color="C0")
    names = [("relative velocity $v_{ab}$", "C1"), ("centripetal $-|\\omega_a|^2 r_{ab}$", "C3"),
             ("Coriolis $2\\omega_a\\times v_{ab}$", "C2"), ("$C_{ab}$ (linear part)", "k")]
    arrows = [ax.quiver([0], [0], [0], [0], color=col, angles="xy", scale_units="xy", scale=1,
                        width=0.01, zorder=5, label=label) for label, col in names]
    path = ax.plot([], [], ":", color="C0", lw=1)[0]
    ax.legend(loc="lower left", fontsize=8.5)

    def update(theta_a, w_a, r_ab, v_ab, w_ab):
        R_a = rotx(theta_a)
        wa, wab = np.array([w_a, 0.0, 0.0]), np.array([w_ab, 0.0, 0.0])
        r, v = np.array([0.0, *r_ab]), np.array([0.0, *v_ab])
        C = local_C(wa, r, v, wab)                                             # (9)
        V_b = local_X(np.eye(3), r) @ np.r_[0, 0, 0, wa] + local_X(np.eye(3), None) @ np.r_[v, wab]  # (4)
        A_b = local_X(np.eye(3), None) @ C
        origin = (R_a @ r)[1:]
        frame_a((0, 0), theta_a)
        frame_b(origin, theta_a)          # b drawn at the instant its axes are a's (R_ab = 1)
        parts = [v, (wa @ r) * wa - (wa @ wa) * r, 2 * cross3(wa, v), C[:3]]
        for arrow, vec in zip(arrows, parts):
            arrow.set_offsets([origin])
            world = arrow_scale * (R_a @ vec)
            arrow.set_UVC([world[1]], [world[2]])
        ang = np.linspace(0, 2 * np.pi, 60)
        rad = math.hypot(*origin)
        path.set_data(rad * np.cos(ang), rad * np.sin(ang))
        return {"V_b": V_b, "C_ab": C, "A_b": A_b}

    return update

_LIN_ANG = ["$f_x$", "$f_y$", "$f_z$", "$n_x$", "$n_y$", "$n_z$"]


def draw_heatmap(ax, M, title="", vmax=None, labels=_LIN_ANG):
    """A 6x6 matrix as a heat map (diverging colours, 0 white); returns ``update(M)``."""
    M = np.asarray(M, dtype=float)
    vmax = vmax or max(1e-9, np.abs(M).max())
    im = ax.imshow(M, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    ax.set_xticks(range(6), ["$a_x$", "$a_y$", "$a_z$", "$α_x$", "$α_y$", "$α_z$"], fontsize=10)
    ax.set_yticks(range(6), labels, fontsize=10)
    ax.set_title(title, fontsize=11)

    def update(M, title=None):
        im.set_data(np.asarray(M, dtype=float))
        if title is not None:
            ax.set_title(title, fontsize=11)

    return update

# ---------------------------------------------------------- one contact impulse (§5)

CONTACT_ARM = planar_chain(3, length=[1.0, 0.8, 0.6], mass=[2.0, 1.5, 1.0])
"""The planar 3-link arm of the contact section (links 1.0, 0.8, 0.6 m; 2, 1.5, 1 kg)."""

CONTACT_TIP = np.array([0.0, 0.6, 0.0])
"""The tip of its last link, in body-3 coordinates: the contact point."""


def draw_contact(ax, model=CONTACT_ARM, tip=CONTACT_TIP, scale=0.25, impulse_scale=0.6):
    """The tip of a planar arm hitting the ground (a horizontal line through the tip).

    Returns ``update(q, qd, e, mu)``: it resolves the impact with
    :func:`rbdlearn.contact_impulse` (normal +z, body = the last link), redraws the arm,
    the ground, the tip velocity before (grey) and after (green) the impact — arrows of
    length ``scale·|v|`` — and the impulse ``P`` on the tip (red, ``impulse_scale·|P|``),
    and returns the :class:`rbdlearn.impulses.ContactImpulse`.
    """
    i = model.N
    drawing = ChainDrawing(ax, model, np.zeros(model.N), coms=False)
    drawing.coms.set_visible(False)          # coms=False leaves a line through the COMs
    ground = ax.plot([], [], "-", color="0.3", lw=2)[0]
    hatch = ax.fill_between([0.0, 0.0], [0.0, 0.0], color="0.85", zorder=0)
    style = dict(angles="xy", scale_units="xy", scale=1, width=0.009, zorder=6)
    arrows = {k: ax.quiver([0.0], [0.0], [0.0], [0.0], color=col, label=lab, **style)
              for k, col, lab in (("v_before", "0.55", "tip velocity before"),
                                  ("v_after", "C2", "tip velocity after"),
                                  ("P", "C3", "impulse P"))}
    xlim = ax.get_xlim()

    def update(q, qd, e, mu):
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        g = drawing.update(q)
        p_tip = g["tips"][-1]
        res = contact_impulse(model, q, qd, i, tip, (0.0, 0.0, 1.0), e, mu)
        ground.set_data(list(xlim), [p_tip[1]] * 2)
        hatch.set_paths([[[xlim[0], p_tip[1]], [xlim[1], p_tip[1]],
                          [xlim[1], p_tip[1] - 5.0], [xlim[0], p_tip[1] - 5.0]]])
        for k, s in (("v_before", scale), ("v_after", scale), ("P", impulse_scale)):
            vec = s * getattr(res, k)[1:]           # y, z components (world)
            arrows[k].set_offsets([p_tip])
            arrows[k].set_UVC([vec[0]], [vec[1]])
        return res

    return update

# ------------------------------------------------------- the ball joint, swing and twist (§4)


def draw_ball_joint(ax, swing_max=None, length=1.0):
    """A ball joint on a 3-D axes: the socket frame (thin, fixed), the plug frame
    (thick, x red, y green, z blue), the cone ``θ_swing ≤ swing_max`` about the socket's
    z axis (omitted for None) and the arc of the swing angle between the two z axes.
    Returns ``update(R, swing_max=None)``: redraws the plug at orientation R (plug
    coordinates → socket coordinates); the cone turns red when R lies outside it."""
    colors = ("C3", "C2", "C0")
    for k, col in enumerate(colors):                         # the socket frame
        ax.plot(*np.outer(np.eye(3)[k], [0, 0.75 * length]), "--", color=col, lw=1)
    plug = [ax.plot([], [], [], "-", color=col, lw=3)[0] for col in colors]
    arc = ax.plot([], [], [], "-", color="k", lw=1.5)[0]
    ring = np.linspace(0, 2 * np.pi, 41)
    cone = [ax.plot([], [], [], "-", color="0.4", lw=1)[0] for _ in range(9)]
    state = {"swing_max": swing_max}
    ax.set(xlim=(-length, length), ylim=(-length, length), zlim=(-length, length),
           xlabel="x", ylabel="y", zlabel="z", xticks=[-length, 0, length],
           yticks=[-length, 0, length], zticks=[-length, 0, length])
    ax.set_box_aspect((1, 1, 1))

    def draw_cone(smax):
        if smax is None:
            for line in cone:
                line.set_data_3d([], [], [])
            return
        s, c = math.sin(smax) * length, math.cos(smax) * length
        cone[0].set_data_3d(s * np.cos(ring), s * np.sin(ring), np.full_like(ring, c))
        for line, a in zip(cone[1:], np.linspace(0, 2 * np.pi, 8, endpoint=False)):
            line.set_data_3d([0, s * math.cos(a)], [0, s * math.sin(a)], [0, c])

    def update(R, swing_max=None):
        R = np.asarray(R, dtype=float)
        if swing_max is not None:
            state["swing_max"] = swing_max
        draw_cone(state["swing_max"])
        for k, line in enumerate(plug):
            line.set_data_3d(*np.outer(R[:, k], [0, length]))
        swing, _ = swing_twist(R)
        b = R[:, 2]                                          # the plug's z axis
        u = b - b[2] * np.eye(3)[2]                          # its part ⟂ socket z
        u = u / np.linalg.norm(u) if np.linalg.norm(u) > 1e-9 else np.eye(3)[0]
        a = np.linspace(0, swing, 20)
        pts = 0.5 * length * (np.outer(np.cos(a), np.eye(3)[2]) + np.outer(np.sin(a), u))
        arc.set_data_3d(pts[:, 0], pts[:, 1], pts[:, 2])
        outside = state["swing_max"] is not None and swing > state["swing_max"]
        for line in cone:
            line.set_color("C3" if outside else "0.4")
        return swing

    update(np.eye(3))
    return update


# -------------------------------------------------------------------------------------
# Chapter 2: where the pictures put things (coordinates from the kinematics, no
# drawing), each tested in tests/test_viz.py.


def socket_plug_frames(model, q, i):
    """The four frames of seed 000's Fig. 2 for the joint of body ``i``, as world poses
    ``(R, o)`` (R: the frame's axes as columns, o: its origin, base coordinates):
    ``"p"`` the parent's centre-of-mass frame (for the base: its origin), ``"j"`` the
    socket (the joint's predecessor frame, placed by ``Xtree[i]``), ``"j'"`` the plug
    (body i's own frame, moved by the joint) and ``"c"`` the child's centre-of-mass
    frame. A centre-of-mass frame has its body's axes."""
    i = body_index(model, i, "i")
    X0 = forward_kinematics(model, q)
    lam = model.parent[i]

    def com(b):
        return np.zeros(3) if b == 0 else inertia_params(model.I[b], allow_massless=True)[1]
    R_p, o_p = body_pose(X0[lam])
    R_c, o_c = body_pose(X0[i])
    return {"p": (R_p, o_p + R_p @ com(lam)),
            "j": body_pose(model.Xtree[i] @ X0[lam]),
            "j'": (R_c, o_c),
            "c": (R_c, o_c + R_c @ com(i))}
