"""The human figure and the swing (Chapter 5, sections 3 "Changing the structure" and
5 "The swing breaks"; seed 004 §5.1, Fig. 14 and §5.2, Fig. 15).

:func:`human_figure` builds the 16-DOF figure of §5.1 on a floating torso — ball joints
at shoulders and hips, or the revolute triples of §4.5 — with segment masses, lengths
and inertias after Winter (2009) (:class:`HumanFigure`); :func:`figure_q` poses it,
:func:`figure_skeleton` draws it and :func:`figure_springs` holds a posture. :func:`swing`
seats it on the swing of §5.2: two rods, a board and five loops — a pseudo-closed chain
whose loops contain the figure's free joint (§4.2; :class:`Swing`).
"""

from dataclasses import dataclass

import numpy as np

from ..errors import RbdlearnError
from ..joints import Fixed, Free, Prismatic, Revolute, Spherical, zyx_angles
from ..kinematics import forward_kinematics
from ..model import GRAVITY, Model, check_state, integrate_q
from ..models import segment_inertia
from ..spatial import log_so3, mcI, plux, plux_parts, quat_to_rot, rot_to_quat, rotx
from .loops import Mechanism
from .structure import add_loop_at

__all__ = ["HumanFigure", "human_figure", "figure_q", "figure_skeleton", "figure_springs",
           "Swing", "swing"]


# ------------------------------------------------------- the human figure of §5 (Fig. 14)

# Segment parameters after Winter (2009), Table 4.1 and Fig. 4.1 (Drillis–Contini), rounded:
# mass as a fraction of body mass, length as a fraction of height, COM and radius of
# gyration about the COM as fractions of the segment length from its proximal joint.
# Upper arm; forearm + hand (length: elbow to wrist, the hand adds 0.108 H); thigh;
# shank + foot (length: knee to ankle).
_LIMBS = {"upper_arm": (0.028, 0.186, 0.436, 0.322), "forearm": (0.022, 0.146, 0.682, 0.468),
          "thigh": (0.100, 0.245, 0.433, 0.323), "shank": (0.061, 0.246, 0.606, 0.416)}
_TRUNK_MASS, _TRUNK, _SHOULDERS, _HIPS, _HAND = 0.578, 0.288, 0.259, 0.191, 0.108


@dataclass(frozen=True, eq=False)
class HumanFigure:
    """A 16-DOF human figure on a floating torso (§5.1): ``model`` (body 1 the torso,
    free joint at the hip centre), ``hands`` {"left"/"right": (body, point in body
    coordinates)}, ``limbs`` {name: (proximal body, distal body)} and the ``height`` and
    ``mass`` it was scaled to."""
    model: Model
    hands: dict
    limbs: dict
    height: float
    mass: float


