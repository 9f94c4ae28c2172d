"""The numbers behind the 3-D scenes of chapters 2 and 3 (rbdlearn.widgets.ch2_aba,
rbdlearn.widgets.ch3_crb), each against an independent computation: the Panda's hand
inertia against Pinocchio, the ellipsoid's semi-axes against the felt masses, the contact
arrows against the run's own solutions, Talos's start and release."""

import numpy as np
import pinocchio as pin
import pytest

import rbdlearn as rbd
from rbdlearn import contact as ct
from rbdlearn import interop, models, urdf
from rbdlearn.errors import RbdlearnError
from rbdlearn.widgets import ch2_aba, ch3_crb


# ----------------------------------------------------------------- chapter 3: the Panda


@pytest.fixture(scope="module")
def panda_pin():
    path = str(urdf.example_robot_path(ch3_crb.PANDA_URDF))
    pmodel = pin.buildModelFromUrdf(path)
    return pmodel, pmodel.getFrameId("panda_hand_tcp")


def pinocchio_inverse_inertia(model, pmodel, frame, q, joints):
    """J M⁻¹ Jᵀ from pin.crba and the frame Jacobian of panda_hand_tcp (world-aligned)."""
    data = pmodel.createData()
    qp = interop.q_to_pin(model, pmodel, q)
    H = interop.H_from_pin(model, pmodel, pin.crba(pmodel, data, qp))
    pin.computeJointJacobians(pmodel, data, qp)
    pin.framesForwardKinematics(pmodel, data, qp)
    Jp = pin.getFrameJacobian(pmodel, data, frame, pin.LOCAL_WORLD_ALIGNED)[:3]
    J = np.array([interop.v_from_pin(model, pmodel, row) for row in Jp])
    H, J = H[np.ix_(joints, joints)], J[:, joints]
    return J @ np.linalg.solve(H, J.T), data.oMf[frame].translation.copy()


def test_panda_hand_inertia_equals_pinocchios(panda_pin):
    pmodel, frame = panda_pin
    grid = ch3_crb.panda_hand_grid([-2.5, -1.2, -0.1], [0.0])
    model = ch3_crb.panda_model()
    for k, q in enumerate(grid["q"]):
        for key, joints in (("held", ch3_crb.PANDA_ARM), ("free", ch3_crb.PANDA_WRIST_FREE)):
            want, tcp = pinocchio_inverse_inertia(model, pmodel, frame, q, joints)
            assert np.allclose(grid[key][0, k], want,
                               rtol=1e-9, atol=1e-12)
            assert np.allclose(grid["hand"][k], tcp, atol=1e-12)   # the point: the TCP
    # wrist held and free are different matrices (the test sees which joints move)
    assert not np.allclose(grid["held"], grid["free"], rtol=0.1)


def test_payload_at_the_hand_adds_its_mass_to_every_direction():
    # a point mass m at the operational point: Λ(m) = Λ(0) + m 1 (Woodbury on H + m JᵀJ)
    grid = ch3_crb.panda_hand_grid([-2.0, -0.7], [0.0, 2.5])
    for key in ("held", "free"):
        L0, L1 = (np.linalg.inv(grid[key][r]) for r in (0, 1))
        assert np.allclose(L1, L0 + 2.5 * np.eye(3), rtol=1e-9, atol=1e-9)
    with pytest.raises(RbdlearnError, match="payload"):
        ch3_crb.panda_model(-1.0)


def test_felt_masses_and_the_ellipsoid_semi_axes():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(5, 3, 3))
    Linv = A @ A.mT + 0.1 * np.eye(3)
    m, V = ch3_crb.felt_masses_3d(Linv)
    assert np.all(np.diff(m, axis=-1) < 0)                         # heaviest first
    assert np.allclose(Linv @ V, V * (1 / m)[:, None, :])           # Λ⁻¹ v_k = v_k / m_k
    s = 0.15
    E = ch3_crb.acceleration_ellipsoid(Linv, s)
    # semi-axes s / m_k, and every acceleration s Λ⁻¹ f of a unit push on the surface
    assert np.allclose(np.sqrt(np.linalg.eigvalsh(E)), np.sort(s / m, axis=-1))
    f = rng.normal(size=(5, 3))
    f /= np.linalg.norm(f, axis=-1, keepdims=True)
    x = s * np.einsum("kij,kj->ki", Linv, f)
    assert np.allclose(np.einsum("ki,kij,kj->k", x, np.linalg.inv(E), x), 1.0)


