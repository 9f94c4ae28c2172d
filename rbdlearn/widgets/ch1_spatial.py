"""Explorers of Chapter 1: one planar motion seen from two frames (§1,
:func:`plucker_explorer`), a plate constrained to a hinge, a slider or the plane (§2,
:func:`constrained_motion_explorer`) and the RNEA on a planar arm (§3,
:func:`rnea_explorer`); the UR5 following a trajectory in 3-D with its RNEA torques (§3,
:func:`ur5_trajectory_scene`)."""

import math

import ipywidgets as W
import numpy as np
from matplotlib.patches import Polygon

from .. import planar_chain, viz
from ..errors import RbdlearnError
from ..inverse_dynamics import torque_parts, transmitted_forces
from ..models import with_payload
from ..spatial import (PLANE_S, applied_force, force_X, hinge_S, plate_body, plux, rotx,
                       slider_S)
from .core import Picture, explorer_box, grid_values, readout, slider, vec, control_layout

__all__ = ["plucker_explorer", "rnea_explorer", "constrained_motion_explorer",
           "ur5_trajectory", "ur5_trajectory_scene", "UR5_URDF"]


def plucker_explorer(force=(-1.0, 0.0, 0.0, 0.0, 1.0, 0.0)):
    """Same planar motion, two frames: O (the base) and B (sliders for its pose).

    Sliders set the motion ``ᴼv = [ω, 0, 0, 0, v_y, v_z]`` and B's origin and angle.
    The picture shows the velocity of body points on a grid, the instantaneous
    centre, both frames, and the line of action of a fixed force ``ᴼf`` (default
    1 N along +y through the point z = 1). The text shows ``ᴮv = ᴮX_O ᴼv``,
    ``ᴮf = ᴮX_O⁻ᵀ ᴼf`` and the power ``v·f`` computed in each frame.
    """
    pic = Picture((5.2, 5.0))
    ax = pic.fig.add_subplot()
    lim = 2.2
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xlabel="y", ylabel="z",
           title="velocities of body points")
    f_O = np.asarray(force, dtype=float)
    field = viz.draw_velocity_field(ax, np.zeros(6), extent=(-2, 2, -2, 2))
    viz.draw_force_line(ax, f_O, label="line of action of f")
    viz.draw_frame_2d(ax, (0, 0), 0, "O")
    frame_B = viz.draw_frame_2d(ax, (1, 1), 0, "B", color="C0")
    vO_arrow = ax.quiver([0, 0], [0, 0], [0, 0], [0, 0], color="C1", angles="xy",
                         scale_units="xy", scale=1, width=0.012, zorder=6,
                         label="$v_O$ at O and $v_B$ at B")
    ax.legend(loc="lower left", fontsize=8)
    pic.fig.tight_layout()
    c = {"ω": slider("ω", 1.0, -2, 2), "v_Oy": slider("v_O y", 0.5, -2, 2),
         "v_Oz": slider("v_O z", 0.0, -2, 2), "B_y": slider("B y", 1.0, -2, 2),
         "B_z": slider("B z", 1.0, -2, 2), "B_θ": slider("B angle", 0.5, -3.14, 3.14)}
    html = W.HTML()

    def update():
        v_O = np.array([c["ω"].value, 0, 0, 0, c["v_Oy"].value, c["v_Oz"].value])
        rB, th = np.array([0.0, c["B_y"].value, c["B_z"].value]), c["B_θ"].value
        X = plux(rotx(th).T, rB)                 # ᴮX_O
        v_B, f_B = X @ v_O, force_X(X) @ f_O
        field(v_O)
        frame_B(rB[1:], th)
        # the linear parts, drawn in base axes: v_O at O, and R_B ᴮv_lin at B
        vB_world = rotx(th) @ v_B[3:]
        vO_arrow.set_offsets([[0, 0], rB[1:]])
        vO_arrow.set_UVC(0.25 * np.array([v_O[4], vB_world[1]]),
                         0.25 * np.array([v_O[5], vB_world[2]]))
        pic.refresh()
        html.value = readout(
            f"ᴼv = {vec(v_O)}\nᴮv = ᴮX_O ᴼv\n   = {vec(v_B)}\n\n"
            f"ᴼf = {vec(f_O)}\nᴮf = ᴮX_O⁻ᵀ ᴼf\n   = {vec(f_B)}\n\n"
            f"power ᴼv·ᴼf = {v_O @ f_O:+.4f} W\n      ᴮv·ᴮf = {v_B @ f_B:+.4f} W")

    return explorer_box(pic, c, html, update,
                views={"B_θ": grid_values(-3.0, 3.0, 0.5), "B_y": grid_values(0.0, 2.0, 0.5)})


