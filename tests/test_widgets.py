"""The explorers' kernel-free form (rbdlearn.widgets.precomputed): what the book's HTML
pages show where no kernel runs (tests/test_browser.py moves its controls in Chromium);
and the numeric helpers at the end of each chapter's module of rbdlearn.widgets, each
against an independent computation."""

import hashlib
import math
import re

import ipywidgets as W
import nbformat
import numpy as np
import pytest

import rbdlearn as rbd
from rbdlearn import widgets


def leaves(stack):
    """The frames of nested Stacks, in the order of the combinations of the views."""
    if isinstance(stack, W.Stack):
        return [leaf for child in stack.children for leaf in leaves(child)]
    return [stack]


def keep_views(box, kept):
    """Narrow the grid of ``box`` to the values at the indices ``kept`` {name: indices}
    (precomputed draws every combination; the book's full grids are drawn when its
    notebooks run, which _ext/nbexec.py does with RBDLEARN_STATIC_WIDGETS=1). Returns
    the full grid."""
    full = {n: v if isinstance(v, dict) else list(v) for n, v in box.views.items()}
    box.views = {n: [v[k] for k in kept[n]] if n in kept else v for n, v in full.items()}
    return full


@pytest.fixture(scope="module")
def aba_steps():
    box = widgets.aba_step_explorer()
    keep_views(box, {"tree": [0, 2]})                   # every step of two of the trees
    return box, widgets.precomputed(box)


def test_one_frame_per_combination_of_the_views(aba_steps):
    box, static = aba_steps
    trees = box.views["tree"]
    n_steps = [len(box.views["step"][t]) for t in trees]     # each tree its own steps
    pictures, readouts = leaves(static.pictures), leaves(static.readouts)
    assert len(pictures) == len(readouts) == sum(n_steps)
    # a link per Stack (two trees of them), and the tree picks the step selector shown
    assert len(static.links) == 2 * (1 + len(trees)) + 1
    # each frame is the live widget's picture at that combination
    box.controls["tree"].value, box.controls["step"].value = trees[1], 3
    frame = pictures[n_steps[0] + 3].value
    assert frame == widgets.core.small_image(box.children[0].value)
    assert readouts[n_steps[0] + 3].value == box.html.value
    # the step selector of each tree ends at its last step, N, and every step differs
    selectors = static.controls["step"].children
    for k, tree in enumerate(trees):
        model, _ = rbd.models.small_trees()[tree]
        assert selectors[k].options[-1][1] == model.N == n_steps[k] - 1
    first = {hashlib.md5(p.value).hexdigest() for p in pictures[:n_steps[0]]}
    assert len(first) == n_steps[0]


@pytest.mark.parametrize("make, picks", [
    (lambda: widgets.rnea_explorer(2), [(0, 0, 1), (4, 2, 0), (8, 3, 1)]),
    (widgets.four_bar_explorer, [(0,), (9,), (25,)]),             # blits its picture
    (widgets.floor_arm_explorer, [(0, 2), (6, 0), (12, 1)]),      # keeps its runs
], ids=["rnea", "four_bar", "floor_arm"])
def test_each_frame_is_what_the_live_widget_shows_there(make, picks):
    """precomputed sets a frame's controls with the picture held (drawn once per frame, not
    once per control) and quantizes the canvas pixels; a fresh live widget, its controls set
    one by one, shows the same picture and read-out at that combination. (The grid is
    narrowed to the picked values of each control, three or so each: every frame is still
    drawn after others, in the order of the combinations.)"""
    box = make()
    names = list(box.views)
    kept = {n: sorted({combo[d] for combo in picks}) for d, n in enumerate(names)}
    full = keep_views(box, kept)
    static = widgets.precomputed(box)
    pictures, readouts = leaves(static.pictures), leaves(static.readouts)
    assert len(pictures) == int(np.prod([len(kept[n]) for n in names]))
    # afterwards the live widget shows its own values again, drawn and encoded
    fresh = make()
    assert box.children[0].value == fresh.children[0].value
    assert box.html.value == fresh.html.value
    for combo in picks:
        live = fresh if combo == picks[0] else make()    # fresh: nothing kept from other frames
        for name, k in zip(names, combo):
            live.controls[name].value = full[name][k]
        i = int(np.ravel_multi_index([kept[n].index(k) for n, k in zip(names, combo)],
                                     [len(kept[n]) for n in names]))
        assert readouts[i].value == live.html.value
        assert pictures[i].value == widgets.core.small_image(live.children[0].value)