def human_figure(height=1.75, mass=70.0, spherical=True, gravity=GRAVITY):
    """The human figure of §5.1: a floating torso (free joint) and four limbs of 4 DOF
    each — shoulder and hip a ball joint (``Spherical``; or, with ``spherical=False``,
    three revolute joints about z, y, x through two massless links), elbow and knee a
    revolute joint about the lateral axis. 22 velocities either way; 9 bodies with ball
    joints, 17 with revolute triples (§4.5).

    Torso frame: origin at the hip centre, x to the figure's left, y forward, z up;
    each limb hangs along −z at q = neutral. Masses, lengths, COMs and radii of
    gyration of the limbs from Winter (2009), Table 4.1; the trunk (with head and neck,
    57.8 % of the mass) is a uniform box 0.259 H wide, 0.1 H deep and 0.45 H high from
    the hips (chosen). The hands are points at the middle of the hand, 0.054 H beyond
    the wrist, where loops to a bar attach."""
    H, M = float(height), float(mass)
    if not (H > 0 and M > 0):
        raise RbdlearnError(f"human_figure needs a positive height and mass, got {height!r}, "
                            f"{mass!r}")
    w, d, h = _SHOULDERS * H, 0.1 * H, 0.45 * H
    m_t = _TRUNK_MASS * M
    trunk = mcI(m_t, np.array([0.0, 0.0, h / 2]),
                m_t / 12 * np.diag([d**2 + h**2, w**2 + h**2, w**2 + d**2]))
    parent, joints, Xtree, I = [-1, 0], [None, Free()], [None, np.eye(6)], [None, trunk]
    names, bodies = ["base", "torso_free"], ["ground", "torso"]
    limbs, hands, x_axis = {}, {}, [1.0, 0.0, 0.0]

    def add(p, joint, X, inertia, joint_name, body_name):
        parent.append(p)
        joints.append(joint)
        Xtree.append(X)
        I.append(inertia)
        names.append(joint_name)
        bodies.append(body_name)
        return len(parent) - 1

    for side, sign in (("left", 1.0), ("right", -1.0)):
        for limb, root, upper, lower in (("arm", [sign * w / 2, 0, _TRUNK * H], "upper_arm",
                                          "forearm"),
                                         ("leg", [sign * _HIPS * H / 2, 0, 0], "thigh",
                                          "shank")):
            s, joint = side[0], "shoulder" if limb == "arm" else "hip"
            m1, L1, c1, k1 = _LIMBS[upper]
            m2, L2, c2, k2 = _LIMBS[lower]
            X, p = plux(np.eye(3), root), 1
            if spherical:
                p = add(p, Spherical(), X, segment_inertia(m1 * M, [0.0, 0.0, -L1 * H], c1, k1),
                        f"{s}_{joint}", f"{s}_{upper}")
            else:
                for axis in "zy":
                    p = add(p, Revolute(np.eye(3)["xyz".index(axis)]), X, np.zeros((6, 6)),
                            f"{s}_{joint}_{axis}", f"{s}_{joint}_{axis}_link")
                    X = np.eye(6)
                p = add(p, Revolute(x_axis), X, segment_inertia(m1 * M, [0.0, 0.0, -L1 * H], c1, k1),
                        f"{s}_{joint}_x", f"{s}_{upper}")
            end = add(p, Revolute(x_axis), plux(np.eye(3), [0, 0, -L1 * H]),
                      segment_inertia(m2 * M, [0.0, 0.0, -L2 * H], c2, k2),
                      f"{s}_{'elbow' if limb == 'arm' else 'knee'}", f"{s}_{lower}")
            limbs[f"{s}_{limb}"] = (p, end)
            if limb == "arm":
                hands[side] = (end, np.array([0.0, 0.0, -(L2 + _HAND / 2) * H]))
    model = Model(parent=parent, joints=joints, Xtree=Xtree, I=I, names=names,
                  body_names=bodies, gravity=np.array(gravity))
    return HumanFigure(model, hands, limbs, H, M)


def figure_q(fig, position, R_torso, shoulders_hips=None, bends=None):
    """A configuration of :func:`human_figure` ``fig``: the torso's hip centre at
    ``position`` with orientation ``R_torso`` (torso → world), ``shoulders_hips``
    {limb name ("l_arm", "r_leg", …): rotation matrix of the upper segment relative to
    the torso}, ``bends`` {limb name: elbow / knee angle}; missing entries neutral."""
    model, shoulders_hips, bends = fig.model, shoulders_hips or {}, bends or {}
    for what in (shoulders_hips, bends):
        unknown = set(what) - set(fig.limbs)
        if unknown:
            raise RbdlearnError(f"unknown limb(s) {sorted(unknown)}; limbs: {sorted(fig.limbs)}")
    q = [np.asarray(position, dtype=float), rot_to_quat(np.asarray(R_torso, dtype=float))]
    for limb, (upper, lower) in fig.limbs.items():
        R = np.asarray(shoulders_hips.get(limb, np.eye(3)), dtype=float)
        if isinstance(model.joints[upper], Spherical):
            q.append(rot_to_quat(R))
        else:                                         # R = Rz(a) Ry(b) Rx(c)
            q.append(zyx_angles(R))
        q.append([bends.get(limb, 0.0)])
    return np.concatenate(q)


