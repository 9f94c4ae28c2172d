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


# --- to_jshtml: an animation's player, each frame drawn once ------------------------------------

def test_to_jshtml_gives_the_frames_of_matplotlibs_own():
    import re

    from matplotlib.animation import FuncAnimation

    def player(convert):
        fig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)
        line, = ax.plot([], [])
        ax.set(xlim=(0, 1), ylim=(-1, 1))
        title = ax.set_title("")

        def show(k):
            x = np.linspace(0, 1, 20)
            line.set_data(x, np.sin(6 * x + k))
            title.set_text(f"frame {k}")

        draws = []
        fig.canvas.mpl_connect("draw_event", lambda event: draws.append(1))
        html = convert(FuncAnimation(fig, show, frames=4, interval=50))
        plt.close(fig)
        return html, len(draws), fig

    ours, our_draws, fig = player(lambda a: rbd.viz.to_jshtml(a, default_mode="once"))
    theirs, their_draws, _ = player(lambda a: a.to_jshtml(default_mode="once"))
    frames = re.compile(r'frames\[\d+\] = "data:image/png;base64,[^"]*"')
    assert frames.findall(ours) == frames.findall(theirs) and len(frames.findall(ours)) == 4
    ids = re.compile(r"[0-9a-f]{32}")                    # the player's random element ids
    assert ids.sub("", frames.sub("", ours)) == ids.sub("", frames.sub("", theirs))
    assert our_draws == 4 and their_draws == 8             # one drawing per frame, not two
    assert "draw_idle" not in vars(fig.canvas)              # the canvas is as it was
