"""Explorers of Chapter 2 (the ABA): frames propagated along a tree (§1,
:func:`propagation_explorer`), the inertia body 1 feels (§2,
:func:`articulated_inertia_explorer`), the inward pass step by step (§3,
:func:`aba_step_explorer`), the ball joint (§4, :func:`ball_joint_explorer`), a contact
impulse (§5, :func:`contact_explorer`) and runs through contact (§6,
:func:`contact_run_explorer`)."""

import itertools
import math

import ipywidgets as W
import numpy as np

from .. import energy
from ..articulated import felt_inertias, felt_masses, inward_pass_steps
from ..errors import RbdlearnError
from ..joints import from_swing_twist, swing_twist, swing_twist_limit_violation
from ..joints import zyx_angles  # re-exported: notebooks call widgets.zyx_angles (ch. 2, 5)
from ..models import small_trees
from ..viz import CONTACT_ARM, draw_ball_joint, draw_contact, draw_heatmap, draw_propagation
from .core import Picture, control_layout, explorer_box, grid_values, readout, slider, vec

__all__ = ["propagation_explorer", "articulated_inertia_explorer", "contact_explorer",
           "ball_joint_explorer", "aba_step_explorer", "contact_run_explorer", "zyx_angles",
           "contact_frames", "contact_readout", "contact_run_scene", "box_shapes",
           "biped_shapes", "talos_model", "talos_start", "talos_release",
           "talos_release_scene"]


def propagation_explorer():
    """Widget for seed 000 §1: sliders for a's angle and spin, b's position, velocity
    and spin relative to a; shows C_ab's centripetal and Coriolis parts (eq. 9)."""
    pic = Picture((5.0, 5.0))
    ax = pic.fig.add_subplot()
    ax.set(xlim=(-2.2, 2.2), ylim=(-2.2, 2.2), aspect="equal", xlabel="y", ylabel="z",
           title="frame b relative to a spinning frame a")
    draw = draw_propagation(ax)
    pic.fig.tight_layout()
    c = {"θ_a": slider("θ_a", 0.0, -3.14, 3.14), "ω_a": slider("ω_a", 1.0, -2, 2),
         "r_y": slider("r_ab y", 1.2, -2, 2), "r_z": slider("r_ab z", 0.0, -2, 2),
         "v_y": slider("v_ab y", 0.0, -2, 2), "v_z": slider("v_ab z", 0.0, -2, 2),
         "ω_ab": slider("ω_ab", 0.0, -2, 2)}
    html = W.HTML()

    def update():
        out = draw(c["θ_a"].value, c["ω_a"].value, (c["r_y"].value, c["r_z"].value),
                   (c["v_y"].value, c["v_z"].value), c["ω_ab"].value)
        pic.refresh()
        html.value = readout("[linear; angular], b's axes\n"
                      f"V_b  = {vec(out['V_b'])}\nC_ab = {vec(out['C_ab'])}\n"
                      f"A_b  = {vec(out['A_b'])}\n(A_a = 0, A_ab = 0)")

    # the page's views are those its prose asks for: ω_a, and v_ab along r_ab or zero
    return explorer_box(pic, c, html, update,
                views={"ω_a": grid_values(-2.0, 2.0, 0.5),
                       "v_y": grid_values(-1.0, 1.0, 0.5)})


def articulated_inertia_explorer():
    """Widget for the ABA theorem: body 1 of a planar 2-link arm feels link 2 through
    joint 2. Sliders for q2 and link 2's mass; heat maps of I_1, Î_1 and the rigid
    composite, and the mass felt by a push along body 1's y and z axes."""
    pic = Picture((8.6, 3.2))
    axes = pic.fig.subplots(1, 3)
    mats = felt_inertias(0.8, 1.0)
    vmax = 3.0
    draws = [draw_heatmap(ax, mats[k], t, vmax) for ax, k, t in zip(
        axes, ("own", "articulated", "rigid"),
        ("own $I_1$", "articulated $\\hat I_1$", "rigid (joint 2 locked)"))]
    pic.fig.tight_layout()
    c = {"q2": slider("q2", 0.8, -3.14, 3.14),
         "m2": slider("m2 kg", 1.0, 0.1, 3.0)}     # not 0: a massless leaf has D = 0
    html = W.HTML()

    def update():
        mats = felt_inertias(c["q2"].value, c["m2"].value)
        for d, k in zip(draws, ("own", "articulated", "rigid")):
            d(mats[k])
        pic.refresh()
        felt = {k: felt_masses(M) for k, M in mats.items()}
        html.value = readout("mass felt by a push\nalong body 1's  y      z\n" + "\n".join(
            f"{k:12s}{a:6.3f} {b:6.3f}" for k, (a, b) in felt.items()))

    return explorer_box(pic, c, html, update,
                views={"q2": grid_values(-2.8, 2.8, 0.4), "m2": [0.1, 0.3, 1.0, 2.0, 3.0]})