def test_panda_postures_move_only_the_elbow():
    q = ch3_crb.panda_postures([-2.0, -1.0])
    assert q.shape == (2, 9) and np.array_equal(q[:, 3], [-2.0, -1.0])
    assert np.array_equal(q[0, [0, 1, 2, 4, 5, 6, 7, 8]], q[1, [0, 1, 2, 4, 5, 6, 7, 8]])


# ------------------------------------------------------------ chapter 2: contact arrows


@pytest.fixture(scope="module")
def box_run():
    box, corners = models.box()
    q = rbd.neutral_q(box)
    q[:3] = [0.0, 0.0, 0.3]
    q[3:] = [np.cos(0.15), 0.6 * np.sin(0.15), 0.8 * np.sin(0.15), 0.0]
    names = [f"corner {k}" for k in range(4)]
    contacts = ct.plane_contacts(box, [(1, p) for p in corners], mu=0.6, margin=0.1,
                                 names=names)
    run = ct.simulate(box, q, np.array([0, 0, 0, 0.8, 0, 0.0]), 0.3, 0.01,
                      contacts=contacts)
    return box, run, names


def test_contact_frames_are_the_runs_impulses_at_their_points(box_run):
    box, run, names = box_run
    fr = ch2_aba.contact_frames(box, run, names)
    F = len(run.t)
    assert fr["force"].shape == (F, 4, 3) and not fr["active"][0].any()
    hits = 0
    for k in range(1, F):
        sol, used = run.solutions[k - 1], run.contacts[k - 1]
        got = {names[j] for j in np.flatnonzero(fr["active"][k])}
        assert got == ({c.name for c in used} if sol is not None else set())
        for c, P, va in zip(used, [] if sol is None else sol.P,
                            [] if sol is None else sol.v_after):
            j = names.index(c.name)
            assert np.allclose(fr["force"][k, j], P / 0.01)
            assert np.allclose(fr["v_after"][k, j], va)
            R, o = rbd.body_pose(rbd.forward_kinematics(box, run.q[k - 1])[1])
            assert np.allclose(fr["point"][k, j], o + R @ c.point)
            hits += P[2] > 0
        inactive = ~fr["active"][k]
        assert np.all(fr["force"][k, inactive] == 0)
    assert hits > 0                                   # the box did land in 0.3 s
    # the read-out names the forces it shows
    text = ch2_aba.contact_readout(run.t, names, fr)
    k = int(np.argmax(np.abs(fr["force"][..., 2]).max(axis=1)))
    j = int(np.argmax(fr["force"][k, :, 2]))
    assert f"{names[j]}: P/h = [" in text[k] and f"{fr['force'][k, j, 2]:+.1f}" in text[k]
    with pytest.raises(RbdlearnError, match="corner 3"):
        ch2_aba.contact_frames(box, run, names[:3])


# ------------------------------------------------------------------ chapter 2: Talos


def test_talos_start_sets_the_named_joints():
    model = ch2_aba.talos_model()
    q = ch2_aba.talos_start(model)
    for name, angle in ch2_aba.TALOS_START.items():
        assert q[model.names.index(name) - 1] == angle
    assert np.count_nonzero(q) == len(ch2_aba.TALOS_START)


def test_talos_release_keeps_its_energy_and_starts_with_pinocchios_aba():
    model, run, keep = ch2_aba.talos_release(t_end=0.1, dt=0.002, every=5)
    assert np.array_equal(keep, np.arange(0, 51, 5))
    E = rbd.energy(model, run.q, run.qd)
    assert np.abs(E - E[0]).max() < 1e-4 * np.abs(E[0])
    assert np.abs(run.q[-1] - run.q[0]).max() > 0.01               # it does move
    pmodel = pin.buildModelFromUrdf(str(urdf.example_robot_path(ch2_aba.TALOS_URDF)))
    q0 = run.q[0]
    a_pin = pin.aba(pmodel, pmodel.createData(), interop.q_to_pin(model, pmodel, q0),
                    np.zeros(pmodel.nv), np.zeros(pmodel.nv))
    a = rbd.aba(model, q0, np.zeros(model.nv), np.zeros(model.nv))
    assert np.allclose(a, interop.v_from_pin(model, pmodel, a_pin), rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------ the scenes themselves


def quat_matrix(p):
    """Rotation matrices (..., 3, 3) of poses (..., 7) [x, y, z, qw, qx, qy, qz]."""
    w, x, y, z = np.moveaxis(np.asarray(p, dtype=float)[..., 3:], -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z),
                               2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z),
                               2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x),
                               1 - 2 * (x * x + y * y)], -1)], -2)


