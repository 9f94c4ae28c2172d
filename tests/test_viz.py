"""rbdlearn.viz.table: the numeric tables of the book's pages."""

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
    data = re.findall(r'frames\[\d+\] = "data:image/png;base64,([^"]*)"', html)
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

    ours, our_draws, fig = _player(lambda a: rbd.viz.to_jshtml(a, default_mode="once"),
                                   change)
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


def test_to_jshtml_refuses_frames_beyond_the_embed_limit():
    """matplotlib logs a warning and drops the frames past animation.embed_limit; the
    book's player would then stop short without saying so."""
    with matplotlib.rc_context({"animation.embed_limit": 0.002}):       # 2 kB
        with pytest.raises(ValueError, match="embed_limit"):
            _player(lambda a: rbd.viz.to_jshtml(a))
