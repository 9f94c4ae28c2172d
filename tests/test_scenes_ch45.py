"""The 3-D scenes of chapters 4 and 5 (issue 29): the arrays their builders compute in
rbdlearn.widgets (forces at the hand of the sliding arm, frames of a closed chain's run
with its loops) against independent computations."""

import numpy as np
import pytest

import rbdlearn as rbd
import rbdlearn.constrained as cn
from rbdlearn import closed_chains as cc
from rbdlearn import widgets


# ----------------------------------------------------------------- chapter 4: the arm
@pytest.fixture(scope="module")
def arm_run():
    return cn.floor_arm_run((0.0, -1.225), 0.1, 0.966, t_end=0.3, dt=0.02)


def test_floor_arm_contact_is_the_solvers_force(arm_run):
    arm, traj = arm_run
    c = widgets.floor_arm_contact(arm, traj)
    # the floor's normal is e_z: the normal force is [0, 0, f_n] of the run
    assert np.array_equal(c["normal"], np.column_stack([0 * traj.f_n, 0 * traj.f_n,
                                                        traj.f_n]))
    assert np.array_equal(c["friction"], traj.f_t) and np.array_equal(c["r"], traj.r)
    # the hand is on the floor: the contact point is the hand of each posture
    hands = np.array([arm.hand(q) for q in traj.q])
    assert np.allclose(c["r"], hands, atol=1e-14) and np.abs(c["r"][:, 2]).max() < 1e-12
    # at rest (t = 0) no friction; afterwards the hand slides and |f_t| = K f_n,
    # against the hand's motion (central differences of its position)
    assert not c["sliding"][0] and c["sliding"][1:].all()
    assert np.abs(c["friction"][0]).max() == 0.0
    f_t = np.linalg.norm(c["friction"], axis=1)
    assert np.allclose(f_t[1:], 0.1 * traj.f_n[1:], rtol=1e-12)
    velocity = (traj.r[2:] - traj.r[:-2]) / (2 * 0.02)
    assert np.all(np.einsum("ij,ij->i", velocity, c["friction"][1:-1]) < 0)


def test_floor_arm_readout_says_what_the_frame_shows(arm_run):
    arm, traj = arm_run
    c = widgets.floor_arm_contact(arm, traj)
    lines = widgets.floor_arm_readout(c, 0.1, traj.t)
    assert len(lines) == len(traj.t)
    assert "at rest" in lines[0] and "sliding" in lines[3]
    k = 5
    assert f"f_n = {traj.f_n[k]:.3f} N" in lines[k]
    assert f"|f_t| = {np.linalg.norm(traj.f_t[k]):.4f} N" in lines[k]
    assert f"K·f_n = {0.1 * traj.f_n[k]:.4f} N" in lines[k]


# ------------------------------------------------------- chapter 5: a run with a cut
@pytest.fixture(scope="module")
def four_bar_phases():
    """A four-bar swinging under gravity whose loop is cut at 0.2 s: two phases."""
    mech = cc.four_bar()
    q0 = cc.assemble(mech, np.array([1.0, -0.6, 1.9, 0.0]),
                     cc.choose_split(mech, np.array([1.0, -0.6, 1.9, 0.0]),
                                     independent=[0]))
    run = cc.simulate(mech, q0, np.zeros(mech.model.nv), 0.2, 0.01)
    cut, x, v = cc.cut(mech, run.q[-1], run.qd[-1], "four-bar")
    free = rbd.simulate(cut.model, x, v, 0.2, 0.01)
    return [dict(mech=mech, t=run.t, Q=list(run.q), label="closed"),
            dict(mech=cut, t=0.2 + free.t, Q=list(free.q), label="cut")]


def test_swing_frames_follow_the_run_and_its_loops(four_bar_phases):
    closed, cut = four_bar_phases
    fr = widgets.swing_frames(four_bar_phases, step=0.05)
    assert np.allclose(fr["t"], np.arange(0, 0.41, 0.05), atol=1e-12)
    assert fr["label"] == ["closed"] * 5 + ["cut"] * 4
    # the real bodies' coordinates: the first three joints of either model
    k = 2                                                # t = 0.1 s, closed
    assert np.array_equal(fr["q"][k], closed["Q"][10][:3])
    assert np.array_equal(fr["q"][7], cut["Q"][15][:3])  # t = 0.35 s, cut
    # the loop-closure error is the run's loop residual, zero-size after the cut
    assert fr["residual"][k] == np.abs(cc.loop_residual(closed["mech"], closed["Q"][10])).max()
    assert fr["residual"].max() < 1e-9 and np.all(fr["residual"][5:] == 0)
    loop = fr["loops"]["four-bar"]
    assert loop["closed"].tolist() == [True] * 5 + [False] * 4
    # the cut joint: the rocker's tip (a point of link 3, 1.5 m along it) while closed,
    # meeting the ground pivot at y = 2; after the cut the ground pivot stays put
    X0 = rbd.forward_kinematics(closed["mech"].model, closed["Q"][10])
    R, p = rbd.kinematics.body_pose(X0[3])
    assert np.allclose(loop["joint"][k], p + R @ [0, 1.5, 0], atol=1e-12)
    assert np.allclose(loop["real"], [0, 2.0, 0], atol=1e-12)
    assert np.allclose(loop["joint"][:5], loop["real"][:5], atol=1e-9)
    assert np.allclose(loop["anchor"], 0.0)              # the real link is the ground
    X0 = rbd.forward_kinematics(cut["mech"].model, cut["Q"][15])
    R, p = rbd.kinematics.body_pose(X0[3])
    assert np.linalg.norm(p + R @ [0, 1.5, 0] - [0, 2, 0]) > 1e-3   # it has come apart
