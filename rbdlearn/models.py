"""Example models for the contact section (chapter 2, §6): a box on a free joint and a
small planar biped. (The earlier chapters' examples live beside their algorithms:
``planar_chain`` in model.py, the arm on a floor in constrained.py.)"""

import numpy as np

from .joints import Free, Prismatic, Revolute
from .model import Model
from .spatial import mcI, plux

__all__ = ["box", "planar_biped", "biped_posture"]


def box(mass=2.0, size=(0.6, 0.4, 0.2)):
    """A uniform box of ``mass`` and edge lengths ``size`` (x, y, z) on a free joint,
    its body frame at the centre. Returns ``(model, corners)``, the four lower corners
    (z = −size_z/2) in body coordinates."""
    a, b, c = (float(s) for s in size)
    if not (mass > 0 and min(a, b, c) > 0):
        raise ValueError(f"box needs mass > 0 and positive sizes, got {mass!r}, {size!r}")
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