def test_the_selectors_start_where_the_live_widget_does(aba_steps):
    box = widgets.crb_fill_explorer()
    box.controls["step"].value = 3
    static = widgets.precomputed(box)
    assert box.controls["step"].value == 3                # the live widget is put back
    assert static.controls["step"].index == 3 == static.pictures.selected_index
    assert isinstance(static.controls["step"], W.SelectionSlider)
    _, steps = aba_steps
    assert isinstance(steps.controls["tree"], W.Dropdown)
    assert list(steps.controls["tree"].options) == list(aba_steps[0].views["tree"])


def test_a_view_between_grid_values_starts_at_the_nearest():
    box = widgets.four_bar_explorer()
    box.controls["crank"].value = 1.13
    static = widgets.precomputed(box)
    assert box.views["crank"][static.controls["crank"].index] == 1.25


def test_display_shows_the_kernel_free_form_only_when_asked(monkeypatch):
    box = widgets.crb_fill_explorer()
    view = "application/vnd.jupyter.widget-view+json"
    monkeypatch.delenv("RBDLEARN_STATIC_WIDGETS", raising=False)
    assert box._repr_mimebundle_()[view]["model_id"] == box.model_id
    monkeypatch.setenv("RBDLEARN_STATIC_WIDGETS", "1")
    shown = box._repr_mimebundle_()[view]["model_id"]
    assert shown == box.static.model_id != box.model_id


# --- honest kernel-free forms (issue 28): every control a page shows responds there, and
# the page names the others as live-only; its prose asks only for what the page can do --


def _tiny_runs():
    """Two runs of two times for contact_run_explorer (a drop-down and a time slider)."""
    run = {"t": np.array([0.0, 0.1]), "lines": [[np.zeros((2, 2))]] * 2,
           "forces": [np.zeros((1, 4))] * 2, "text": ["at 0", "at 0.1"]}
    return {"a": run, "b": run}


EXPLORERS = {
    "plucker": widgets.plucker_explorer,
    "constrained_motion": widgets.constrained_motion_explorer,
    "rnea": lambda: widgets.rnea_explorer(2),
    "propagation": widgets.propagation_explorer,
    "articulated_inertia": widgets.articulated_inertia_explorer,
    "aba_step": widgets.aba_step_explorer,
    "ball_joint": widgets.ball_joint_explorer,
    "contact": widgets.contact_explorer,
    "contact_run": lambda: widgets.contact_run_explorer(_tiny_runs(), (-1, 1), (-1, 1)),
    "crb_fill": widgets.crb_fill_explorer,
    "floor_arm": widgets.floor_arm_explorer,
    "four_bar": widgets.four_bar_explorer,
}


def live_only(box):
    return [n for n in box.controls if n not in box.views]


@pytest.mark.parametrize("name", list(EXPLORERS))
def test_every_static_control_responds_and_the_others_are_named(name):
    """The kernel-free form shows one selector per precomputed control, each switching a
    Stack of frames (a jslink target: a selector no link reads would do nothing), and a
    note naming every control of the live widget that it does not precompute."""
    box = EXPLORERS[name]()
    first = list(box.views)[0]
    keep_views(box, {first: [0]})           # one value of the first control: fewer frames
    static = widgets.precomputed(box)
    assert list(static.controls) == list(box.views)
    targets = {id(link.target[0]) for link in static.links}
    for n, control in static.controls.items():
        selectors = control.children if isinstance(control, W.Stack) else [control]
        assert all(id(sel) in targets for sel in selectors), n
        assert all(len(sel.options) >= 2 for sel in selectors if n != first), n
    shown = [c for c in static.children[1].children if isinstance(c, W.HTML)]
    if not live_only(box):
        assert static.note is None
        return
    assert static.note in shown
    for n in live_only(box):
        assert widgets.core._label(box.controls[n]) in static.note.value, n
    assert "live kernel" in static.note.value


def test_the_note_is_there_exactly_when_a_control_is_not_precomputed():
    box = widgets.articulated_inertia_explorer()
    box.views = {"q2": [0.0, 0.4], "m2": [1.0, 3.0]}
    assert widgets.precomputed(box).note is None
    box.views = {"q2": [0.0, 0.4]}                      # m2 left to the live widget
    note = widgets.precomputed(box).note
    assert "m2" in note.value and "precomputes q2" in note.value


