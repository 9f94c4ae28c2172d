"""Example models: for the contact section (chapter 2, §6) a box on a free joint and a
small planar biped; for chapter 5 the 40-DOF human figure of seed 004's Fig. 13.
(The earlier chapters' examples live beside their algorithms: ``planar_chain`` in
model.py, the arm on a floor in constrained.py, the 16-DOF figure of §5.1 in
closed_chains/human.py.)"""

import numpy as np

from .errors import RbdlearnError
from .joints import Free, Prismatic, Revolute, Spherical
from .model import Model, floating_base, planar_chain, random_q, random_tree
from .spatial import mcI, plux

__all__ = ["box", "planar_biped", "biped_posture", "human_figure_40", "segment_inertia",
           "with_payload", "with_point_mass", "small_trees", "tree_from_parents"]


def box(mass=2.0, size=(0.6, 0.4, 0.2)):
    """A uniform box of ``mass`` and edge lengths ``size`` (x, y, z) on a free joint,
    its body frame at the centre. Returns ``(model, corners)``, the four lower corners
    (z = −size_z/2) in body coordinates."""
    a, b, c = (float(s) for s in size)
    if not (mass > 0 and min(a, b, c) > 0):
        raise RbdlearnError(f"box needs mass > 0 and positive sizes, got {mass!r}, {size!r}")
    inertia = mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    model = Model(parent=[-1, 0], joints=[None, Free()], Xtree=[None, np.eye(6)],
                  I=[None, mcI(mass, np.zeros(3), inertia)], names=["base", "box_joint"],
                  body_names=["ground", "box"])
    corners = [np.array([sx * a / 2, sy * b / 2, -c / 2]) for sx in (-1, 1) for sy in (-1, 1)]
    return model, corners


def _rod(mass, length):
    """A rod hanging along −z from its joint: centre of mass at −l/2."""
    I_c = mass * length ** 2 / 12
    return mcI(mass, np.array([0.0, 0.0, -length / 2]), np.diag([I_c, I_c, 1e-4 * I_c]))


def planar_biped(torso_mass=10.0, thigh=(1.5, 0.45), shin=(1.0, 0.45), torso_length=0.5):
    """A biped in the y-z plane: the torso (body 3) moves by two massless sliders along
    y and z (bodies 1, 2) and turns about x; two legs (thigh, shin: (mass, length))
    hang from the hip at the torso's origin: bodies 4, 5 (left), 6, 7 (right), joints
    about x. q = [y, z, torso angle, hip L, knee L, hip R, knee R]; at q = 0 the legs
    hang straight down and the torso points up. Returns ``(model, feet)``: the foot
    points [(body, point)] at the shins' ends. The y slider's joint force is a
    horizontal force on the torso at the hip."""
    x, y, z = np.eye(3)
    m_t, L_t = torso_mass, torso_length
    torso = mcI(m_t, np.array([0, 0, L_t / 2]), np.diag([m_t * L_t ** 2 / 12] * 2 + [0.01]))
    knee = plux(np.eye(3), [0.0, 0.0, -thigh[1]])
    model = Model(parent=[-1, 0, 1, 2, 3, 4, 3, 6],
                  joints=[None, Prismatic(y), Prismatic(z), Revolute(x), Revolute(x),
                          Revolute(x), Revolute(x), Revolute(x)],
                  Xtree=[None, np.eye(6), np.eye(6), np.eye(6), np.eye(6), knee,
                         np.eye(6), knee],
                  I=[None, np.zeros((6, 6)), np.zeros((6, 6)), torso, _rod(*thigh),
                     _rod(*shin), _rod(*thigh), _rod(*shin)],
                  names=["base", "slide_y", "slide_z", "torso", "hip_L", "knee_L", "hip_R",
                         "knee_R"],
                  body_names=["ground", "carriage_y", "carriage_z", "torso", "thigh_L",
                              "shin_L", "thigh_R", "shin_R"])
    foot = np.array([0.0, 0.0, -shin[1]])
    return model, [(5, foot), (7, foot)]


def biped_posture(spread=0.35, knee=0.3, thigh=0.45, shin=0.45):
    """The standing posture of :func:`planar_biped` with the feet on z = 0: hips at
    ±``spread`` rad, knees bent by ``knee`` rad (inwards), torso upright, the hip
    above the middle of the feet."""
    hip_L, knee_L, hip_R, knee_R = spread, -knee, -spread, knee
    height = thigh * np.cos(spread) + shin * np.cos(spread - knee)
    return np.array([0.0, height, 0.0, hip_L, knee_L, hip_R, knee_R])