def contact_explorer():
    """Widget for seed 000 §2.8 used in a contact step: the tip of a planar 3-link arm
    (:data:`CONTACT_ARM`) strikes the ground. Sliders for the configuration, the joint
    velocities at impact, the restitution e and the friction μ; shows the impulse, the
    tip velocity before and after, the mode (stick / slide), Δq̇ and the change of
    kinetic energy."""
    pic = Picture((5.0, 4.6))
    ax = pic.fig.add_subplot()
    ax.set(xlim=(-2.6, 2.6), ylim=(-2.8, 1.4), aspect="equal", xlabel="y [m]",
           ylabel="z [m]", title="an impact at the tip")
    draw = draw_contact(ax)
    ax.legend(loc="upper left", fontsize=8.5)
    pic.fig.tight_layout()
    c = {"q1": slider("q1", -0.8, -3.14, 0.0), "q2": slider("q2", -0.3, -2.5, 2.5),
         "q3": slider("q3", 0.1, -2.5, 2.5), "qd1": slider("q̇1", -1.9, -4, 4),
         "qd2": slider("q̇2", 1.0, -4, 4), "qd3": slider("q̇3", 0.2, -4, 4),
         "e": slider("e", 0.5, 0.0, 1.0), "mu": slider("μ", 0.3, 0.0, 1.5)}
    html = W.HTML()

    def update():
        q = np.array([c[f"q{k}"].value for k in (1, 2, 3)])
        qd = np.array([c[f"qd{k}"].value for k in (1, 2, 3)])
        res = draw(q, qd, c["e"].value, c["mu"].value)
        pic.refresh()
        Pn, Pt = res.P[2], res.P[1]
        ratio = f"{abs(Pt) / Pn:.3f}" if Pn > 0 else "—"
        html.value = readout(f"mode      {res.mode}\n"
                      f"v before  (y, z) = {vec(res.v_before[1:])} m/s\n"
                      f"v after   (y, z) = {vec(res.v_after[1:])} m/s\n"
                      f"impulse P (y, z) = {vec(res.P[1:])} N s\n"
                      f"|P_t| / P_n      = {ratio}\n"
                      f"Δq̇              = {vec(res.dqd)} rad/s\n"
                      f"kinetic energy change = {energy(CONTACT_ARM, q, qd + res.dqd) - energy(CONTACT_ARM, q, qd):+.3f} J")

    return explorer_box(pic, c, html, update,
                views={"e": grid_values(0.0, 1.0, 0.25), "mu": [0.0, 0.15, 0.3, 0.6, 1.0, 1.5]})