# The widget pages: the explorer, and where the prose (the markdown cell before the
# explorer's cell) names each control the page does not precompute, as written in TeX.
BOOK = rbd.__file__.rsplit("/rbdlearn/", 1)[0] + "/book/"
PAGES = {
    "ch1_spatial/01_spatial_vectors": ("plucker", {
        "ω": r"\\omega\b", "v_Oy": r"v_O\b", "v_Oz": r"v_O\b", "B_z": r"B's \$z|\$B\$ around"}),
    "ch1_spatial/02_dynamics_of_a_body": ("constrained_motion", {
        "P_y": r"move (it|the hinge)", "P_z": r"move (it|the hinge)", "φ": r"direction",
        "A_y": r"point", "A_z": r"point", "F": r"size|\|F\|"}),
    "ch1_spatial/03_rnea": ("rnea", {
        "qd2": r"\\dot q_2|joints (a )?velocit", "qdd1": r"\\ddot q", "qdd2": r"\\ddot q",
        "payload": r"load"}),
    "ch2_aba/01_propagation": ("propagation", {
        "θ_a": r"\\theta_a", "r_y": r"move \$b\$", "r_z": r"move \$b\$",
        "v_z": r"v_\{ab\}\\,z", "ω_ab": r"\\omega_\{ab\}"}),
    "ch2_aba/02_aba_theorem": ("articulated_inertia", {}),
    "ch2_aba/03_algorithm": ("aba_step", {}),
    "ch2_aba/04_joints": ("ball_joint", {"twist": r"the twist\b|twist to",
                                          "limit": r"swing\s+max"}),
    "ch2_aba/05_gears_and_contact": ("contact", {
        k: r"\bq_[123]|\\dot q_|configuration|[Ff]olding|joint velocities"
        for k in ("q1", "q2", "q3", "qd1", "qd2", "qd3")}),
    "ch3_crb/02_methods_and_cost": ("crb_fill", {"parents": r"[Tt]ype|parent array"}),
    "ch4_constrained/04_beyond_the_paper": ("floor_arm", {
        "tau1": r"\\tau_1|\\tau = \[", "tau2": r"\\tau_2|\\tau = \[", "y0": r"y_0"}),
    "ch5_closed/01_virtual_cuts": ("four_bar", {}),
}
# a sentence that asks the reader to do something
ASK = re.compile(r"\b(Try|try|Choose|choose|Move|move|Set|set|Turn|turn|Give|give|Pick|"
                 r"pick|Sweep|sweep|raise|lower|scrub|Type|type|Watch|watch)\b")


def widget_prose(page):
    """The sentences of the markdown cell before the page's (first) explorer cell."""
    cells = nbformat.read(BOOK + page + ".ipynb", as_version=4).cells
    k = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "_explorer(" in c.source)
    text = next(c.source for c in cells[k - 1::-1] if c.cell_type == "markdown")
    return [" ".join(sentence.split()) for paragraph in re.split(r"\n\s*\n", text)
            for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z$(])", paragraph)]


@pytest.mark.parametrize("page", list(PAGES))
def test_the_prose_asks_only_for_what_the_page_shows(page):
    """Each sentence that asks the reader to act and names a control the page does not
    precompute says that it needs a live kernel (ch4 §4 asked for τ1 = 12 on a page with
    only t and K). The table's controls are the explorer's live-only ones, so a control
    that stops being precomputed must get its pattern here."""
    name, patterns = PAGES[page]
    assert set(patterns) == set(live_only(EXPLORERS[name]()))
    sentences = widget_prose(page)
    # ch1 §1 said its widget "needs a running kernel" and shows "its initial state"
    assert not any(re.search(r"initial state|needs a (running )?kernel", s) for s in sentences)
    for sentence in sentences:
        if not ASK.search(sentence) or "live kernel" in sentence:
            continue
        named = [n for n, pat in patterns.items() if re.search(pat, sentence)]
        assert not named, f"{page}: asks for {named} (live-only): {sentence!r}"


def test_the_prose_check_catches_the_old_sentence():
    patterns = PAGES["ch4_constrained/04_beyond_the_paper"][1]
    old = "Try: $\\tau_1 = 12$ lifts the arm and turns $f_n$ negative."
    assert ASK.search(old) and any(re.search(p, old) for p in patterns.values())


# --- the explorers' numeric helpers, each against an independent computation -------------------


def _tip_jacobian(model, q, tip, h=1e-6):
    """The tip's (y, z) Jacobian by central differences of the forward kinematics."""
    def tip_yz(q):
        R, p = rbd.body_pose(rbd.forward_kinematics(model, q)[model.N])
        return (p + R @ tip)[1:]
    cols = [(tip_yz(q + h * e) - tip_yz(q - h * e)) / (2 * h) for e in np.eye(len(q))]
    return np.array(cols).T


