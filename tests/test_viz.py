"""rbdlearn.viz: the numeric tables of the book's pages, seed 000's socket and plug, the
animation player, and the numeric helpers at the end of each chapter's module."""

from rbdlearn.viz import table


def test_table_formats_numbers_per_column_and_aligns_them():
    md = table([("body", ""), ("$f_y$ [N]", "+.3f"), ("error", ".1e")],
               [("link 1", -1e-9, 6.2e-15), ("a|b", 2.5, 1e-3)], caption="Forces").data
    lines = md.split("\n")
    assert lines[0] == "Forces" and lines[1] == ""
    assert lines[2] == "| body | $f_y$ [N] | error |"
    assert lines[3] == "|:---|---:|---:|"                 # text left, numbers right
    assert lines[4] == "| link 1 | 0.000 | 6.2e-15 |"     # rounds to zero: no sign
    assert lines[5] == "| a\\|b | +2.500 | 1.0e-03 |"      # a | in text is escaped


def test_table_without_caption_starts_with_the_header():
    assert table([("n", "d")], [(3,)]).data == "| n |\n|---:|\n| 3 |"


# --- seed 000's Fig. 2: socket and plug ---------------------------------------------------------

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rbdlearn as rbd  # noqa: E402
from rbdlearn import spatial as S  # noqa: E402
from rbdlearn.viz import draw_socket_plug, socket_plug_frames  # noqa: E402


def _compose(pose, R_ab, r_ab):
    """Seed 000 eq. (1): the pose of b from that of a and b's pose (R_ab, r_ab) in a."""
    R_a, r_a = pose
    return R_a @ R_ab, r_a + R_a @ r_ab


@pytest.mark.parametrize("seed", [0, 3])
def test_socket_plug_frames_are_the_models_transforms(seed):
    """Each frame is its neighbour composed with the model's own transform: socket = parent
    body ∘ Xtree, plug = socket ∘ X_J(q), COM frames = body ∘ (1, c)."""
    rng = np.random.default_rng(seed)
    model = rbd.random_tree(5, seed=seed)
    q = rbd.random_q(model, rng)
    for i in range(1, model.N + 1):
        lam = model.parent[i]
        fr = socket_plug_frames(model, q, i)
        body_p = rbd.body_pose(rbd.forward_kinematics(model, q)[lam])
        E, r = S.plux_parts(model.Xtree[i])
        socket = _compose(body_p, E.T, r)
        E, r = S.plux_parts(model.joints[i].XJ(q[model.q_slices[i]]))
        plug = _compose(socket, E.T, r)
        com_p = np.zeros(3) if lam == 0 else S.inertia_params(model.I[lam])[1]
        expected = {"p": _compose(body_p, np.eye(3), com_p), "j": socket, "j'": plug,
                    "c": _compose(plug, np.eye(3), S.inertia_params(model.I[i])[1])}
        for name, (R, o) in expected.items():
            assert np.allclose(fr[name][0], R, atol=1e-12), (i, name)
            assert np.allclose(fr[name][1], o, atol=1e-12), (i, name)


def test_draw_socket_plug_draws_the_frames_and_labels():
    model = rbd.random_tree(3, seed=1)
    q = rbd.random_q(model, np.random.default_rng(1))
    fr = socket_plug_frames(model, q, 2)
    fig = plt.figure()
    ax = fig.add_subplot(projection="3d")
    drawn = draw_socket_plug(ax, fr)
    for label, (a, b) in {"$\\mathbf{r}_{pj}$": ("p", "j"), "$\\mathbf{r}_{jj'}$": ("j", "j'"),
                          "$\\mathbf{r}_{cj'}$": ("c", "j'")}.items():
        start, end = drawn["offsets"][label]
        assert np.allclose(start, fr[a][1]) and np.allclose(end, fr[b][1])
    texts = {t.get_text() for t in ax.texts}
    assert {"$p$", "$j$", "$j'$", "$c$", "$\\mathbf{r}_{pj}$"} <= texts
    assert len(ax.collections) == 4 * 3 + 3            # 12 frame axes, 3 offsets
    plt.close(fig)


def test_socket_plug_frames_bad_body():
    model = rbd.random_tree(3, seed=1)
    for bad in (0, 4, 1.0, True):
        with pytest.raises(ValueError, match="body index must be an integer in 1..3"):
            socket_plug_frames(model, rbd.neutral_q(model), bad)


# --- to_jshtml: an animation's player, most frames blitted ---------------------------------------

def _frames(html):
    """The frames of a to_jshtml player, decoded to RGBA arrays."""
    import base64
    import io
    import re

    from PIL import Image
    data = re.findall(r'frames\[\d+\] = "data:image/(?:png|webp);base64,([^"]*)"', html)
    return [np.asarray(Image.open(io.BytesIO(base64.b64decode(d.replace("\\\n", "")))))
            for d in data]