def rnea_explorer(n=2, length=(1.0, 0.8, 0.6), mass=(2.0, 1.0, 0.8), force_scale=0.02):
    """A planar n-link arm (n = 2 or 3): sliders for q, q̇, q̈ and a payload at the tip.

    Shows the arm, the force each joint transmits (arrow on its line of action,
    :func:`rbdlearn.inverse_dynamics.transmitted_forces`) and the joint torques split into the
    gravity, velocity and inertial parts (:func:`rbdlearn.inverse_dynamics.torque_parts`) — all
    computed by ``rbdlearn.rnea``.
    """
    if n not in (2, 3):
        raise RbdlearnError(f"rnea_explorer draws 2 or 3 links, got n={n}")
    arm = planar_chain(n, length=list(length[:n]), mass=list(mass[:n]))
    L = float(sum(length[:n]))
    pic = Picture((8.4, 4.2))
    ax, bx = pic.fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    ax.set(xlim=(-L - 0.2, L + 0.2), ylim=(-L - 0.2, L + 0.2), aspect="equal",
           xlabel="y [m]", ylabel="z [m]", title="arm and joint forces")
    drawing = viz.ChainDrawing(ax, arm, np.zeros(n))
    payload = ax.plot([], [], "o", color="C1", zorder=5)[0]
    colors = ["C2", "C4", "C5"]
    lines = [viz.draw_force_line(ax, np.zeros(6), scale=force_scale, color=colors[i],
                                 label=f"force on link {i + 1}") for i in range(n)]
    ax.legend(loc="lower left", fontsize=8.5)
    bx.set_title("joint torques τ")
    bars = viz.draw_torque_bars(bx, {k: np.zeros(n) for k in viz.PART_COLORS})
    bx.legend(fontsize=8.5, loc="upper right")
    pic.fig.tight_layout()
    c = {}
    for i in range(n):
        c[f"q{i + 1}"] = slider(f"q{i + 1}", 0.6 if i == 0 else 0.4, -3.14, 3.14)
    for i in range(n):
        c[f"qd{i + 1}"] = slider(f"q̇{i + 1}", 0.0, -4, 4)
    for i in range(n):
        c[f"qdd{i + 1}"] = slider(f"q̈{i + 1}", 0.0, -8, 8)
    c["payload"] = slider("load kg", 0.0, 0, 3)
    html = W.HTML()

    def update():
        q, qd, qdd = (np.array([c[f"{s}{i + 1}"].value for i in range(n)])
                      for s in ("q", "qd", "qdd"))
        model = with_payload(arm, c["payload"].value, length[n - 1])
        g = drawing.update(q)
        payload.set_data([g["tips"][-1][0]], [g["tips"][-1][1]])
        payload.set_markersize(4 + 4 * c["payload"].value)
        forces = transmitted_forces(model, q, qd, qdd)
        for i, line in enumerate(lines):         # arrow drawn next to joint i
            line(forces[i + 1], anchor=g["origins"][i + 1])
        parts = torque_parts(model, q, qd, qdd)
        bars(parts)
        top = max(5.0, 1.15 * max(np.abs(p).max() for p in parts.values()))
        bx.set_ylim(-top, top)
        pic.refresh()
        html.value = readout("\n".join(f"{k:9s}{vec(v)} N m" for k, v in parts.items()))

    return explorer_box(pic, c, html, update,
                views={"q1": grid_values(-3.0, 3.0, 0.75), "q2": [-2.0, -0.8, 0.4, 1.6],
                       "qd1": [0.0, 2.0]})   # the prose: at rest, then "give joint 1 a
                                             # velocity" (two values: the page's weight)