def test_contact_run_scene_draws_the_runs_forces_and_poses(box_run):
    box, run, names = box_run
    scene = ch2_aba.contact_run_scene("box", box, ch2_aba.box_shapes((0.6, 0.4, 0.2)),
                                      [run], names, force_scale=0.005, every=2)
    keep = np.arange(0, len(run.t), 2)
    fr = ch2_aba.contact_frames(box, run, names)
    bodies = [b["name"] for b in scene.to_json()["bodies"]]
    poses, sizes = scene.poses(0), scene.scales(0)
    X0 = rbd.forward_kinematics(box, run.q[keep])
    R, p = rbd.body_pose(X0[1])
    assert np.allclose(poses[:, bodies.index("box"), :3], p)
    assert np.allclose(quat_matrix(poses[:, bodies.index("box")]), R)
    for j, name in enumerate(names):
        b = bodies.index(f"force at {name}")
        axis = quat_matrix(poses[:, b])[..., 2]
        drawn = axis * sizes[:, b, 2:3] / 0.005
        assert np.allclose(drawn, fr["force"][keep, j], atol=1e-9)
        tip = poses[:, b, :3] + axis * sizes[:, b, 2:3]
        on = fr["active"][keep, j]
        assert np.allclose(tip[on], fr["point"][keep][on, j])
        none = ~np.any(fr["force"][keep, j], axis=1)
        assert np.all(sizes[none, b] == 0)                   # nothing drawn, no stray head
    assert scene.to_json()["runs"][0]["readout"] == [
        ch2_aba.contact_readout(run.t, names, fr)[k] for k in keep]
    with pytest.raises(RbdlearnError, match="param"):
        ch2_aba.contact_run_scene("two", box, ch2_aba.box_shapes((0.6, 0.4, 0.2)),
                                  [run, run], names)


def test_panda_hand_scene_stores_the_acceleration_ellipsoids():
    elbow, payloads = np.array([-2.0, -0.5]), (0.0, 2.0)
    scene = ch3_crb.panda_hand_scene(elbow, payloads, scale=0.2)
    grid = ch3_crb.panda_hand_grid(elbow, payloads)
    js = scene.to_json()
    bodies = [b["name"] for b in js["bodies"]]
    assert js["param"]["values"] == [0.0, 2.0] and len(js["runs"]) == 2
    for r in range(2):
        poses, sizes = scene.poses(r), scene.scales(r)
        for key in ("held", "free"):
            b = bodies.index(f"acceleration ellipsoid, wrist {key}")
            R = quat_matrix(poses[:, b])
            A = R @ (sizes[:, b, :, None] ** 2 * R.mT)
            S = 0.2 * grid[key][r]
            assert np.allclose(A, S @ S, atol=1e-12)               # semi-axes 0.2 / m_k
            assert np.allclose(poses[:, b, :3], grid["hand"])
        m = 1 / np.linalg.eigvalsh(grid["held"][r])
        assert js["runs"][r]["plots"][0]["series"][0]["values"] == pytest.approx(
            list(1 / m[:, 0]))
        assert f"{m[0, 0]:.3g}" in js["runs"][r]["readout"][0]
    assert js["packs"] == {"panda-collision": {"urdf": ch3_crb.PANDA_URDF,
                                               "kind": "collision", "cell": 0.0}}


def test_talos_release_scene_shows_the_run_and_its_energy():
    model, run, keep = ch2_aba.talos_release(t_end=0.02, dt=0.002, every=5)
    scene = ch2_aba.talos_release_scene(model, run, keep, cell=0.02)
    js = scene.to_json()
    assert js["scrub"]["values"] == pytest.approx(list(run.t[keep]))
    assert js["packs"] == {"talos_reduced-visual": {"urdf": ch2_aba.TALOS_URDF,
                                                    "kind": "visual", "cell": 0.02}}
    E = rbd.energy(model, run.q, run.qd)
    assert js["runs"][0]["plots"][0]["series"][0]["values"] == pytest.approx(
        list(E[keep] - E[0]), abs=1e-12)
    bodies = js["bodies"]
    poses = scene.poses(0)
    X0 = rbd.forward_kinematics(model, run.q[keep[-1]])
    for b, body in enumerate(bodies):
        R, p = rbd.body_pose(X0[body["body"]])
        assert np.allclose(poses[-1, b, :3], p) and np.allclose(quat_matrix(poses[-1, b]), R)
    assert js["runs"][0]["readout"][-1].startswith(f"t = {run.t[keep[-1]]:.2f} s")