def ball_joint_explorer(swing_max=math.radians(40)):
    """Widget for seed 000 §2.5.3: sliders for the azimuth φ of the swing, the swing and
    twist angles and the cone limit; shows socket and plug frames and the cone, and
    reads out R = R_swing(φ, θ_s) Rz(θ_t) (:func:`rbdlearn.joints.from_swing_twist`),
    the angles recovered from R (eqs. 27, 29), the ZYX Euler angles of the same R with
    det(SᵀS) = cos² q_y, and the limit functions g (≤ 0 inside the limit)."""
    pic = Picture((4.4, 4.4), dpi=72)
    ax = pic.fig.add_subplot(projection="3d")
    ax.view_init(elev=20, azim=35)
    draw = draw_ball_joint(ax, swing_max)
    pic.fig.subplots_adjust(0, 0, 1, 1)
    c = {"φ": slider("φ", 0.0, -3.14, 3.14), "swing": slider("swing", 0.5, 0.0, 3.0),
         "twist": slider("twist", 0.3, -3.14, 3.14),
         "limit": slider("swing max", swing_max, 0.05, 3.0)}
    html = W.HTML()

    def update():
        R = from_swing_twist(c["φ"].value, c["swing"].value, c["twist"].value)
        draw(R, c["limit"].value)
        pic.refresh()
        swing, twist = swing_twist(R)
        qz, qy, qx = zyx_angles(R)
        g, _ = swing_twist_limit_violation(R, c["limit"].value)
        html.value = readout(
            "R =\n" +
            "\n".join(vec(row, 3) for row in R) +
            f"\n\nfrom R:  swing = arccos R_zz   = {swing:+.3f}\n"
            f"         twist (corr. eq. 29) = {twist:+.3f}\n"
            f"ZYX:     (q_z, q_y, q_x) = {vec((qz, qy, qx), 3)}\n"
            f"         det(SᵀS) = cos² q_y = {math.cos(qy) ** 2:.3f}\n"
            f"limit:   g_swing = {g[0]:+.3f}  "
            f"({'outside' if g[0] > 0 else 'inside'} the cone)")

    return explorer_box(pic, c, html, update,
                # swing 1.57 ≈ π/2: the gimbal lock the page's prose asks for
                views={"swing": sorted(grid_values(0.0, 3.0, 0.25) + [1.57]),
                       "φ": [-3.14, -1.57, 0.0, 1.57, 3.14]})      # "sweep φ": a full turn


def aba_step_explorer():
    """Step through the ABA's inward pass on a small tree: one 6x6 heat map of Î per body."""
    trees = small_trees()
    pic = Picture((10.0, 2.6))
    html = W.HTML()
    c = {"tree": W.Dropdown(options=list(trees), description="tree",
                            layout=control_layout()),
         "step": W.IntSlider(value=0, min=0, max=5, description="step",
                             layout=control_layout())}

    # every tree's panels are made here, hidden: picking a tree only shows its own
    panels, steps_of = {}, {}
    for name, (model, q) in trees.items():
        steps = steps_of[name] = inward_pass_steps(model, q)
        vmax = max(np.abs(M).max() for M in steps[-1][1:])
        axes = np.atleast_1d(pic.fig.subplots(1, model.N))
        panels[name] = (axes, [draw_heatmap(ax, steps[0][i], "", vmax)
                               for i, ax in zip(range(1, model.N + 1), axes)])
        for ax in axes:
            ax.set_xticks([]), ax.set_yticks([])
            ax.set_visible(False)
    title = pic.fig.suptitle("", fontsize=10)
    pic.fig.subplots_adjust(top=0.8)          # room for the title over the panels
    shown = {"name": None}

    def update():
        name = c["tree"].value
        model, _ = trees[name]
        steps = steps_of[name]
        axes, draws = panels[name]
        if shown["name"] != name:                # new tree: its panels instead
            if shown["name"] is not None:
                for ax in panels[shown["name"]][0]:
                    ax.set_visible(False)
            for ax in axes:
                ax.set_visible(True)
            c["step"].max = model.N
            shown["name"] = name
            html.value = readout("parent λ(i): " + str(model.parent[1:])
                          + "\njoints: " + ", ".join(type(j).__name__ for j in model.joints[1:])
                          + "\nstep s: bodies N … N−s+1 have added their\n"
                            "contribution (eq. 25) to their parents")
        s = min(c["step"].value, model.N)
        for i, draw in enumerate(draws, start=1):
            state = "final" if i > model.N - s else "next" if i == model.N - s else ""
            draw(steps[s][i], f"body {i} {state}")
        title.set_text(f"{name}: after {s} of {model.N} steps")
        pic.refresh()

    # each tree its own steps, 0 … N: the page's step slider ends at the tree's last step
    return explorer_box(pic, c, html, update,
                views={"tree": list(trees),
                       "step": {name: list(range(m.N + 1)) for name, (m, _) in trees.items()}})


