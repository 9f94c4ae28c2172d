"""Explorers of Chapter 5 (closed chains): the four-bar assembled as its crank turns, with
the conditioning of each split (§1, :func:`four_bar_explorer`), and a human figure
letting go of a bar (§3, :func:`bar_release_explorer`). 3-D scenes: the human figure of
Fig. 13 with ball joints beside revolute triples (§4, :func:`figure13_scene`, from
:func:`posture_path` and :func:`as_revolute_triples`) and the swing breaking, its cuts and
connections shown (§5, :func:`swing_scene`, from :func:`swing_frames` and
:func:`real_bodies`)."""

import ipywidgets as W
import numpy as np

from .. import viz
from ..closed_chains import (FOUR_BAR_JOINTS, assemble, choose_split, figure_q,
                             figure_skeleton, four_bar, four_bar_sweep, loop_residual,
                             reduction)
from ..errors import RbdlearnError
from ..joints import Free, Revolute, Spherical, zyx_angles
from ..kinematics import body_pose, forward_kinematics
from ..model import neutral_q
from ..spatial import exp_so3, log_so3, plux_parts, quat_to_rot, rot_to_quat
from ..viz import draw_figure_views
from ..viz import scene3d as s3
from ..viz.shapes3d import FIGURE, box_of_inertia, tree_shapes
from .core import Picture, control_layout, explorer_box, grid_values, readout, slider, vec

__all__ = ["four_bar_explorer", "bar_release_explorer", "swing_frames", "real_bodies",
           "swing_scene", "posture_path", "as_revolute_triples", "figure13_scene"]


def four_bar_explorer(mech=None, n_sweep=121):
    """The four-bar of ``closed_chains.four_bar`` (default geometry) with a slider for
    the crank angle: each move assembles the loop (Newton on θ_S, crank held), draws
    the linkage, and shows the pivoted split, H = −J_S⁻¹ J_G and cond(J_S) for every
    choice of θ_G — also as curves over a full turn of the crank, with the current angle
    marked."""
    mech = four_bar() if mech is None else mech
    angles = np.linspace(0.0, 2 * np.pi, n_sweep)
    sweep = four_bar_sweep(mech, angles)
    pic = Picture((8.2, 3.6))
    ax, bx = pic.fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.15]})
    ax.set(xlim=(-1.3, 3.3), ylim=(-1.6, 2.4), xlabel="y [m]", ylabel="z [m]",
           title="four-bar, assembled")
    draw = viz.draw_linkage(ax, mech, sweep["q"][0])
    for k, name in enumerate(FOUR_BAR_JOINTS):
        bx.semilogy(angles, np.minimum(sweep["cond"][:, k], 1e5), color=f"C{k}", lw=1.2,
                    label=f"θ_G = {name}")
    bx.semilogy(angles, sweep["cond_pivoted"], "k--", lw=2, label="pivoted")
    bx.set(ylim=(1, 1e4), xlim=(0, 2 * np.pi), xlabel="crank angle [rad]",
           ylabel="cond($J_S$)", title="conditioning of each split")
    marker = bx.axvline(0.0, color="k", lw=0.8)
    bx.legend(fontsize=8.5, loc="upper right", ncol=2)
    pic.fig.tight_layout()
    # blitting: the axes, curves and legend are drawn once; a move redraws only the
    # linkage and the marker onto a copy of that background and encodes the pixels
    moving = sorted(ax.lines, key=lambda artist: artist.get_zorder()) + [marker]
    for artist in moving:
        artist.set_animated(True)
    canvas = pic.fig.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(pic.fig.bbox)

    def blit():
        canvas.restore_region(background)
        for artist in moving:
            artist.axes.draw_artist(artist)
    c = {"crank": slider("crank", 1.0, 0.0, 2 * np.pi)}
    html = W.HTML()
    crank_split = choose_split(mech, sweep["q"][0], independent=[0])
    state = {"q": sweep["q"][0]}

    def update():
        a = c["crank"].value
        nearest = sweep["q"][np.argmin(np.abs(angles - a))]      # same branch as the sweep
        q = assemble(mech, np.r_[a, nearest[1:]], crank_split)
        state["q"] = q
        split = choose_split(mech, q)
        r = reduction(mech, q, split=split)
        JCm = r.JC[list(split.rows)]
        conds = [np.linalg.cond(np.delete(JCm, k, axis=1)) for k in range(4)]
        draw(q)
        marker.set_xdata([a, a])
        pic.refresh(blit)
        names = [FOUR_BAR_JOINTS[k] for k in split.S]
        html.value = readout(
            f"θ_J = {vec(np.angle(np.exp(1j * q)))} rad (wrapped)\n\n"
            f"pivoted split: θ_G = {FOUR_BAR_JOINTS[split.G[0]]}\n"
            f"  θ_S = {', '.join(names)}\n  H = −J_S⁻¹J_G = {vec(r.H[:, 0])}\n\n"
            "cond(J_S) with θ_G =\n" + "\n".join(
                f"  {n:8s}{x:10.3g}" for n, x in zip(FOUR_BAR_JOINTS, conds))
            + f"\n  pivoted {np.linalg.cond(r.JS):10.3g}")

    box = explorer_box(pic, c, html, update,
               views={"crank": grid_values(0.0, 6.25, 0.25)})
    box.sweep, box.state = sweep, state
    return box