def constrained_motion_explorer():
    """A plate at rest, constrained to a hinge, a slider or the plane, pushed by a force.

    Shows the acceleration ``a = S (SᵀIS)⁻¹ Sᵀ f`` as the acceleration of body points
    (the body is at rest, so the point accelerations are ``a_O + ω̇ × OP``), its
    instantaneous centre, the applied force and the constraint force ``f_c = I a − f``
    (whose line of action passes through the hinge, or is normal to the slider).
    """
    I, corners = plate_body()
    pic = Picture((5.2, 4.6))
    ax = pic.fig.add_subplot()
    ax.set(xlim=(-1.2, 2.2), ylim=(-1.4, 1.6), aspect="equal", xlabel="y", ylabel="z",
           title="accelerations of body points")
    ax.add_patch(Polygon(corners, closed=True, fc="C0", alpha=0.25, ec="C0"))
    ax.plot([0.6], [0.2], "P", color="k", ms=9)
    field = viz.draw_velocity_field(ax, np.zeros(6), extent=(-1, 2, -1.2, 1.4), n=8,
                                    scale=0.15)
    f_line = viz.draw_force_line(ax, np.zeros(6), scale=0.2, color="C2", label="applied f")
    c_line = viz.draw_force_line(ax, np.zeros(6), scale=0.2, color="C3",
                                 label="constraint $f_c$")
    hinge = ax.plot([], [], "o", ms=10, mfc="white", mec="k", mew=2, zorder=7)[0]
    guide = ax.plot([], [], "-", color="k", lw=3, alpha=0.4)[0]
    ax.legend(loc="lower left", fontsize=8.5)
    pic.fig.tight_layout()
    c = {"joint": W.Dropdown(options=["hinge", "slider", "plane"], value="hinge",
                             description="joint", layout=control_layout(),
                             style={"description_width": "70px"}),
         "P_y": slider("hinge y", 0.0, -1, 2), "P_z": slider("hinge z", 0.2, -1, 1.4),
         "φ": slider("slider φ", 0.0, -3.14, 3.14),
         "A_y": slider("force at y", 1.2, -0.2, 1.4), "A_z": slider("force at z", 0.2, -0.2, 0.6),
         "F": slider("|F| N", 2.0, 0, 5), "β": slider("F angle", 1.57, -3.14, 3.14)}
    html = W.HTML()

    def update():
        kind = c["joint"].value
        P = (c["P_y"].value, c["P_z"].value)
        S = {"hinge": lambda: hinge_S(P), "slider": lambda: slider_S(c["φ"].value),
             "plane": lambda: PLANE_S}[kind]()
        beta, F = c["β"].value, c["F"].value
        f = applied_force((c["A_y"].value, c["A_z"].value),
                          (F * math.cos(beta), F * math.sin(beta)))
        alpha_dot = np.linalg.solve(S.T @ I @ S, S.T @ f)
        a = S @ alpha_dot                          # S (SᵀIS)⁻¹ Sᵀ f
        f_c = I @ a - f                            # the body is at rest: no v ×* I v
        field(a)
        f_line(f, anchor=(c["A_y"].value, c["A_z"].value))
        c_line(f_c, anchor=P if kind == "hinge" else (0.6, 0.2))
        hinge.set_data(([P[0]], [P[1]]) if kind == "hinge" else ([], []))
        d = np.array([math.cos(c["φ"].value), math.sin(c["φ"].value)]) * 3
        guide.set_data(*(([0.6 - d[0], 0.6 + d[0]], [0.2 - d[1], 0.2 + d[1]])
                         if kind == "slider" else ([], [])))
        pic.refresh()
        html.value = readout(f"f      = {vec(f)}\nα̇      = {vec(alpha_dot, 3)}\n"
                      f"a      = {vec(a)}\nf_c    = I a − f\n       = {vec(f_c)}\n"
                      f"Sᵀ f_c = {vec(S.T @ f_c, 6)}")

    return explorer_box(pic, c, html, update,
                views={"joint": ["hinge", "slider", "plane"],
                       "β": grid_values(-3.14, 3.14, np.pi / 6)})


UR5_URDF = "ur_description/urdf/ur5_robot.urdf"
STEEL = 7850.0        # kg/m³: the payload is drawn as a steel ball of its mass