def test_with_payload_adds_a_point_mass_at_the_tip():
    """A point mass m at the tip adds m JᵀJ to H (J: the tip's linear Jacobian)."""
    arm = rbd.planar_chain(3, length=[1.0, 0.8, 0.6], mass=[2.0, 1.0, 0.8])
    q = np.array([0.4, -0.7, 1.1])
    heavy = rbd.models.with_payload(arm, 1.5, 0.6)
    J = _tip_jacobian(arm, q, np.array([0.0, 0.6, 0.0]))
    assert np.allclose(rbd.crba(heavy, q) - rbd.crba(arm, q), 1.5 * J.T @ J, atol=1e-7)
    assert np.allclose(rbd.crba(rbd.models.with_payload(arm, 0.0, 0.6), q), rbd.crba(arm, q))


def test_plate_body_is_the_integral_of_its_mass():
    """Spatial inertia of a uniform lamina by 2x2 Gauss points (exact for second moments)."""
    m, w, h, com = 2.0, 1.2, 0.5, (0.6, 0.2)
    I, corners = rbd.spatial.plate_body(m, w, h, com)
    x, wts = np.polynomial.legendre.leggauss(2)
    expected = np.zeros((6, 6))
    for a, wa in zip(x, wts):
        for b, wb in zip(x, wts):
            p = np.array([0.0, com[0] + a * w / 2, com[1] + b * h / 2])
            mass = m * wa * wb / 4
            px = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
            expected += mass * np.block([[px @ px.T, px], [px.T, np.eye(3)]])
    assert np.allclose(I, expected, atol=1e-12)
    assert np.allclose(corners.mean(axis=0), com)
    assert np.allclose(np.ptp(corners, axis=0), (w, h))


def test_motion_subspaces_and_the_applied_force():
    P = (0.7, -0.3)
    S = rbd.spatial.hinge_S(P)[:, 0]
    w, v_O = S[:3], S[3:]
    assert np.allclose(w, [1, 0, 0])
    assert np.allclose(v_O + np.cross(w, [0.0, *P]), 0)       # the hinge point stays still
    for angle in (0.0, 0.8, -2.5):
        s = rbd.spatial.slider_S(angle)[:, 0]
        assert np.allclose(s, [0, 0, 0, 0, math.cos(angle), math.sin(angle)])
    assert np.allclose(rbd.spatial.PLANE_S.T @ rbd.spatial.PLANE_S, np.eye(3))
    planar = np.array([0.3, 0, 0, 0, -1.2, 0.4])               # ω_x, v_y, v_z
    assert np.allclose(rbd.spatial.PLANE_S @ (rbd.spatial.PLANE_S.T @ planar), planar)
    A, F = (1.2, 0.2), (0.5, -2.0)
    f = rbd.spatial.applied_force(A, F)
    assert np.allclose(f, np.r_[np.cross([0.0, *A], [0.0, *F]), 0.0, F[0], F[1]])


def _felt_by_lagrange(q2, m2, l1=1.0, l2=1.0, m1=1.0):
    """Masses felt at body 1's centre of mass along its y and z axes (body 1 at angle 0),
    from the mass matrix of two planar rods in coordinates (y, z, θ, φ): body 1's centre,
    its angle, joint 2's angle. Returns {"own", "articulated", "rigid"}: (m_y, m_z)."""
    def perp(a):
        return np.array([-a[1], a[0]])                       # e_x × (y, z)
    u = np.array([math.cos(q2), math.sin(q2)])
    J1 = np.hstack([np.eye(2), np.zeros((2, 2))])
    J2 = np.column_stack([[1, 0], [0, 1], perp(np.array([l1 / 2, 0]) + l2 / 2 * u),
                          perp(l2 / 2 * u)])
    M = m1 * J1.T @ J1 + m2 * J2.T @ J2
    M[2, 2] += m1 * l1 ** 2 / 12
    M[2:, 2:] += m2 * l2 ** 2 / 12 * np.ones((2, 2))
    felt = {}
    for name, keep in (("articulated", 4), ("rigid", 3)):
        Minv = np.linalg.inv(M[:keep, :keep])
        felt[name] = (1 / Minv[0, 0], 1 / Minv[1, 1])
    felt["own"] = (m1, m1)
    return felt


@pytest.mark.parametrize("q2, m2", [(0.8, 1.0), (-2.1, 2.5), (0.0, 0.3)])
def test_felt_masses_are_those_of_the_two_rods(q2, m2):
    mats = rbd.articulated.felt_inertias(q2, m2)
    expected = _felt_by_lagrange(q2, m2)
    for name, M in mats.items():
        assert np.allclose(rbd.articulated.felt_masses(M), expected[name], rtol=1e-9), name
    # locking joint 2 adds a rank-one inertia, U D⁻¹ Uᵀ (seed 000 eq. 25)
    diff = mats["rigid"] - mats["articulated"]
    assert np.linalg.matrix_rank(diff, tol=1e-9) == 1
    assert np.linalg.eigvalsh(diff).min() > -1e-12
    assert np.allclose(mats["rigid"][:3, :3], (1.0 + m2) * np.eye(3))