def _player(convert, change=None):
    """A player of 8 frames: a curve that moves under a legend, a dot whose colour
    changes under a still label, a title per frame; ``change`` at frame 4: "limits" (the
    axis limits), "add" (a new line) or "remove" (the label). Returns (html, draws, fig)."""
    from matplotlib.animation import FuncAnimation

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(3, 1.5), dpi=50)
    x = np.linspace(0, 6, 40)
    line, = ax.plot(x, np.sin(x), lw=3, label="sin")
    ax.legend(loc="upper right")
    dots = bx.scatter([0.0], [0.0], s=400, zorder=1)
    label = bx.text(0.0, 0.0, "still", ha="center", zorder=3)
    bx.set(xlim=(-1, 1), ylim=(-1, 1))

    def show(k):
        line.set_ydata(np.sin(x + k))
        dots.set_color(f"C{k % 4}")
        bx.set_title(f"frame {k}")
        if k == 4 and change == "limits":
            ax.set_xlim(0, 3)
        if k == 4 and change == "add":
            bx.plot([-1, 1], [-1, 1])
        if k == 4 and change == "remove":
            label.remove()

    draws = []
    fig.canvas.mpl_connect("draw_event", lambda event: draws.append(1))
    try:
        html = convert(FuncAnimation(fig, show, frames=8, interval=50))
    finally:
        plt.close(fig)
    return html, len(draws), fig


@pytest.mark.parametrize("change", [None, "limits", "add", "remove"])
def test_to_jshtml_gives_the_frames_of_matplotlibs_own(change):
    """Pixel for pixel, whatever changes: moving artists under still ones (the legend, a
    label), a new artist, one removed, new axis limits (frames drawn whole)."""
    import re

    ours, our_draws, fig = _player(
        lambda a: rbd.viz.to_jshtml(a, default_mode="once", colors=None), change)
    theirs, their_draws, _ = _player(lambda a: a.to_jshtml(default_mode="once"), change)
    mine, matplotlibs = _frames(ours), _frames(theirs)
    assert len(mine) == len(matplotlibs) == 8
    for k, (a, b) in enumerate(zip(mine, matplotlibs)):
        assert a.shape == b.shape and np.abs(a.astype(int) - b.astype(int)).max() <= 1, k
    assert any((a != mine[0]).any() for a in mine[1:])          # the frames do move
    frames = re.compile(r'frames\[\d+\] = "data:image/png;base64,[^"]*"')
    ids = re.compile(r"[0-9a-f]{32}")                    # the player's random element ids
    assert ids.sub("", frames.sub("", ours)) == ids.sub("", frames.sub("", theirs))
    # matplotlib draws the whole figure twice per frame; here it is drawn for the first
    # frame and for the still picture, and the still picture again from the frame that
    # changes what moves (an axis, an artist added or removed)
    assert their_draws == 16
    assert our_draws == (2 if change is None else 3), our_draws
    assert "draw_idle" not in vars(fig.canvas)              # the canvas is as it was


def test_to_jshtml_stores_its_frames_in_a_palette():
    """By default the frames are lossless WebP pictures of at most 64 colours (the page
    says image/webp), at most a third of the bytes of the full-colour PNG frames, and the
    same pictures: 99 % of the pixels within 24 of 255 in every channel of the
    full-colour frame (measured: 9; white becomes 254)."""
    import base64
    import io
    import re

    import PIL.Image

    small = _player(lambda a: rbd.viz.to_jshtml(a, default_mode="once"))[0]
    full = _player(lambda a: rbd.viz.to_jshtml(a, default_mode="once", colors=None))[0]
    pngs = [[base64.b64decode(m) for m in re.findall(
        rf'frames\[\d+\] = "data:image/{kind};base64,([^"]*)"', html)]
        for kind, html in (("webp", small), ("png", full))]
    assert len(pngs[0]) == len(pngs[1]) == 8
    for a, b in zip(*pngs):
        image = PIL.Image.open(io.BytesIO(a))
        assert image.format == "WEBP" and len(image.getcolors(maxcolors=256)) <= 64
        error = np.abs(np.asarray(image.convert("RGB"), dtype=int)
                       - np.asarray(PIL.Image.open(io.BytesIO(b)).convert("RGB"), dtype=int))
        assert np.percentile(error.max(axis=-1), 99) <= 24, error.max()
    assert sum(map(len, pngs[0])) < 0.34 * sum(map(len, pngs[1]))


def test_to_jshtml_refuses_frames_beyond_the_embed_limit():
    """matplotlib logs a warning and drops the frames past animation.embed_limit; the
    book's player would then stop short without saying so."""
    with matplotlib.rc_context({"animation.embed_limit": 0.002}):       # 2 kB
        with pytest.raises(ValueError, match="embed_limit"):
            _player(lambda a: rbd.viz.to_jshtml(a))


# --- the pictures' numeric helpers, each against an independent computation --------------------