# ------------------------------------------------ the human figure of seed 004, Fig. 13

def segment_inertia(m, vec, com, gyration, axial=0.1):
    """A limb segment of mass m running from its proximal joint along ``vec`` (length
    ``L = |vec|``): centre of mass at ``com`` · vec, radius of gyration about the COM
    ``gyration`` · L across the segment and ``axial`` · L along it."""
    vec = np.asarray(vec, dtype=float)
    L = np.linalg.norm(vec) if vec.shape == (3,) else 0.0
    if not (np.isfinite(L) and L > 0):
        raise RbdlearnError(f"segment_inertia: vec must be a non-zero finite 3-vector, got {vec!r}")
    u = vec / L
    along = np.outer(u, u)
    return mcI(m, com * vec, m * L**2 * (gyration**2 * (np.eye(3) - along) + axial**2 * along))


def _box(m, centre, size):
    a, b, c = size
    return mcI(m, np.asarray(centre, dtype=float),
               m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b]))


# Winter (2009), Table 4.1: mass / body mass, COM / segment length from the proximal
# joint, radius of gyration about the COM / segment length; lengths / height from the
# Drillis-Contini proportions (Winter, Fig. 4.1).
_WINTER = {"upper_arm": (0.028, 0.186, 0.436, 0.322), "forearm": (0.016, 0.146, 0.430, 0.303),
           "hand": (0.006, 0.108, 0.506, 0.297), "thigh": (0.100, 0.245, 0.433, 0.323),
           "shank": (0.0465, 0.246, 0.433, 0.302), "foot": (0.0145, 0.152, 0.50, 0.475)}
_PELVIS, _ABDOMEN_THORAX, _HEAD = 0.142, 0.139 + 0.216, 0.081     # Winter, Table 4.1
_CLAVICLE = 0.01            # chosen: each clavicle takes 1 % of the mass off the thorax
_WAIST, _NECK, _SHOULDER_W, _HIP_W, _SC = 0.10, 0.288, 0.259, 0.191, 0.02


