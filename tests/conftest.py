"""Shared fixtures. Sections are independent: add new ones below, keep existing ones."""

import types

import numpy as np
import pytest

import rbdlearn as rbd

rbd.one_blas_thread()   # many test processes share the cores: no BLAS threads of their own

# --------------------------------------------------------------------------------------
# Foundation tests (spatial, joints, model, kinematics, rnea, interop): random trees and
# their Pinocchio twins.
# --------------------------------------------------------------------------------------

def random_state(model, seed):
    """A seeded random (q, qd, qdd) of ``model``."""
    rng = np.random.default_rng(seed)
    return rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


ALL_JOINT_TYPES = (rbd.Revolute, rbd.Prismatic, rbd.Spherical, rbd.Free, rbd.Fixed)

# (id, n bodies, seed, p_chain, floating base?) — n >= 30, every joint type in each
_TREES = [
    ("tree30-s0", 30, 0, 0.5, False),
    ("tree31-s1", 31, 1, 0.5, False),
    ("chainy40-s2", 40, 2, 0.9, False),
    ("float-tree30-s3", 30, 3, 0.5, True),
    ("float-tree34-s4", 34, 4, 0.5, True),
    ("float-chainy30-s5", 30, 5, 0.9, True),
]


def random_inertia(rng):
    """A random physical spatial inertia (for a floating base)."""
    m = rng.uniform(1.0, 5.0)
    principal = np.sort(rng.uniform(0.05, 0.5, 3))
    principal[2] = min(principal[2], principal[0] + principal[1])     # triangle inequality
    R = rbd.spatial.exp_so3(rng.normal(size=3))
    return rbd.spatial.mcI(m, rng.uniform(-0.2, 0.2, 3), R @ np.diag(principal) @ R.T)


def make_tree(n, seed, p_chain=0.5, floating=False):
    model = rbd.random_tree(n, seed=seed, p_chain=p_chain)
    if floating:
        model = rbd.floating_base(model, random_inertia(np.random.default_rng(seed + 100)))
    return model


def pin_velocity_map(model, pmodel):
    """P with ``v_pin = P @ v`` (so a Jacobian converts as ``J = J_pin @ P``)."""
    from rbdlearn import interop
    return np.column_stack([interop.v_to_pin(model, pmodel, e) for e in np.eye(model.nv)])


def rel_err(actual, expected):
    """max |actual − expected| relative to max |expected| (floored at 1)."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    return float(np.abs(actual - expected).max() / max(1.0, np.abs(expected).max()))


def _assert_rel(actual, expected, tol=1e-9, what=""):
    err = rel_err(actual, expected)
    assert err <= tol, f"{what}: relative error {err:.3g} > {tol:g}"


@pytest.fixture
def assert_rel():
    """``assert_rel(actual, expected, tol=1e-9, what="")``: relative closeness check."""
    return _assert_rel


@pytest.fixture(scope="session", params=_TREES, ids=[t[0] for t in _TREES])
def tree(request):
    """A random tree (n >= 30, every joint type; fixed or floating base) and its Pinocchio
    twin: attributes ``model``, ``pm`` (pinocchio.Model, frames named by body_names),
    ``P`` (velocity map, see :func:`pin_velocity_map`), ``seed``, ``floating``."""
    pytest.importorskip("pinocchio")
    from rbdlearn import interop
    _, n, seed, p_chain, floating = request.param
    model = make_tree(n, seed, p_chain, floating)
    kinds = {type(j) for j in model.joints[1:]}
    assert kinds == set(ALL_JOINT_TYPES), kinds
    pm = interop.to_pinocchio(model)
    return types.SimpleNamespace(model=model, pm=pm, P=pin_velocity_map(model, pm),
                                 seed=seed, floating=floating)



# --------------------------------------------------------------------------------------
# Robots from example-robot-data, each parsed by rbdlearn and, independently, by Pinocchio.
# --------------------------------------------------------------------------------------

URDF_ROBOTS = [
    "ur_description/urdf/ur5_robot.urdf",
    "panda_description/urdf/panda.urdf",
    "talos_data/robots/talos_reduced.urdf",
    "solo_description/robots/solo12.urdf",
    "double_pendulum_description/urdf/double_pendulum_continuous.urdf",   # Pinocchio nq = 2
]


def urdf_pair(relpath, floating):
    """(rbdlearn model, Pinocchio model, seeded rng) of one example robot; the two parsers
    must agree on the joints (matched by name) before anything is compared."""
    import zlib

    import pinocchio as pin

    from rbdlearn import urdf
    path = urdf.example_robot_path(relpath)
    model = urdf.load(path, floating_base=floating, mimic=False)   # as Pinocchio reads it
    pm = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromUrdf(path))
    assert model.names[1:] == list(pm.names)[1:] and model.nv == pm.nv
    return model, pm, np.random.default_rng(zlib.crc32(relpath.encode()))