def figure_skeleton(fig, q):
    """World coordinates of the figure's stick drawing at q (q of the figure's own bodies
    first, as in every mechanism built on it): polylines (k x 3 arrays) — the shoulder
    line, the hip line, the spine with the head, and each limb from its root through the
    elbow / knee to the hand / ankle."""
    model, H = fig.model, fig.height
    X0 = forward_kinematics(model, np.asarray(q, dtype=float)[:model.nq])

    def world(i, p=(0.0, 0.0, 0.0)):
        E, o = plux_parts(X0[i])                      # E rotates world into body coords
        return o + E.T @ np.asarray(p, dtype=float)

    top = world(1, [0, 0, _TRUNK * H])
    lines = [np.array([world(fig.limbs["l_arm"][0]), top, world(fig.limbs["r_arm"][0])]),
             np.array([world(fig.limbs["l_leg"][0]), world(1), world(fig.limbs["r_leg"][0])]),
             np.array([world(1), top, world(1, [0, 0, 0.45 * H])])]
    for limb, (upper, lower) in fig.limbs.items():
        end = (fig.hands["left" if limb[0] == "l" else "right"][1] if limb.endswith("arm")
               else [0.0, 0.0, -_LIMBS["shank"][1] * H])
        lines.append(np.array([world(upper), world(lower), world(lower, end)]))
    return lines


def figure_springs(fig, q_ref, k_arm=120.0, k_leg=80.0):
    """Passive joints collapse; these springs stand in for the muscles that hold a posture.
    Each limb joint is pulled towards its value in ``q_ref``: a ball joint by the couple
    −k φ, φ = log(R_refᵀ R) (the exact gradient of ``½ k |φ|²``, so the springs conserve
    energy), a revolute joint by −k (θ − θ_ref); ``k_arm`` for shoulders and elbows,
    ``k_leg`` for hips and knees [N m/rad]. Returns (tau(t, q, q̇), potential(q)); both
    read only the figure's own coordinates, so they serve every mechanism built on it."""
    model = fig.model
    (q_ref,) = check_state(model, q=np.asarray(q_ref, dtype=float)[:model.nq])
    springs = []                                      # (body, stiffness) of every limb joint
    for limb, (upper, lower) in fig.limbs.items():
        k = k_arm if limb.endswith("arm") else k_leg
        first = upper if isinstance(model.joints[upper], Spherical) else upper - 2
        springs += [(i, k) for i in range(first, lower + 1)]

    def error(i, q):
        qs = q[model.q_slices[i]]
        if isinstance(model.joints[i], Spherical):
            return log_so3(quat_to_rot(q_ref[model.q_slices[i]]).T @ quat_to_rot(qs))
        return qs - q_ref[model.q_slices[i]]

    def tau(t, q, qd):
        out = np.zeros(len(qd))
        for i, k in springs:
            out[model.v_slices[i]] = -k * error(i, q)
        return out

    def potential(q):
        return sum(0.5 * k * float(error(i, q) @ error(i, q)) for i, k in springs)

    return tau, potential


# ---------------------------------------------------------- the swing of §5.2 (Fig. 15)

@dataclass(frozen=True, eq=False)
class Swing:
    """The swing of §5.2 with :func:`human_figure` ``fig`` on it: ``mech`` (loops "board-left",
    "left hand", "right hand", "l thigh", "r thigh") at the assembled configuration ``q``,
    ``bodies`` {"right rod", "board", "left rod": body index}, the board's half-length
    ``half`` and ``start`` {thigh loop: the x of its contact point on the board at q = 0 of
    the slide}."""
    mech: Mechanism
    q: np.ndarray
    bodies: dict
    half: float
    start: dict

    def thigh_x(self, mech, q, name):
        """Where the thigh of loop ``name`` touches the board, along the board [m]."""
        return self.start[name] + q[mech.model.q_slices[mech.loop(name).virtual]][0]