def contact_run_explorer(runs, xlim, ylim, surface="below", force_scale=0.1,
                         axis_labels=("y [m]", "z [m]"), frames=21, figsize=(5.6, 3.4)):
    """Widget for §2.6: precomputed runs through contact, one picked by a drop-down (when
    there are several), scrubbed by a time slider. ``runs`` {name: run}, each run a dict
    with ``t`` (n times), ``lines`` (per time, a list of (k, 2) polylines in the drawing
    plane), ``forces`` (per time, an (m, 4) array of arrows [x, y, f_x, f_y]: the contact
    forces, drawn ``force_scale`` m per N) and ``text`` (per time, the read-out). The
    surface z = 0 is shaded ``below`` or ``above`` it. The callback only moves the drawn
    lines; the kernel-free form shows ``frames`` times per run."""
    names = list(runs)
    n_lines = max(len(ls) for run in runs.values() for ls in run["lines"])
    pic = Picture(figsize, dpi=72)
    ax = pic.fig.add_subplot()
    ax.axhspan(*((ylim[0], 0.0) if surface == "below" else (0.0, ylim[1])), color="0.88")
    ax.axhline(0.0, color="0.4", lw=1.2)
    ax.set(xlim=xlim, ylim=ylim, aspect="equal", xlabel=axis_labels[0], ylabel=axis_labels[1])
    lines = [ax.plot([], [], "-o", color="C0", lw=2, ms=3)[0] for _ in range(n_lines)]
    n_arrows = max(len(f) for run in runs.values() for f in run["forces"])
    arrows = ax.quiver(np.zeros(n_arrows), np.zeros(n_arrows), np.zeros(n_arrows),
                       np.zeros(n_arrows), color="C3", angles="xy", scale_units="xy",
                       scale=1, width=0.008, zorder=5)
    label = ax.text(0.02, 0.95, "", transform=ax.transAxes, fontsize=9, va="top")
    pic.fig.tight_layout()
    t_end = min(float(run["t"][-1]) for run in runs.values())
    dt = float(np.min(np.diff(next(iter(runs.values()))["t"])))
    c = {"t": slider("t [s]", 0.0, 0.0, t_end, step=max(0.01, round(dt, 2)))}
    if len(names) > 1:
        c = {"run": W.Dropdown(options=names, value=names[0], description="run",
                               layout=control_layout()), **c}
    html = W.HTML()

    def update():
        run = runs[c["run"].value if "run" in c else names[0]]
        k = int(np.argmin(np.abs(run["t"] - c["t"].value)))
        for line, pts in itertools.zip_longest(lines, run["lines"][k]):
            if line is not None:
                pts = np.zeros((0, 2)) if pts is None else np.asarray(pts)
                line.set_data(pts[:, 0], pts[:, 1])
        f = np.zeros((n_arrows, 4))
        f[:len(run["forces"][k])] = run["forces"][k]
        arrows.set_offsets(f[:, :2])
        arrows.set_UVC(force_scale * f[:, 2], force_scale * f[:, 3])
        label.set_text(f"t = {run['t'][k]:.2f} s")
        pic.refresh()
        html.value = readout(run["text"][k])

    views = {"t": grid_values(0.0, t_end, t_end / (frames - 1))}
    if "run" in c:
        views = {"run": names, **views}
    return explorer_box(pic, c, html, update, views=views)


# -------------------------------------------------------------------------------------
# §6's runs through contact in 3-D (:func:`box_drop_scene`, :func:`biped_push_scene`):
# the forces of each step at its contact points, from the run's own solutions (tested in
# tests/test_scenes_ch23.py).


def contact_frames(model, run, names):
    """The contact forces of a run of :func:`rbdlearn.contact.simulate`, frame by frame.

    Frame k is the state after step k (frame 0 the start, with no force); it shows the
    impulses of step k as the forces P/h, at the contact points where the step found
    them (the state before it, ``run.q[k - 1]``). ``names``: the contacts to follow, by
    name, a fixed order (a contact that step k did not use has no force there). Returns
    a dict of arrays (F frames, m = len(names)): ``point`` (F, m, 3) world positions,
    ``force`` (F, m, 3) P/h [N], ``v_before`` and ``v_after`` (F, m, 3) the contact
    velocities without and with the impulses, ``active`` (F, m) bool."""
    from .. import body_pose, forward_kinematics
    F, m = len(run.t), len(names)
    out = {k: np.zeros((F, m, 3)) for k in ("point", "force", "v_before", "v_after")}
    out["active"] = np.zeros((F, m), dtype=bool)
    index = {name: j for j, name in enumerate(names)}
    for k in range(1, F):
        sol, used = run.solutions[k - 1], run.contacts[k - 1]
        if sol is None:
            continue
        h = run.t[k] - run.t[k - 1]
        X0 = forward_kinematics(model, run.q[k - 1])
        for c, P, vb, va in zip(used, sol.P, sol.v_before, sol.v_after):
            if c.name not in index:
                raise RbdlearnError(f"contact_frames: the run used a contact named "
                                    f"{c.name!r}, not among {list(names)}")
            j = index[c.name]
            R, o = body_pose(X0[c.body])
            out["point"][k, j] = o + R @ np.asarray(c.point, dtype=float)
            out["force"][k, j] = P / h
            out["v_before"][k, j], out["v_after"][k, j] = vb, va
            out["active"][k, j] = True
    return out