def human_figure_40(height=1.75, mass=70.0, spherical=True):
    """The human figure of seed 004, Fig. 13: a pelvis on a free joint and 16 joints,
    12 ball joints (waist, neck, two sternoclavicular, two shoulders, two wrists, two
    hips, two ankles) and 4 revolute joints about the lateral axis (elbows, knees):
    40 joint DOF, 17 links. With ``spherical=False`` every ball joint is three revolute
    joints about z, y, x through two massless links: the same 40 DOF, 41 links (§4.5).

    Pelvis frame: origin at the hip centre, x to the figure's left, y forward, z up;
    at the neutral q the figure stands with its arms hanging. After Winter (2009), Table
    4.1, scaled to ``height`` and ``mass``: every segment's mass, and the lengths, COMs
    and radii of gyration of upper arms, forearms, hands, thighs, shanks and feet.
    Chosen: pelvis and chest (abdomen + thorax, less 1 % of the body mass for each
    clavicle) are uniform boxes; the head's COM and radius of gyration, the foot's
    direction and the joint positions (waist 0.10 H above the hips, neck and shoulders
    0.288 H, sternoclavicular joints 0.02 H from the middle). Returns ``(model, tips)``:
    ``tips`` {body: point in body coordinates} ends the head, the hands and the feet
    (for drawing)."""
    H, M = float(height), float(mass)
    if not (np.isfinite(H) and np.isfinite(M) and H > 0 and M > 0):
        raise RbdlearnError(f"human_figure_40 needs a positive height and mass, got "
                            f"{height!r}, {mass!r}")
    parent, joints, Xtree = [-1, 0], [None, Free()], [None, np.eye(6)]
    I = [None, _box(_PELVIS * M, [0, 0, _WAIST * H / 2], [_HIP_W * H, 0.1 * H, _WAIST * H])]
    names, bodies, tips = ["base", "pelvis_free"], ["ground", "pelvis"], {}

    def add(p, joint, at, inertia, name, body):
        """Body ``body`` on ``joint`` at point ``at`` of body p; a ball joint becomes a
        revolute triple when spherical=False."""
        X = plux(np.eye(3), at)
        if isinstance(joint, Spherical) and not spherical:
            for axis in "zy":
                parent.append(p), joints.append(Revolute(np.eye(3)["xyz".index(axis)]))
                Xtree.append(X), I.append(np.zeros((6, 6)))
                names.append(f"{name}_{axis}"), bodies.append(f"{body}_{axis}_link")
                p, X = len(parent) - 1, np.eye(6)
            joint, name = Revolute([1.0, 0.0, 0.0]), f"{name}_x"
        parent.append(p), joints.append(joint), Xtree.append(X), I.append(inertia)
        names.append(name), bodies.append(body)
        return len(parent) - 1

    def limb(p, at, segs, joint_names, prefix):
        """A chain of segments from point ``at`` of body p: (table key, joint, vector)."""
        for (key, joint, vec), jname in zip(segs, joint_names):
            m, _, com, k = _WINTER[key]
            p = add(p, joint, at, segment_inertia(m * M, vec, com, k), f"{prefix}_{jname}",
                    f"{prefix}_{key}")
            at = vec
        tips[p] = np.asarray(at, dtype=float)
        return p

    chest_h = (_NECK - _WAIST) * H
    chest = add(1, Spherical(), [0, 0, _WAIST * H],
                _box((_ABDOMEN_THORAX - 2 * _CLAVICLE) * M, [0, 0, chest_h / 2],
                     [_SHOULDER_W * H * 0.8, 0.12 * H, chest_h]), "waist", "chest")
    head_len = (1.0 - 0.818) * H                   # shoulder height 0.818 H (Drillis-Contini)
    head = add(chest, Spherical(), [0, 0, chest_h],
               segment_inertia(_HEAD * M, [0, 0, head_len], 0.65, 0.3), "neck", "head")
    tips[head] = np.array([0.0, 0.0, head_len])
    z = lambda key: [0.0, 0.0, -_WINTER[key][1] * H]        # a segment hanging along −z
    for s, sign in (("l", 1.0), ("r", -1.0)):
        clav_vec = [sign * (_SHOULDER_W / 2 - _SC) * H, 0.0, 0.0]
        clav = add(chest, Spherical(), [sign * _SC * H, 0, chest_h],
                   segment_inertia(_CLAVICLE * M, clav_vec, 0.5, 0.3), f"{s}_sternoclavicular",
                   f"{s}_clavicle")
        limb(clav, clav_vec, [("upper_arm", Spherical(), z("upper_arm")),
                              ("forearm", Revolute([1.0, 0, 0]), z("forearm")),
                              ("hand", Spherical(), z("hand"))],
             ["shoulder", "elbow", "wrist"], s)
    for s, sign in (("l", 1.0), ("r", -1.0)):
        foot = [0.0, 0.7 * _WINTER["foot"][1] * H, -0.039 * H]   # ankle to the ball (chosen)
        limb(1, [sign * _HIP_W * H / 2, 0, 0], [("thigh", Spherical(), z("thigh")),
                                                 ("shank", Revolute([1.0, 0, 0]), z("shank")),
                                                 ("foot", Spherical(), foot)],
             ["hip", "knee", "ankle"], s)
    model = Model(parent=parent, joints=joints, Xtree=Xtree, I=I, names=names,
                  body_names=bodies)
    return model, tips


def with_payload(model, mass, length):
    """A copy of a planar arm ``model`` with a point mass at the tip of its last link."""
    return with_point_mass(model, model.N, mass, [0.0, length, 0.0])


def with_point_mass(model, body, mass, point):
    """A copy of ``model`` with a point mass ``mass`` at ``point`` (body coordinates)
    added to ``body``'s inertia (a payload)."""
    I = list(model.I)
    I[body] = I[body] + mcI(mass, np.asarray(point, dtype=float), np.zeros((3, 3)))
    return model.replace(I=I)


def small_trees():
    """A few small trees (name → (model, q)) for the ABA step-through."""
    rng = np.random.default_rng(2)
    trees = {"3-link planar chain": planar_chain(3),
             "branching tree, 5 bodies": random_tree(5, seed=20, p_chain=0.4, joint_types=(
                 "revolute", "prismatic", "spherical")),
             "chain with a ball joint": random_tree(
                 4, seed=11, p_chain=1.0, joint_types=("revolute", "spherical", "prismatic")),
             "floating base + 2 bodies": floating_base(
                 random_tree(2, seed=3, joint_types=("revolute",)),
                 mcI(2.0, [0.1, 0.0, 0.0], np.diag([0.2, 0.3, 0.4])))}
    return {name: (model, random_q(model, rng)) for name, model in trees.items()}


def tree_from_parents(parents, seed=0):
    """A model with parent array ``[-1] + parents`` (revolute joints with random axes,
    random bodies); ``Model`` raises ValueError unless parent[i] < i for every body."""
    shape = random_tree(len(parents), seed=seed, joint_types=("revolute",))
    return Model(parent=[-1] + list(parents), joints=shape.joints, Xtree=shape.Xtree, I=shape.I)