def test_chain_geometry_of_a_planar_chain():
    """Links along (cos Σq, sin Σq) in the y-z plane: joints at the ends, centres halfway."""
    lengths = [1.0, 0.8, 0.6]
    model = rbd.planar_chain(3, length=lengths, mass=[2.0, 1.0, 0.8])
    q = np.array([0.3, -1.1, 0.7])
    g = rbd.viz.chain_geometry(model, q)
    ends = [np.zeros(2)]
    for i, l in enumerate(lengths):
        a = q[:i + 1].sum()
        ends.append(ends[-1] + l * np.array([np.cos(a), np.sin(a)]))
    ends = np.array(ends)
    assert np.allclose(g["origins"][1:], ends[:-1]) and np.allclose(g["origins"][0], 0)
    assert np.allclose(g["tips"], ends[1:])
    assert np.allclose(g["coms"], (ends[:-1] + ends[1:]) / 2)


@pytest.mark.parametrize("v", [[1.5, 0, 0, 0, 0.4, -0.9], [-0.3, 0, 0, 0, 2.0, 1.0]])
def test_motion_centre_is_the_point_at_rest(v):
    v = np.array(v, dtype=float)
    P = rbd.spatial.motion_centre_2d(v)
    v_P = S.plux(np.eye(3), [0.0, *P]) @ v
    assert np.allclose(v_P[3:], 0) and np.isclose(v_P[0], v[0])
    assert rbd.spatial.motion_centre_2d([0, 0, 0, 0, 1.0, 2.0]) is None     # a translation


@pytest.mark.parametrize("f", [[0.7, 0, 0, 0, 1.0, -2.0], [-1.2, 0, 0, 0, 0.0, 3.0]])
def test_force_line_passes_where_the_moment_vanishes(f):
    f = np.array(f, dtype=float)
    P0, u = rbd.spatial.force_line_2d(f)
    for s in (0.0, 1.7, -3.0):                 # every point of the line: no moment about it
        P = P0 + s * u
        f_P = S.force_X(S.plux(np.eye(3), [0.0, *P])) @ f
        assert np.isclose(f_P[0], 0, atol=1e-12)
    assert np.isclose(P0 @ u, 0)                       # the point of the line nearest to O
    assert np.allclose(u * np.hypot(f[4], f[5]), f[4:])
    assert rbd.spatial.force_line_2d([1.0, 0, 0, 0, 0, 0]) is None          # a couple


def test_torque_parts_add_up_and_split_as_the_equation_of_motion():
    model = rbd.planar_chain(3)
    rng = np.random.default_rng(4)
    q, qd, qdd = (rng.uniform(-2, 2, 3) for _ in range(3))
    parts = rbd.inverse_dynamics.torque_parts(model, q, qd, qdd)
    assert np.allclose(parts["gravity"] + parts["velocity"] + parts["inertial"], parts["total"])
    assert np.allclose(parts["inertial"], rbd.crba(model, q) @ qdd)     # H(q) q̈, by CRBA
    tau_nog = rbd.rnea(rbd.without_gravity(model), q, qd, np.zeros(3))
    assert np.allclose(parts["velocity"], tau_nog)                      # C(q, q̇) q̇


def test_transmitted_forces_carry_the_weight_and_the_joint_torques():
    model = rbd.planar_chain(3, mass=[2.0, 1.5, 1.0])
    q = np.array([0.4, -0.8, 1.2])
    zero = np.zeros(3)
    f = rbd.inverse_dynamics.transmitted_forces(model, q, zero, zero)
    # at rest, the base holds up the whole arm: 4.5 kg·g upwards
    assert np.allclose(f[1][3:], [0, 0, 4.5 * 9.81])
    # each joint's torque is its axis (base coordinates) against its transmitted force
    rng = np.random.default_rng(2)
    qd, qdd = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3)
    f = rbd.inverse_dynamics.transmitted_forces(model, q, qd, qdd)
    X0 = rbd.forward_kinematics(model, q)
    tau = rbd.rnea(model, q, qd, qdd)
    for i in range(1, 4):
        axis = S.inv_X(X0[i]) @ model.joints[i].S(q[i - 1:i])[:, 0]
        assert np.isclose(axis @ f[i], tau[i - 1])


def test_pointer_layout_places_leaves_in_order_and_parents_over_children():
    model = rbd.random_tree(9, seed=7, p_chain=0.3)
    x, depth = rbd.viz.pointer_layout(model)
    children = {i: [k for k in range(1, 10) if model.parent[k] == i] for i in range(10)}
    leaves = [i for i in range(10) if not children[i]]
    assert sorted(x[leaves]) == list(range(len(leaves)))
    for i in range(10):
        assert depth[i] == len(model.ancestors(i))
        if children[i]:
            assert np.isclose(x[i], np.mean(x[children[i]]))


def test_loop_geometry_meets_only_when_assembled():
    mech = rbd.closed_chains.four_bar()
    q_open = np.array([1.0, -2.0, 1.5, 0.0])
    q = rbd.closed_chains.assemble(mech, q_open, independent=[0])
    virtual = mech.loops[0].virtual
    origins, targets = rbd.viz.loop_geometry(mech, q)
    assert np.allclose(origins[virtual], targets[0], atol=1e-9)
    X0 = rbd.forward_kinematics(mech.model, q)
    assert np.allclose(origins, [rbd.body_pose(X)[1][1:] for X in X0])
    origins, targets = rbd.viz.loop_geometry(mech, q_open)
    assert np.linalg.norm(origins[virtual] - targets[0]) > 1e-3