def contact_readout(t, names, frames, extra=None):
    """One read-out per frame of :func:`contact_frames`: the time, then for each contact
    in use its normal (z) and tangential force and its velocity before → after the
    impulse. ``extra``: a line per frame to add after the time (or None)."""
    lines = []
    for k, tk in enumerate(t):
        text = [f"t = {tk:.3f} s" + ("" if extra is None else f"  {extra[k]}")]
        for j, name in enumerate(names):
            if not frames["active"][k, j]:
                continue
            f, vb, va = (frames[key][k, j] for key in ("force", "v_before", "v_after"))
            text.append(f"{name}: P/h = {vec(f, 1)} N\n  v {vec(vb, 2)} → {vec(va, 2)} m/s")
        if len(text) == 1:
            text.append("no contact in use")
        lines.append("\n".join(text))
    return lines


# -------------------------------------------------------------------------------------
# §3's ABA on a real robot (:func:`talos_release_scene`): Talos hung by its pelvis, every
# joint limp, released under gravity and integrated by RK4 with the ABA.

TALOS_URDF = "talos_data/robots/talos_reduced.urdf"

#: The posture Talos is released from: joint name → angle (rad); every other joint at 0.
TALOS_START = {"arm_left_1_joint": 0.4, "arm_left_2_joint": 1.2, "arm_left_4_joint": -1.0,
               "arm_right_1_joint": -0.6, "arm_right_2_joint": -0.4,
               "arm_right_4_joint": -0.3, "leg_left_3_joint": -1.0,
               "leg_left_4_joint": 1.2, "leg_right_3_joint": 0.3}


def talos_model():
    """Talos (``talos_reduced.urdf``), its base fixed at the pelvis."""
    from .. import urdf
    return urdf.load(urdf.example_robot_path(TALOS_URDF))


def talos_start(model):
    """q of :data:`TALOS_START` for ``model`` (joints by name)."""
    q = np.zeros(model.nq)
    for name, angle in TALOS_START.items():
        q[model.q_slices[model.names.index(name)]] = angle
    return q


def talos_release(t_end=2.0, dt=0.002, every=10):
    """Talos released from rest at :func:`talos_start` with zero joint torques, its pelvis
    fixed: ``rbdlearn.simulate`` (RK4, the ABA) with steps ``dt`` to ``t_end``. Returns
    (model, the whole Trajectory, the frame indices kept: every ``every``-th state)."""
    from .. import simulate
    model = talos_model()
    run = simulate(model, talos_start(model), np.zeros(model.nv), t_end, dt)
    return model, run, np.arange(0, len(run.t), every)


# -------------------------------------------------------------------------------------
# The 3-D scenes of §3 and §6 (rbdlearn.viz.scene3d): poses from forward_kinematics of the
# runs' q, forces from contact_frames.

FORCE_COLOR, FLOOR_COLOR = "#d62728", "#c9d1da"