def bar_release_explorer(runs, bar_height):
    """Widget for §5.1: a figure hangs from a bar by both hands and lets go with the right
    hand. ``runs`` {release time: (t, skeletons, energy)} is computed beforehand (one
    simulation per release time); the sliders pick the release time and the time t, and
    the callback only moves the drawn lines."""
    pic = Picture((6.4, 3.4), dpi=72)
    axes = pic.fig.subplots(1, 2)
    draw = draw_figure_views(axes, bar_height)
    pic.fig.tight_layout()
    releases = sorted(runs)
    t_max = min(runs[r][0][-1] for r in releases)
    c = {"release": W.SelectionSlider(options=[(f"{r:.2f} s", r) for r in releases],
                                      value=releases[len(releases) // 2],
                                      description="release", layout=control_layout()),
         "t": slider("t [s]", 0.0, 0.0, float(t_max), step=0.025)}
    html = W.HTML()

    def update():
        t, skeletons, E = runs[c["release"].value]
        k = int(np.argmin(np.abs(t - c["t"].value)))
        draw(skeletons[k])
        pic.refresh()
        phase = "both hands" if t[k] < c["release"].value - 1e-9 else "left hand only"
        html.value = readout(f"t = {t[k]:.3f} s   ({phase})\n"
                      f"energy (mechanical + springs) = {E[k]:.2f} J\n"
                      f"change since t = 0            = {E[k] - E[0]:+.3f} J")

    return explorer_box(pic, c, html, update,
                views={"release": releases, "t": grid_values(0.0, float(t_max), t_max / 12)})


# ------------------------------------------------------------------ the 3-D scenes
def swing_frames(phases, step=0.02):
    """A closed chain's run (the swing of §5.2) at times 0, ``step``, 2 ``step``, … as a
    3-D scene draws it. ``phases``: the run as the chapter records it, a list of dicts with the
    mechanism ``mech``, times ``t``, configurations ``Q`` and a ``label``, one per
    structure (each later mechanism is the earlier one with loops cut). Each frame is
    the recorded state nearest its time, in the phase that holds it. Returns a dict:

    - ``t`` (F,), ``label`` (F strings), ``NF`` (F,): the time, phase and N_F;
    - ``q`` (F, nq): the configuration of the real bodies (the figure, rods, board: the
      first bodies of every phase's model, so the same coordinates in every phase);
    - ``residual`` (F,): the loop-closure error, the largest |loop_residual| of the
      loops still closed;
    - ``loops``: {loop name (every loop of the first phase): dict of ``closed`` (F,)
      bool, ``joint`` (F, 3) the cut joint (the virtual link's origin; the real frame's
      origin once cut), ``real`` (F, 3) the real frame's origin on the real link and
      ``anchor`` (F, 3) the real link's origin}.
    """
    first = phases[0]["mech"]
    n_real = min(lp.virtual for lp in first.loops) - 1      # virtual links come last
    nq = first.model.q_slices[n_real].stop
    t_end = phases[-1]["t"][-1]
    out = {"t": [], "label": [], "NF": [], "q": [], "residual": [],
           "loops": {lp.name: {k: [] for k in ("closed", "joint", "real", "anchor")}
                     for lp in first.loops}}
    for s in np.arange(0.0, t_end + 1e-9, step):
        ph = next(p for p in phases if s <= p["t"][-1] + 1e-9)
        j = int(np.argmin(np.abs(np.asarray(ph["t"]) - s)))
        mech, q = ph["mech"], np.asarray(ph["Q"][j], dtype=float)
        X0 = forward_kinematics(mech.model, q)
        out["t"].append(float(ph["t"][j]))
        out["label"].append(ph["label"])
        out["NF"].append(ph.get("NF"))
        out["q"].append(q[:nq])
        out["residual"].append(float(np.abs(loop_residual(mech, q)).max(initial=0.0)))
        closed = {lp.name: lp for lp in mech.loops}
        for lp in first.loops:
            rec = out["loops"][lp.name]
            real = body_pose(lp.Xreal @ X0[lp.real])[1]    # real bodies keep their index
            rec["closed"].append(lp.name in closed)
            rec["joint"].append(body_pose(X0[closed[lp.name].virtual])[1]
                                if lp.name in closed else real)
            rec["real"].append(real)
            rec["anchor"].append(body_pose(X0[lp.real])[1])
    for key in ("t", "NF", "q", "residual"):
        out[key] = np.array(out[key])
    for rec in out["loops"].values():
        for key in rec:
            rec[key] = np.array(rec[key])
    return out



def real_bodies(mech):
    """The model of a mechanism's real bodies: its virtual open chain without the virtual
    links (the last bodies of a mechanism built by ``add_loop``/``add_loop_at``), so
    q[:nq] of every phase of a run poses it."""
    n = min((lp.virtual for lp in mech.loops), default=mech.model.N + 1) - 1
    m = mech.model
    return m.replace(**{key: list(getattr(m, key))[:n + 1]
                        for key in ("parent", "joints", "Xtree", "I", "names", "body_names")})


def swing_scene(swing, figure, phases, step=0.02):
    """The swing of §5.2 in 3-D along the chapter's run ``phases`` (as for
    :func:`swing_frames`, which gives the frames, every ``step`` s): the figure and the
    rods as capsules, the trunk and the board as the uniform boxes of their inertias
    (:func:`~rbdlearn.viz.shapes3d.tree_shapes`); each loop's cut joint as an orange sphere and
    its connection to the real link as a green segment (from the cut joint to the real
    link's origin: a rod's pivot, a hip, the board's centre) while the loop is closed;
    once it is cut, a grey sphere where the loop held the real link. A plot of N_F and
    a readout per frame: time, phase, N_F and the loop-closure error. Returns ``(scene,
    frames)``."""
    fr = swing_frames(phases, step)
    model = real_bodies(phases[0]["mech"])
    board, right, left = (swing.bodies[k] for k in ("board", "right rod", "left rod"))
    # the figure's forearms and shanks end at the hands and the ankles, the rods at the
    # board's height (the board's weld to the right rod)
    q = figure_q(figure, np.zeros(3), np.eye(3))
    X0 = forward_kinematics(figure.model, q)
    tips = {}
    for line, (upper, lower) in zip(figure_skeleton(figure, q)[3:], figure.limbs.values()):
        R, p = body_pose(X0[lower])
        tips[lower] = R.T @ (line[-1] - p)
    tips[left] = tips[right] = plux_parts(model.Xtree[board])[1] * [0.0, 0.0, 1.0]
    shapes = tree_shapes(model, tips, boxes=(model.body_names[board],),
                         tip_only=(left, right))
    # the trunk: its inertia's box (head and neck included) drawn up to the shoulders,
    # and the head a sphere at the top of that box
    (w, d, h), _ = box_of_inertia(model.I[1])
    shoulder = plux_parts(model.Xtree[figure.limbs["l_arm"][0]])[1][2]
    r = 0.4 * (h - shoulder)
    shapes[1] = [s3.shape("box", size=(w, d, shoulder), color=FIGURE,
                          origin=[0, 0, shoulder / 2, 1, 0, 0, 0]),
                 s3.shape("sphere", radius=r, origin=[0, 0, h - r, 1, 0, 0, 0], color=FIGURE)]
    for i in (right, left):
        for shape in shapes[i]:
            shape["color"] = "#8c8c8c"
    for shape in shapes[board]:
        shape["color"] = "#8b4513"
    scene = s3.Scene("The swing of §5.2 breaking", scrub=("t (s)", fr["t"]),
                     camera={"position": [2.4, 3.4, 1.5], "target": [0.0, 0.6, 0.8]})
    scene.add_model(model, fr["q"], shapes, name="swing and figure", source=None)
    F = len(fr["t"])
    unit = np.tile([1.0, 0.0, 0.0, 0.0], (F, 1))
    hidden = 1e-3                       # a marker not shown: scaled to a thousandth
    for name, loop in fr["loops"].items():
        on = np.where(loop["closed"], 1.0, hidden)[:, None] * np.ones(3)
        scene.add_marker(f"cut joint: {name}", [s3.shape("sphere", radius=0.06,
                                                         color="#ff7f0e")],
                         np.column_stack([loop["joint"], unit]), on)
        poses, scales = s3.segment_poses(loop["anchor"], loop["joint"])
        scene.add_marker(f"connection: {name}", [s3.shape("cylinder", radius=0.022, length=1.0,
                                                          color="#2ca02c")],
                         poses, scales * np.where(loop["closed"], 1.0, hidden)[:, None])
        scene.add_marker(f"cut: {name}", [s3.shape("sphere", radius=0.045, color="#7f7f7f")],
                         np.column_stack([loop["real"], unit]),
                         np.where(loop["closed"], hidden, 1.0)[:, None] * np.ones(3))
    scene.add_plot("degrees of freedom N_F", {"N_F": fr["NF"].astype(float)})
    scene.set_readout([f"t = {t:.2f} s   {label}   N_F = {nf}   loop-closure error "
                       f"{res:.1e}" for t, label, nf, res in
                       zip(fr["t"], fr["label"], fr["NF"], fr["residual"])])
    return scene, fr


def posture_path(model, q1, n):
    """``n`` configurations of a tree of free, ball and revolute joints from its neutral
    configuration (s = 0) to ``q1`` (s = 1): every ball joint (and the free joint's
    orientation) turned by s times the rotation vector of its turn in ``q1``
    (``exp(s log R)``), the free joint's position and the revolute angles moved
    linearly. Returns ``(s, Q)``, (n,) and (n, nq)."""
    q0, q1 = neutral_q(model), np.asarray(q1, dtype=float)
    s = np.linspace(0.0, 1.0, n)
    Q = np.tile(q0, (n, 1))
    for i in range(1, model.N + 1):
        joint, sl = model.joints[i], model.q_slices[i]
        if isinstance(joint, (Spherical, Free)):
            quat = slice(sl.stop - 4, sl.stop)
            w = log_so3(quat_to_rot(q1[quat]))
            Q[:, quat] = [rot_to_quat(exp_so3(x * w)) for x in s]
            if isinstance(joint, Free):
                Q[:, sl.start:sl.start + 3] = np.outer(s, q1[sl.start:sl.start + 3])
        elif isinstance(joint, Revolute):
            Q[:, sl] = np.outer(s, q1[sl])
        else:
            raise RbdlearnError(f"posture_path handles free, ball and revolute joints; joint "
                                f"{i} ({model.names[i]}) is {type(joint).__name__}")
    return s, Q


def as_revolute_triples(model, triples, q):
    """The configuration of ``triples`` (the same tree with every ball joint made of
    revolute joints about z, y, x: ``human_figure_40(spherical=False)``) that puts every
    body of ``model`` (ball joints) where ``q`` puts it: the free joint copied, each ball
    joint's rotation as its ZYX angles, each revolute angle copied. ``q`` (nq,) or
    (F, nq)."""
    q = np.asarray(q, dtype=float)
    if q.ndim == 2:
        return np.array([as_revolute_triples(model, triples, x) for x in q])
    out = neutral_q(triples)
    for i in range(1, model.N + 1):
        joint, name, qi = model.joints[i], model.names[i], q[model.q_slices[i]]
        if isinstance(joint, Spherical):
            for axis, angle in zip("zyx", zyx_angles(quat_to_rot(qi))):
                out[triples.q_slices[triples.names.index(f"{name}_{axis}")]] = angle
        else:
            out[triples.q_slices[triples.names.index(name)]] = qi
    return out


def figure13_scene(model, triples, tips, q_pose, n=21, apart=0.9):
    """The human figure of Fig. 13 in 3-D: ``model`` (``human_figure_40()``: 12 ball
    joints, 4 revolute, 17 links) and, ``apart`` metres to its right (−x), ``triples``
    (the same figure with revolute triples, 41 links), both moving from the pose
    ``q_pose`` of ``model`` to standing in ``n`` postures (:func:`posture_path`,
    :func:`as_revolute_triples`, in reverse: s from 1 to 0, which the viewer plays at ten
    postures a second), feet on the ground when standing. Segments are
    capsules as heavy as water, pelvis and chest the boxes of their inertias; white
    spheres mark ball joints, dark cylinders revolute joints along their axes (three per
    ball joint on the figure to the right). A readout per posture gives the largest
    distance between a body of one figure and its twin in the other. Returns ``(scene,
    s, Q, Q_triples)``."""
    s, Q = posture_path(model, q_pose, n)
    s, Q = s[::-1], Q[::-1].copy()   # from the pose to standing: the pose is the still
    Qt = as_revolute_triples(model, triples, Q)
    X0 = forward_kinematics(model, Q[-1])
    lift = -min((body_pose(X0[i])[1] + body_pose(X0[i])[0] @ t)[2] for i, t in tips.items())
    free = model.q_slices[1].start                     # the free joint: its position first
    Q[:, free + 2] += lift
    shift = np.array([-apart, 0.0, 0.0])
    Qt[:, free:free + 3] = Q[:, free:free + 3] + shift
    scene = s3.Scene("The human figure of Fig. 13", scrub=("posture s", s),
                     camera={"position": [1.0, 3.4, 1.5], "target": [-apart / 2, 0.0, 0.85]})
    boxes = ("pelvis", "chest")
    scene.add_model(model, Q, tree_shapes(model, tips, boxes=boxes, joints=True),
                    name="Fig. 13, ball joints", source={
                        "factory": "rbdlearn.models.human_figure_40", "kwargs": {}})
    tips_t = {triples.body_names.index(model.body_names[i]): t for i, t in tips.items()}
    scene.add_model(triples, Qt, tree_shapes(triples, tips_t, boxes=boxes, joints=True),
                    name="Fig. 13, revolute triples", source={
                        "factory": "rbdlearn.models.human_figure_40",
                        "kwargs": {"spherical": False}})
    gap = []
    for q, qt in zip(Q, Qt):
        A, B = forward_kinematics(model, q), forward_kinematics(triples, qt)
        gap.append(max(np.abs(body_pose(A[i])[1] + shift - body_pose(
            B[triples.body_names.index(model.body_names[i])])[1]).max()
            for i in range(1, model.N + 1)))
    scene.set_readout([f"s = {x:.2f}   left: {model.N} links, 12 ball + 4 revolute joints;"
                       f" right: {triples.N} links, 40 revolute joints; largest distance "
                       f"between twin bodies {g:.0e} m" for x, g in zip(s, gap)])
    return scene, s, Q, Qt
