"""Explorer of Chapter 3 (§2): edit a tree's parent array and watch the inertia matrix H
fill body by body (:func:`crb_fill_explorer`); and §1's 3-D scene of the inertia felt at a
Panda's hand (:func:`panda_hand_scene`)."""

import ipywidgets as W
import numpy as np

from .. import crba
from ..crb import fill_owner
from ..models import tree_from_parents
from ..errors import RbdlearnError
from ..viz import draw_fill
from .core import Picture, control_layout, explorer_box, readout

__all__ = ["crb_fill_explorer", "parse_parents", "panda_model", "hand_inertia",
           "panda_postures", "panda_hand_grid", "felt_masses_3d", "acceleration_ellipsoid",
           "panda_hand_scene"]


def crb_fill_explorer(parents="0 1 2 1 4 4 3"):
    """Edit a tree's parent array and step through the bodies, watching H fill."""
    pic = Picture((8.0, 3.6))
    html = W.HTML()
    c = {"parents": W.Text(value=parents, description="λ(1..N)", continuous_update=False,
                           layout=control_layout()),
         "step": W.IntSlider(value=0, min=0, max=len(parse_parents(parents)), description="body",
                             layout=control_layout())}
    state = {"text": None}
    # the axes are kept from tree to tree (new axes cost a third of a redraw): a new tree
    # replaces what they hold
    ax_tree, ax_H = pic.fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.1]})

    def update():
        if c["parents"].value != state["text"]:            # a new tree (or a typo): redraw
            try:
                model = tree_from_parents(parse_parents(c["parents"].value))
            except ValueError as err:
                html.value = readout(err, error=True)
                return
            q = np.random.default_rng(1).uniform(-np.pi, np.pi, model.nq)
            owner = fill_owner(model)
            for ax in (ax_tree, ax_H):
                for artist in [*ax.lines, *ax.texts, *ax.patches, *ax.images]:
                    artist.remove()
                ax.ignore_existing_data_limits = True      # limits from the new tree only
            state.update(text=c["parents"].value, model=model, owner=owner,
                         show=draw_fill(ax_tree, ax_H, model, crba(model, q), owner))
            c["step"].max = model.N
        model, owner = state["model"], state["owner"]
        k = min(c["step"].value, model.N)
        state["show"](k)
        zeros = int((owner == 0).sum())
        html.value = readout(f"N = {model.N}, nv = {model.nv}: {zeros} of {model.nv ** 2} entries\n"
                      "are zero whatever q (white)\n"
                      + (f"body {k} fills the entries (j, {k}) and ({k}, j)\n"
                         f"for j on its path {model.ancestors(k)}" if k else
                         "move the slider to process bodies 1, 2, …"))
        pic.refresh()

    return explorer_box(pic, c, html, update,
                views={"step": list(range(8))})


# -------------------------------------------------------------------------------------
# The parent array typed into the explorer's text box (tested in tests/test_widgets.py).