def contact_run_scene(title, model, shapes, runs, names, *, source=None, param=None,
                      force_scale=0.005, every=1, camera=None, floor=(2.0, 2.0)):
    """A 3-D scene of runs of :func:`rbdlearn.contact.simulate` (the same times each): the
    model's bodies drawn with ``shapes`` ({body: [shape]}), the floor z = 0 (a plate of
    ``floor`` metres), and at each contact of ``names`` an arrow for its force P/h
    (:func:`contact_frames`), ``force_scale`` metres per newton, ending at the contact
    point (the floor pushes from below). Every ``every``-th state is a frame; ``param``
    (label, values) picks among several runs with a slider. The read-out gives the forces
    and the contact velocities before and after each step's impulses."""
    from ..viz import scene3d as s3
    if param is None and len(runs) != 1:
        raise RbdlearnError(f"contact_run_scene: {len(runs)} runs need a param "
                            f"(label, values) to pick them")
    keep = np.arange(0, len(runs[0].t), every)
    t = runs[0].t[keep]
    scene = s3.Scene(title, scrub=("t (s)", t), camera=camera)
    scene.add_model(model, [run.q[keep] for run in runs], shapes, name=title,
                    source=source)
    plate = s3.shape("box", size=(*floor, 0.01), origin=[0, 0, -0.005, 1, 0, 0, 0],
                     color=FLOOR_COLOR, opacity=0.55)
    still = np.tile([0.0, 0, 0, 1, 0, 0, 0], (len(t), 1))
    scene.add_marker("floor", [plate], [still] * len(runs))
    frames = [{k: v[keep] for k, v in contact_frames(model, run, names).items()}
              for run in runs]
    for j, name in enumerate(names):
        arrows = [s3.arrow_poses(fr["point"][:, j] - force_scale * fr["force"][:, j],
                                 fr["force"][:, j], scale=force_scale) for fr in frames]
        for (_, sizes), fr in zip(arrows, frames):     # no force: nothing drawn, no head
            sizes[~np.any(fr["force"][:, j], axis=1)] = 0.0
        scene.add_marker(f"force at {name}", [s3.shape("arrow", radius=0.008,
                                                         color=FORCE_COLOR)],
                         [a[0] for a in arrows], scales=[a[1] for a in arrows])
    if param is not None:
        scene.set_param(param[0], list(param[1]), index=0)
    scene.set_readout([contact_readout(t, names, fr) for fr in frames])
    return scene


def box_shapes(size, color="#4c78a8"):
    """The shapes of :func:`rbdlearn.models.box`: one box on body 1, centred."""
    from ..viz import scene3d as s3
    return {1: [s3.shape("box", size=tuple(size), color=color)]}


def biped_shapes(thigh=0.45, shin=0.45, torso_length=0.5, color="#59a14f"):
    """The shapes of :func:`rbdlearn.models.planar_biped`: capsules for the torso (up from
    the hip) and the leg segments (down from their joints), spheres at hip and knees."""
    from ..viz import scene3d as s3

    def limb(length, r, up=False):
        z = length / 2 if up else -length / 2
        return s3.shape("capsule", radius=r, length=length - 2 * r,
                        origin=[0, 0, z, 1, 0, 0, 0], color=color)
    joint = s3.shape("sphere", radius=0.045, color="#333333")
    return {3: [limb(torso_length, 0.08, up=True), joint], 4: [limb(thigh, 0.035)],
            5: [limb(shin, 0.03), joint], 6: [limb(thigh, 0.035)],
            7: [limb(shin, 0.03), joint]}


def talos_release_scene(model, run, keep, cell=0.005):
    """Talos released under gravity (``model, run, keep`` from :func:`talos_release`) as a
    3-D scene: the visual meshes reduced at ``cell`` metres, the states ``keep`` as its
    frames, beside it the total energy minus its initial value (which RK4 keeps to its
    accuracy) and a read-out of time, energy and the fastest joint."""
    from .. import energy
    from ..viz import scene3d as s3
    shapes = s3.robot_shapes(model, TALOS_URDF, kind="visual", cell=cell)
    scene = s3.Scene("Talos released under gravity, pelvis fixed (ABA + RK4)",
                     scrub=("t (s)", run.t[keep]),
                     camera={"position": [1.6, -2.6, 0.3], "target": [0.0, 0.0, -0.2]})
    scene.add_model(model, run.q[keep], shapes, name="Talos",
                    source={"urdf": TALOS_URDF, "floating_base": False})
    E = energy(model, run.q[keep], run.qd[keep]) - energy(model, run.q[0], run.qd[0])
    scene.add_plot("energy − E(0) (J)", {"E − E(0)": E})
    speed = np.abs(run.qd[keep]).max(axis=1)
    scene.set_readout([f"t = {t:.2f} s   E − E(0) = {e:+.1e} J   fastest joint "
                       f"{s:.1f} rad/s" for t, e, s in zip(run.t[keep], E, speed)])
    return scene