def test_inward_pass_steps_end_at_the_abas_articulated_inertias():
    for name, (model, q) in rbd.models.small_trees().items():
        steps = rbd.articulated.inward_pass_steps(model, q)
        assert len(steps) == model.N + 1, name
        zero = np.zeros(model.nv)
        I_hat = rbd.aba_local_frame(model, q, zero, zero).I_hat
        for i in range(1, model.N + 1):
            assert np.allclose(steps[-1][i], I_hat[i], atol=1e-10), (name, i)
            # step 0: nothing added yet, every body its own inertia (mass m_i on the diagonal)
            m_i = rbd.spatial.inertia_params(model.I[i])[0]
            assert np.allclose(steps[0][i][:3, :3], m_i * np.eye(3)), (name, i)
            leaf = not any(model.parent[k] == i for k in range(1, model.N + 1))
            if leaf:
                assert np.allclose(steps[0][i], steps[-1][i]), (name, i)


def test_small_trees_are_the_explorers_trees():
    trees, again = rbd.models.small_trees(), rbd.models.small_trees()
    kinds = {name: {type(j).__name__ for j in model.joints[1:]}
             for name, (model, _) in trees.items()}
    assert "Spherical" in kinds["chain with a ball joint"]
    assert "Free" in kinds["floating base + 2 bodies"]
    for name, (model, q) in trees.items():
        assert 2 <= model.N <= 5 and q.shape == (model.nq,), name
        assert np.array_equal(q, again[name][1]), name          # seeded: same every time
        for i in range(1, model.N + 1):
            block = q[model.q_slices[i]]
            if type(model.joints[i]).__name__ in ("Spherical", "Free"):
                assert math.isclose(np.linalg.norm(block[-4:]), 1.0), (name, i)


def test_parse_parents_and_tree_from_parents():
    assert widgets.parse_parents("0, 1 1,2") == [0, 1, 1, 2]
    for bad in ("0 a", "", " , "):
        with pytest.raises(rbd.RbdlearnError):
            widgets.parse_parents(bad)
    model = rbd.models.tree_from_parents([0, 1, 1, 2])
    assert list(model.parent) == [-1, 0, 1, 1, 2]
    with pytest.raises(ValueError):
        rbd.models.tree_from_parents([0, 2])                       # parent[2] = 2 is not < 2


@pytest.mark.parametrize("parents", ["0 1 2 1 4 4 3", "0 0 1 2 2"])
def test_fill_owner_marks_the_zeros_of_H(parents):
    model = rbd.models.tree_from_parents(widgets.parse_parents(parents))
    owner = rbd.crb.fill_owner(model)
    rng = np.random.default_rng(5)
    for _ in range(3):
        H = rbd.crba(model, rng.uniform(-np.pi, np.pi, model.nq))
        assert np.all(np.abs(H[owner == 0]) < 1e-12)
        assert np.all(np.abs(H[owner > 0]) > 1e-9)              # random bodies: none vanish
    for k in range(1, model.N + 1):                            # revolute: velocity k is body k
        for l in range(1, model.N + 1):
            related = k in model.ancestors(l) or l in model.ancestors(k)
            assert owner[k - 1, l - 1] == (max(k, l) if related else 0)


def test_a_new_tree_draws_what_a_fresh_explorer_draws():
    """crb_fill_explorer keeps its axes from tree to tree, aba_step_explorer makes every
    tree's panels once: the pictures are those of an explorer that starts there."""
    for before, after in (("0 1 2 1 4 4 3", "0 1 1 2 2 3 3 1 8"), ("0 1 1 2", "0 1")):
        box, fresh = widgets.crb_fill_explorer(before), widgets.crb_fill_explorer(after)
        box.controls["parents"].value = after
        for k in (0, 2):
            box.controls["step"].value = fresh.controls["step"].value = k
            assert box.children[0].value == fresh.children[0].value, (before, after, k)
            assert box.html.value == fresh.html.value
    box = widgets.aba_step_explorer()
    names = box.views["tree"]
    box.controls["step"].value = 2
    for name in (names[1], names[3], names[0]):
        box.controls["tree"].value = name
        fresh = widgets.aba_step_explorer()
        fresh.controls["tree"].value = name
        fresh.controls["step"].value = 2
        assert box.children[0].value == fresh.children[0].value, name
