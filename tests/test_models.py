"""Example models (rbdlearn.models): the 40-DOF human figure of seed 004's Fig. 13 and the
segment inertias the human figures share."""

import numpy as np
import pytest

import rbdlearn as rbd
from rbdlearn import closed_chains as cc
from rbdlearn.models import human_figure_40, segment_inertia
from rbdlearn.spatial import inertia_params


@pytest.mark.parametrize("spherical, links", [(True, 17), (False, 41)])
def test_fig13_joint_layout_and_mass(spherical, links):
    model, tips = human_figure_40(1.75, 70.0, spherical=spherical)
    assert isinstance(model.joints[1], rbd.Free) and model.parent[1] == 0
    dof = [model.joints[i].nv for i in range(2, model.N + 1)]
    assert sum(dof) == 40 and model.N == links and model.nv == 46      # §4.5
    if spherical:
        assert dof.count(3) == 12 and dof.count(1) == 4
        balls = {model.names[i] for i in range(2, model.N + 1) if model.joints[i].nv == 3}
        assert balls == {"waist", "neck"} | {f"{s}_{j}" for s in "lr" for j in
                                            ("sternoclavicular", "shoulder", "wrist", "hip",
                                             "ankle")}
    assert sum(I[5, 5] for I in model.I[1:]) == pytest.approx(70.0, rel=1e-12)
    assert sorted(model.body_names[i] for i in tips) == ["head", "l_foot", "l_hand",
                                                         "r_foot", "r_hand"]


def test_fig13_is_symmetric_and_scales():
    model, _ = human_figure_40(1.75, 70.0)
    X0 = rbd.forward_kinematics(model, rbd.neutral_q(model))
    for i, name in enumerate(model.body_names):
        if name.startswith("l_"):
            j = model.body_names.index("r_" + name[2:])
            pl, pr = rbd.body_pose(X0[i])[1], rbd.body_pose(X0[j])[1]
            np.testing.assert_allclose(pl * [-1, 1, 1], pr, atol=1e-12)
    # twice the height: twice the lengths; twice the mass: twice every mass
    big, _ = human_figure_40(3.5, 140.0)
    for i in range(1, model.N + 1):
        m, c, _ = inertia_params(model.I[i])
        m2, c2, _ = inertia_params(big.I[i])
        assert m2 == pytest.approx(2 * m) and np.allclose(c2, 2 * c)


def test_fig13_ball_joints_equal_revolute_triples():
    # the same figure: at the neutral q, equal joint velocities give equal kinetic energy
    # (the triples' axes z, y, x span the ball joint's angular velocity there)
    ball, _ = human_figure_40(spherical=True)
    triple, _ = human_figure_40(spherical=False)
    rng = np.random.default_rng(3)
    v = rng.normal(size=46)
    qd_triple = np.zeros(46)
    k = 0
    for i in range(1, ball.N + 1):
        n = ball.joints[i].nv
        w = v[ball.v_index[i]:ball.v_index[i] + n]
        qd_triple[k:k + n] = w if n != 3 else w[::-1]              # z, y, x order
        k += n
    E_ball = rbd.energy(ball, rbd.neutral_q(ball), v)
    E_triple = rbd.energy(triple, rbd.neutral_q(triple), qd_triple)
    assert E_ball == pytest.approx(E_triple, rel=1e-12)


def test_fig13_agrees_with_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    model, _ = human_figure_40()
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(13)
    for _ in range(3):
        q, qd, qdd = rbd.random_q(model, rng), rng.normal(size=46), rng.normal(size=46)
        qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd)
        tau = rbd.rnea(model, q, qd, qdd)
        tau_pin = interop.v_from_pin(model, pm, pin.rnea(pm, pd, qp, vp,
                                                         interop.v_to_pin(model, pm, qdd)))
        np.testing.assert_allclose(tau, tau_pin, atol=1e-9 * np.abs(tau).max())
        a_pin = interop.v_from_pin(model, pm, pin.aba(pm, pd, qp, vp,
                                                      interop.v_to_pin(model, pm, tau)))
        np.testing.assert_allclose(a_pin, qdd, atol=1e-8 * np.abs(qdd).max())
        H = interop.H_from_pin(model, pm, pin.crba(pm, pd, qp))
        np.testing.assert_allclose(rbd.crba(model, q), H, atol=1e-12 * np.abs(H).max())
    # and the pointer recursions of §3.1 on it
    assert np.allclose(cc.rnea_pointers(model, q, qd, qdd), tau, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("height, mass", [(0.0, 70.0), (1.75, -1.0), (np.nan, 70.0)])
def test_fig13_rejects_bad_sizes(height, mass):
    with pytest.raises(ValueError, match="positive height and mass"):
        human_figure_40(height, mass)


def test_segment_inertia():
    I = segment_inertia(2.0, [0.0, 0.0, -0.5], 0.4, 0.3, axial=0.1)
    m, c, Ic = inertia_params(I)
    assert m == pytest.approx(2.0) and np.allclose(c, [0, 0, -0.2])
    np.testing.assert_allclose(Ic, 2.0 * 0.25 * np.diag([0.09, 0.09, 0.01]), atol=1e-15)
    # along another direction: the same moments, turned
    I_x = segment_inertia(2.0, [0.5, 0.0, 0.0], 0.4, 0.3, axial=0.1)
    np.testing.assert_allclose(inertia_params(I_x)[2], 0.5 * np.diag([0.01, 0.09, 0.09]),
                               atol=1e-15)
    for bad in ([0.0, 0.0, 0.0], [1.0, 2.0]):
        with pytest.raises(ValueError, match="vec"):
            segment_inertia(1.0, bad, 0.5, 0.3)


def test_draw_tree_views_marks_every_joint():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rbdlearn import viz
    model, tips = human_figure_40()
    fig, axes = plt.subplots(1, 2)
    marked = viz.draw_tree_views(axes, model, rbd.neutral_q(model), tips)
    assert marked == {"Spherical": 12, "Revolute": 4, "Free": 1}
    # one segment per body except the free-floating pelvis, one per tip, in each view
    assert len(axes[0].lines) == (model.N - 1) + len(tips) + len(marked)
    plt.close(fig)