def parse_parents(text):
    """The parent array λ(1..N) from text such as ``"0 1 1 2"`` or ``"0, 1, 1, 2"``."""
    try:
        parents = [int(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise RbdlearnError(f"parent array: expected whole numbers, got {text!r}") from None
    if not parents:
        raise RbdlearnError("parent array: give at least one body (e.g. '0 1 1')")
    return parents


# -------------------------------------------------------------------------------------
# §1's operational-space inertia on a real arm: the Panda's hand over a grid of postures
# (the 3-D scene :func:`panda_hand_scene`; its numbers tested in tests/test_scenes_ch23.py).

#: The Panda of example-robot-data, and the point between its fingertips (``panda_hand_tcp``)
#: in the frame of body 7 (panda_link7, which carries link8 and the hand through fixed joints).
PANDA_URDF = "panda_description/urdf/panda.urdf"
PANDA_TCP = np.array([0.0, 0.0, 0.107 + 0.1034])


def panda_model(payload=0.0):
    """The Panda (``urdf.load``, fingers as two independent sliders), with a point mass of
    ``payload`` kg held at the hand's point :data:`PANDA_TCP`."""
    from .. import urdf
    from ..spatial import mcI
    if not (np.isfinite(payload) and payload >= 0):
        raise RbdlearnError(f"payload must be a mass ≥ 0 kg, got {payload!r}")
    model = urdf.load(urdf.example_robot_path(PANDA_URDF), mimic=False)
    I = list(model.I)
    I[7] = I[7] + mcI(float(payload), PANDA_TCP, np.zeros((3, 3)))
    return model.replace(I=I)


def hand_inertia(model, q, body, point, joints):
    """Λ⁻¹ = J H⁻¹ Jᵀ at the point ``point`` of body ``body`` (world axes, 3 x 3), with
    only the joint velocities ``joints`` (indices) free to move, the others held still:
    H is the CRBA's H restricted to them, J the columns of the point's Jacobian. Returns
    the inverse of the operational-space inertia, which stays finite where Λ does not."""
    from .. import crba, point_jacobian
    H = crba(model, q)[np.ix_(joints, joints)]
    J = point_jacobian(model, q, body, point, frame="world")[:, joints]
    return J @ np.linalg.solve(H, J.T)


#: The joints that move in :func:`panda_hand_grid`: the arm's first four (wrist held) and
#: all seven (wrist free); the fingers are always held.
PANDA_ARM, PANDA_WRIST_FREE = list(range(4)), list(range(7))


def panda_postures(elbow):
    """Postures of the Panda with the elbow angle q₄ = ``elbow`` (F,) and the other joints
    fixed: the arm in the x–z plane (q₁ = q₃ = q₅ = 0), the shoulder leaning forward by
    0.3 rad, the hand pointing down the forearm's plane (q₆ = 1.5, q₇ = π/4), the fingers
    half open. Returns q (F, 9)."""
    elbow = np.asarray(elbow, dtype=float)
    q = np.zeros(elbow.shape + (9,))
    q[..., 1], q[..., 3], q[..., 5], q[..., 6] = 0.3, elbow, 1.5, np.pi / 4
    q[..., 7:] = 0.02
    return q


def panda_hand_grid(elbow, payloads):
    """The hand's operational-space inertia over the postures :func:`panda_postures` of
    the elbow angles ``elbow`` (F,), for each payload (R,): a dict with ``q`` (F, 9), the
    hand's point ``hand`` (F, 3), and per payload ``held`` and ``free`` (R, F, 3, 3): Λ⁻¹
    with the wrist held (joints 1–4 move) and free (joints 1–7 move)."""
    from .. import body_pose, forward_kinematics
    q = panda_postures(elbow)
    R, p = body_pose(forward_kinematics(panda_model(), q)[7])
    hand = p + R @ PANDA_TCP
    out = {"q": q, "hand": hand, "held": [], "free": []}
    for m in payloads:
        model = panda_model(m)
        for key, joints in (("held", PANDA_ARM), ("free", PANDA_WRIST_FREE)):
            out[key].append(np.array([hand_inertia(model, qk, 7, PANDA_TCP, joints)
                                      for qk in q]))
    out["held"], out["free"] = np.array(out["held"]), np.array(out["free"])
    return out


def felt_masses_3d(inverse_inertia):
    """The felt masses (..., 3), heaviest first, and their directions (..., 3, 3: column k
    for mass k) from Λ⁻¹ (..., 3, 3): the reciprocals of its eigenvalues."""
    w, V = np.linalg.eigh(inverse_inertia)           # ascending: the heavy direction first
    return 1.0 / w, V


#: The colours of the two ellipsoids of :func:`panda_hand_scene`.
HELD_COLOR, FREE_COLOR = "#1f77b4", "#ff7f0e"


def acceleration_ellipsoid(inverse_inertia, scale):
    """The matrix A of the ellipsoid {x : xᵀ A⁻¹ x ≤ 1} that holds the hand's accelerations
    Λ⁻¹ f for the pushes |f| ≤ 1 N, drawn ``scale`` metres per m/s²: A = (s Λ⁻¹)², whose
    semi-axes are s / m_k, s over the felt masses."""
    S = scale * np.asarray(inverse_inertia, dtype=float)
    return S @ S


def panda_hand_scene(elbow=None, payloads=(0.0, 1.0, 2.0, 3.0), scale=0.2):
    """The Panda over the postures :func:`panda_postures` of the elbow angles ``elbow``
    (the scrubber), with at its hand the acceleration ellipsoids
    (:func:`acceleration_ellipsoid`, ``scale`` m per m/s²) of Λ⁻¹ with the wrist held
    (blue) and free (orange); a slider for the payload in the hand (kg); the felt masses
    in the read-out and their reciprocals (the held ellipsoid's semi-axes) plotted."""
    from ..viz import scene3d as s3
    elbow = np.linspace(-2.8, -0.1, 28) if elbow is None else np.asarray(elbow, float)
    grid = panda_hand_grid(elbow, payloads)
    model = panda_model()
    scene = s3.Scene("Panda: the inertia felt at the hand",
                     scrub=("elbow q4 (rad)", elbow),
                     camera={"position": [0.75, -1.45, 0.75], "target": [0.3, 0.0, 0.4]})
    R = len(payloads)
    scene.add_model(model, [grid["q"]] * R,
                    s3.robot_shapes(model, PANDA_URDF, kind="collision"), name="Panda",
                    source={"urdf": PANDA_URDF, "floating_base": False})
    for key, color, what in (("held", HELD_COLOR, "wrist held"),
                             ("free", FREE_COLOR, "wrist free")):
        ell = [s3.ellipsoid_poses(grid["hand"], acceleration_ellipsoid(L, scale))
               for L in grid[key]]
        scene.add_marker(f"acceleration ellipsoid, {what}",
                         [s3.shape("sphere", radius=1.0, color=color, opacity=0.5)],
                         [e[0] for e in ell], scales=[e[1] for e in ell])
    masses = {key: felt_masses_3d(grid[key])[0] for key in ("held", "free")}
    scene.add_plot("wrist held: 1/m, the blue semi-axes ÷ s (m/s² per N)",
                   {f"1/m{k + 1}": list(1 / masses["held"][:, :, k]) for k in range(3)})
    scene.set_param("payload (kg)", list(payloads), index=0)
    scene.set_readout([[f"q4 = {q4:+.2f} rad, payload {m:g} kg\n"
                        f"wrist held: felt masses {_masses(masses['held'][r, k])} kg\n"
                        f"wrist free: felt masses {_masses(masses['free'][r, k])} kg"
                        for k, q4 in enumerate(elbow)] for r, m in enumerate(payloads)])
    return scene


def _masses(m):
    return ", ".join(f"{x:.3g}" for x in m)