def swing(fig, top=2.0, rod_mass=2.0, board=(3.0, 0.6, 0.25, 0.03), angle=0.6):
    """The swing of §5.2, Fig. 15, with the figure ``fig`` (:func:`human_figure`) seated on it:
    two rods hung from the ground by ball joints at height ``top`` in front of the figure's
    shoulders, a board (mass, length, depth, thickness) welded to the bottom of both rods,
    each hand holding a rod by a ball joint and each thigh on the board by a prismatic
    joint along the board. The figure sits upright (thighs forward, knees bent 90°, forearms
    forward); the board lies along x under the thighs, the rods through the hands. The
    whole swing is turned by ``angle`` about the line through the pivots, at rest.

    The virtual open chain: the figure's tree, then the right rod (ball joint to the
    ground), the board (welded to it) and the left rod (ball joint); the board's weld to
    the left rod, the hands and the thighs are loops — a pseudo-closed chain whose loops
    contain the figure's free joint (§4.2)."""
    mb, length, depth, thick = (float(b) for b in board)
    if not (rod_mass > 0 and min(mb, length, depth, thick) > 0):
        raise RbdlearnError(f"swing needs a positive rod mass and board (mass, length, depth, "
                            f"thickness), got {rod_mass!r}, {board!r}")
    fm, H = fig.model, fig.height
    sit = {"l_leg": rotx(np.pi / 2), "r_leg": rotx(np.pi / 2)}
    bends = {"l_arm": np.pi / 2, "r_arm": np.pi / 2, "l_leg": -np.pi / 2, "r_leg": -np.pi / 2}
    q = figure_q(fig, np.zeros(3), np.eye(3), sit, bends)
    X0 = forward_kinematics(fm, q)

    def world(i, p):                                  # a point of body i, world coordinates
        E, o = plux_parts(X0[i])
        return o + E.T @ p

    hand = {s: world(*fig.hands[s]) for s in ("left", "right")}
    y, seat = hand["left"][1], -0.04 * H              # the rods' plane; the board's top
    if not top > seat + 0.1:
        raise RbdlearnError(f"swing: the pivots (top = {top!r}) must be above the "
                            f"seat ({seat:.2f})")
    L = top - seat
    rod = segment_inertia(rod_mass, [0.0, 0.0, -L], 0.5, 12 ** -0.5, axial=0.01)
    slab = mcI(mb, np.array([0.0, 0.0, -thick / 2]),
               mb / 12 * np.diag([depth**2 + thick**2, length**2 + thick**2,
                                  length**2 + depth**2]))
    xr, xl = hand["right"][0], hand["left"][0]
    extra = [(0, Spherical(), [xr, y, top], rod, "right_pivot", "right_rod"),
             (fm.N + 1, Fixed(), [(xl + xr) / 2 - xr, 0.0, -L], slab, "board_weld", "board"),
             (0, Spherical(), [xl, y, top], rod, "left_pivot", "left_rod")]
    model = fm.replace(parent=fm.parent + [e[0] for e in extra],
                       joints=fm.joints + [e[1] for e in extra],
                       Xtree=fm.Xtree + [plux(np.eye(3), e[2]) for e in extra],
                       I=fm.I + [e[3] for e in extra], names=fm.names + [e[4] for e in extra],
                       body_names=fm.body_names + [e[5] for e in extra])
    right_rod, board_body, left_rod = fm.N + 1, fm.N + 2, fm.N + 3
    q = np.concatenate([q, np.tile(Spherical().neutral(), 2)])
    X0 = forward_kinematics(model, q)

    def at(i, p_world):                               # a world point as a frame on body i
        E, o = plux_parts(X0[i])
        return plux(np.eye(3), E @ (np.asarray(p_world) - o))

    board_centre = np.array([(xl + xr) / 2, y, seat])
    mech, q = add_loop_at(Mechanism(model), q, left_rod, board_body, Fixed(),
                          at(board_body, [xl, y, seat]), "board-left")
    for side, r in (("left", left_rod), ("right", right_rod)):
        mech, q = add_loop_at(mech, q, fig.hands[side][0], r, Spherical(), at(r, hand[side]),
                              f"{side} hand")
    start = {}
    for s in ("l", "r"):
        thigh = fig.limbs[f"{s}_leg"][0]
        contact = np.array([world(thigh, np.zeros(3))[0], y, seat])   # under the thigh
        mech, q = add_loop_at(mech, q, board_body, thigh, Prismatic([1.0, 0.0, 0.0]),
                              at(thigh, contact), f"{s} thigh")
        start[f"{s} thigh"] = contact[0] - board_centre[0]
    # turn everything rigidly about the pivots' axis (x through (0, y, top)): the rods'
    # ball joints and the torso's free joint move, every other joint keeps its value
    m = mech.model
    v = np.zeros(m.nv)
    for r in (left_rod, right_rod):
        v[m.v_slices[r]] = [1.0, 0.0, 0.0]
    v[m.v_slices[1]] = forward_kinematics(m, q)[1] @ np.r_[1.0, 0.0, 0.0,
                                                            np.cross([0.0, y, top], [1, 0, 0])]
    q = integrate_q(m, q, angle * v)
    return Swing(mech, q, {"right rod": right_rod, "board": board_body, "left rod": left_rod},
                 length / 2, start)