def ur5_trajectory(duration=4.0, frames=81):
    """``(t, q, qd, qdd)`` of a UR5 move from a folded posture to a long reach:
    ``q(t) = q_a + (q_b − q_a)(1 − cos πt/T)/2`` for t in [0, T], at rest at both ends,
    at ``frames`` times; arrays (F,) and (F, 6)."""
    q_a = np.array([-0.6, -2.0, 2.1, -1.7, -1.57, 0.0])
    q_b = np.array([1.3, -0.8, 0.9, -1.2, -1.0, 1.2])
    t = np.linspace(0.0, duration, frames)
    w = np.pi / duration
    s, sd, sdd = (1 - np.cos(w * t)) / 2, w * np.sin(w * t) / 2, w * w * np.cos(w * t) / 2
    d = q_b - q_a
    return t, q_a + s[:, None] * d, sd[:, None] * d, sdd[:, None] * d


def _ur5_tool():
    """The UR5 model, its tool body (wrist 3), the centre of its flange (the ee_link
    frame's origin, welded to wrist 3) and the flange's outward normal (the ee_link's x
    axis), in that body's coordinates."""
    from pathlib import Path

    from .. import urdf
    from ..spatial import plux_parts
    path = urdf.example_robot_path(UR5_URDF)
    model = urdf.load(path)
    _, body, X = urdf.link_frames(Path(path).read_bytes())["ee_link"]
    E, r = plux_parts(X)
    return model, body, r, E[0]


def with_point_mass(model, body, mass, point):
    """A copy of ``model`` with a point mass ``mass`` at ``point`` (body coordinates) on
    ``body``."""
    from ..spatial import mcI
    I = list(model.I)
    I[body] = I[body] + mcI(mass, np.asarray(point, dtype=float), np.zeros((3, 3)))
    return model.replace(I=I)


def ur5_trajectory_scene(payloads=(0.0, 1.0, 2.5, 5.0), index=2, duration=4.0, frames=81):
    """The UR5 following :func:`ur5_trajectory` in 3-D (its collision meshes), the joint
    torques ``rbd.rnea`` gives along it drawn beside it, one run per payload mass (kg)
    at the tool (a slider), the run ``index`` first. The motion is the same in every
    run; the torques are those of the arm carrying the payload, a steel ball of that
    mass fixed on the flange (its centre one radius out along the flange's normal),
    taken as a point mass at its centre. Returns the
    :class:`~rbdlearn.viz.scene3d.Scene`, with ``scene.torques`` (R, F, 6),
    ``scene.trajectory`` (t, q, qd, qdd) and ``scene.tool`` (body, [payload centre in
    its coordinates per run]) for checks."""
    from .. import body_pose, forward_kinematics, rnea
    from ..viz import scene3d as s3
    model, body, flange, normal = _ur5_tool()
    t, q, qd, qdd = ur5_trajectory(duration, frames)
    radii = [(3 * m / (4 * np.pi * STEEL)) ** (1 / 3) for m in payloads]
    centres = [flange + r * normal for r in radii]
    torques = np.stack([rnea(with_point_mass(model, body, m, c), q, qd, qdd)
                        for m, c in zip(payloads, centres)])
    scene = s3.Scene("UR5 following a trajectory, with its RNEA joint torques",
                     ("t (s)", t), camera={"position": [1.15, -1.15, 0.85],
                                           "target": [0.1, 0.1, 0.3]})
    scene.add_model(model, q, s3.robot_shapes(model, UR5_URDF), name="UR5",
                    source={"urdf": UR5_URDF, "floating_base": False})
    R, p = body_pose(forward_kinematics(model, q)[body])
    still = np.tile([1.0, 0, 0, 0], (frames, 1))
    scene.add_marker("payload", [s3.shape("sphere", radius=1.0, color="#c9a227")],
                     [np.concatenate([p + R @ c, still], axis=1) for c in centres],
                     scales=[np.full((frames, 3), max(r, 1e-4)) for r in radii])
    scene.set_param("payload (kg)", payloads, index=index)
    scene.add_plot("joint torques τ (N·m)",
                   {f"τ{k + 1}": [tau[:, k] for tau in torques] for k in range(6)})
    scene.set_readout([[f"payload {m:g} kg, t = {tk:.2f} s: τ = {vec(tau, 1)} N·m"
                        for tk, tau in zip(t, taus)] for m, taus in zip(payloads, torques)])
    scene.torques, scene.trajectory, scene.tool = torques, (t, q, qd, qdd), (body, centres)
    return scene
