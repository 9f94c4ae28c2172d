"""Interactive explorers for the book's notebooks (ipywidgets + matplotlib).

Each factory returns an ipywidgets box. The picture is a matplotlib ``Figure`` (not
managed by pyplot, so it is never shown twice) kept for the life of the widget: a
slider callback moves its artists in place and re-renders it into an
``ipywidgets.Image``, in a few tens of milliseconds. The returned box also carries
``box.figure`` and ``box.controls`` (a dict of the sliders) so that a notebook can
drive the widget from code, as the book's tests do.

Each explorer also has a kernel-free form, for the book's HTML pages where no kernel
runs: its picture and read-out precomputed at a grid of values of its main controls
(``box.views``), in one ``Stack`` per control that the control switches client-side
(``jslink``, which works in the widget state stored with the page). Displaying an
explorer shows that form when the environment variable ``RBDLEARN_STATIC_WIDGETS`` is
``1``: the book's notebook runner sets it (``_ext/nbexec.py``); anywhere else the live
widget is shown. :func:`precomputed` builds the form directly. The book also shows a
static figure (the explorer's "static twin") next to each one.
"""

import io
import itertools
import math
import os
import re
from html import escape

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle   # not exported by ipywidgets
import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Polygon
from matplotlib.ticker import MaxNLocator

from .errors import RbdlearnError
from . import viz
from .joints import zyx_angles  # re-exported: the chapter 2 notebooks call widgets.zyx_angles
from .model import Model, planar_chain
from .spatial import cross3, force_X, inv_X, mcI, plux, rotx

__all__ = ["precomputed", "plucker_explorer", "rnea_explorer", "constrained_motion_explorer",
           "with_payload", "plate_body", "hinge_S", "slider_S", "PLANE_S",
           "applied_force", "draw_propagation", "propagation_explorer",
           "draw_heatmap", "felt_inertias", "felt_masses",
           "articulated_inertia_explorer", "inward_pass_steps", "small_trees",
           "aba_step_explorer", "FOUR_BAR_JOINTS", "four_bar_sweep", "four_bar_explorer",
           "contact_run_explorer"]


class _Picture:
    """A persistent Figure rendered to PNG into an ipywidgets.Image.

    ``refresh(draw)`` draws the figure (``draw()``; by default all of it, or an explorer's
    own blitting) and shows it. While ``held`` is true it only keeps the request, which
    ``flush()`` carries out: :func:`precomputed` sets several controls per frame, each
    running the explorer's callback, and draws the frame once. ``unshown``: the figure
    has been drawn since the Image was last set."""

    def __init__(self, figsize, dpi=80):
        self.fig = Figure(figsize=figsize, dpi=dpi)
        FigureCanvasAgg(self.fig)
        self.image = W.Image(format="png")
        self.held, self.pending, self.unshown = False, None, False

    def refresh(self, draw=None):
        self.pending = draw or self.fig.canvas.draw
        if not self.held:
            self.flush()

    def flush(self, encode=True):
        """Carry out the last refresh request, if any: draw, then show the pixels
        (``pixels()``) as a PNG in the Image — or, with ``encode=False``, not yet (the
        next flush does)."""
        if self.pending is not None:
            draw, self.pending = self.pending, None
            draw()
            self.unshown = True
        if encode and self.unshown:
            buf = io.BytesIO()
            # zlib level 1: a few ms faster than matplotlib's print_png (level 6)
            PIL.Image.fromarray(self.pixels()).save(buf, format="png", compress_level=1)
            self.image.value = buf.getvalue()
            self.unshown = False

    def pixels(self):
        """The figure as last drawn, an RGBA array (height, width, 4)."""
        return np.asarray(self.fig.canvas.buffer_rgba())


# Layout: the picture first, the controls beside it or, in a narrow column, below it;
# every part at most as wide as the column (a picture scales down with its width).
def _control_layout():
    return W.Layout(width="calc(100% - 4px)", max_width="340px")   # 2 px margins


def _picture_layout():
    return W.Layout(max_width="100%", height="auto", margin="0")


def _explorer_layout():
    return W.Layout(display="flex", flex_flow="row wrap", align_items="flex-start",
                    max_width="100%")


def _column_layout():
    return W.Layout(flex="1 1 260px", min_width="0", max_width="100%")


def _slider(description, value, lo, hi, step=0.01):
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         continuous_update=True, readout_format=".2f",
                         style={"description_width": "70px"}, layout=_control_layout())


def _grid(lo, hi, step):
    """Values from lo to hi (both included when hi − lo is a multiple of step), rounded
    to the sliders' two decimals: the grid of a precomputed view."""
    return [round(float(x), 2) for x in np.arange(lo, hi + step / 2, step)]


def _num(x, digits=2):
    """``x`` signed with ``digits`` decimals; a value that rounds to zero is +0.00, not −0.00."""
    return f"{round(float(x), digits) + 0.0:+.{digits}f}"


def _vec(a, digits=2):
    return "[" + ", ".join(_num(x, digits) for x in a) + "]"


_SUBSCRIPT = re.compile(r"(?<=[^\W\d_])_([A-Za-z0-9]+)")     # X_ab after a letter


def _readout(text, error=False):
    """An explorer's read-out: monospace lines that wrap in the column, a subscript written
    ``X_ab`` shown as X<sub>ab</sub>; an error (``error=True``) in red, as it is."""
    text = escape(str(text), quote=False)
    if not error:
        text = _SUBSCRIPT.sub(r"<sub>\1</sub>", text)
    color = "color:#b00;" if error else ""
    return (f"<pre style='white-space:pre-wrap;{color}font-size:12px;line-height:1.35'>"
            f"{text}</pre>")


class _Explorer(W.Box):
    """An explorer: the picture, the controls and the read-out (``box.figure``,
    ``box.controls``, ``box.html``), and ``box.views`` {control name: values}, the grid
    of its kernel-free form. Displayed with RBDLEARN_STATIC_WIDGETS=1, it shows that
    form (see the module docstring)."""

    def _repr_mimebundle_(self, **kwargs):
        if os.environ.get("RBDLEARN_STATIC_WIDGETS") == "1":
            self.static = precomputed(self)        # kept: a dropped widget closes itself
            return self.static._repr_mimebundle_(**kwargs)
        return super()._repr_mimebundle_(**kwargs)


def _box(picture, controls, html, update, views):
    for c in controls.values():
        c.observe(lambda change: update(), names="value")
    update()
    picture.image.layout = _picture_layout()
    box = _Explorer([picture.image,
                     W.VBox(list(controls.values()) + [html], layout=_column_layout())],
                    layout=_explorer_layout())
    box.figure, box.controls, box.html, box.views = picture.fig, controls, html, views
    box.picture = picture
    return box


def _small_png(picture, colors=64):
    """A picture (PNG bytes, or an RGBA array) as a PNG with a palette of ``colors``
    (plots use few; the file gets 3–4x smaller than the full-colour PNG)."""
    image = (PIL.Image.fromarray(picture) if isinstance(picture, np.ndarray)
             else PIL.Image.open(io.BytesIO(picture))).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=colors, method=PIL.Image.Quantize.FASTOCTREE).save(out, format="png")
    return out.getvalue()


def _selector(control, values, index):
    """A control that picks an index into ``values``: a slider's values as a selection
    slider with the same label, a drop-down's options as a drop-down."""
    if isinstance(control, W.Dropdown):
        return W.Dropdown(options=[str(v) for v in values], index=index,
                          description=control.description, layout=_control_layout(),
                          style=control.style)
    if isinstance(control, W.SelectionSlider):
        label = dict(zip(control._options_values, control._options_labels))
        labels = [label[v] for v in values]
    else:
        fmt = getattr(control, "readout_format", ".2f")
        labels = [str(v) if isinstance(v, (int, np.integer)) else format(v, fmt)
                  for v in values]
    return W.SelectionSlider(options=list(zip(labels, range(len(values)))), index=index,
                             description=control.description, layout=_control_layout(),
                             style=control.style, continuous_update=True)


def _nearest(values, value):
    """The index of ``value`` in ``values``, or of the nearest number."""
    if value in values:
        return values.index(value)
    return int(np.argmin([abs(x - value) for x in values]))


def precomputed(box):
    """The kernel-free form of an explorer ``box``: for every combination of the values
    in ``box.views`` ({control name: values}), the picture and read-out the live widget
    shows there, in nested ``Stack`` widgets; one selector per control (a selection
    slider or drop-down) picks the child of every Stack at its level through ``jslink``
    (ipywidgets' client-side link, so it works in a page without a kernel). Setting a
    frame's controls runs the live callback once per control that changes, but the
    picture is drawn once (``_Picture.held``). The live controls are put back
    afterwards. Returns a box like the explorer's, with
    ``.controls`` (the selectors) and ``.pictures`` / ``.readouts`` (the Stacks)."""
    names, live = list(box.views), box.controls
    values = [list(box.views[n]) for n in names]
    saved = {n: c.value for n, c in live.items()}
    frames = {}
    picture = box.picture
    picture.held = True               # each control runs the callback; one drawing a frame
    try:
        for combo in itertools.product(*(range(len(v)) for v in values)):
            for n, v, k in zip(names, values, combo):
                live[n].value = v[k]
            picture.flush(encode=False)           # quantized from the pixels: no PNG between
            shown = picture.pixels() if picture.unshown else picture.image.value
            frames[combo] = (_small_png(shown), box.html.value)
        for n in sorted(saved, key=lambda n: not isinstance(live[n], W.Dropdown)):
            live[n].value = saved[n]              # drop-downs first: they reset sliders
    finally:
        picture.held = False
        picture.flush()
    start = [_nearest(v, saved[n]) for n, v in zip(names, values)]
    selectors = [_selector(live[n], v, k) for n, v, k in zip(names, values, start)]
    links = []
    # one layout (and style) shared by all frames: each widget object is a model stored
    # with the page, about 1 kB even when empty
    pic_layout, stack_layout = _picture_layout(), W.Layout(max_width="100%", margin="0")
    text_layout, text_style = W.Layout(), HTMLStyle()

    def stack(prefix, leaf):
        d = len(prefix)
        if d == len(names):
            return leaf(*frames[prefix])
        s = W.Stack([stack(prefix + (k,), leaf) for k in range(len(values[d]))],
                    selected_index=start[d], layout=stack_layout)
        # from the Stack to the selector: the other way round, the HTML manager fails
        # to draw a Stack of images when the page opens ("could not create a view")
        links.append(W.jslink((s, "selected_index"), (selectors[d], "index")))
        return s

    pictures = stack((), lambda png, _: W.Image(value=png, format="png", layout=pic_layout))
    readouts = stack((), lambda _, text: W.HTML(text, layout=text_layout, style=text_style))
    out = W.Box([pictures, W.VBox(selectors + [readouts], layout=_column_layout())],
                layout=_explorer_layout())
    out.controls, out.pictures, out.readouts = dict(zip(names, selectors)), pictures, readouts
    out.links = links                            # kept: a dropped link closes itself
    return out


# ------------------------------------------------------------------ (a) Plücker explorer

def plucker_explorer(force=(-1.0, 0.0, 0.0, 0.0, 1.0, 0.0)):
    """Same planar motion, two frames: O (the base) and B (sliders for its pose).

    Sliders set the motion ``ᴼv = [ω, 0, 0, 0, v_y, v_z]`` and B's origin and angle.
    The picture shows the velocity of body points on a grid, the instantaneous
    centre, both frames, and the line of action of a fixed force ``ᴼf`` (default
    1 N along +y through the point z = 1). The text shows ``ᴮv = ᴮX_O ᴼv``,
    ``ᴮf = ᴮX_O⁻ᵀ ᴼf`` and the power ``v·f`` computed in each frame.
    """
    pic = _Picture((5.2, 5.0))
    ax = pic.fig.add_subplot()
    lim = 2.2
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xlabel="y", ylabel="z",
           title="velocities of body points")
    f_O = np.asarray(force, dtype=float)
    field = viz.draw_velocity_field(ax, np.zeros(6), extent=(-2, 2, -2, 2))
    viz.draw_force_line(ax, f_O, label="line of action of f")
    viz.draw_frame_2d(ax, (0, 0), 0, "O")
    frame_B = viz.draw_frame_2d(ax, (1, 1), 0, "B", color="C0")
    vO_arrow = ax.quiver([0, 0], [0, 0], [0, 0], [0, 0], color="C1", angles="xy",
                         scale_units="xy", scale=1, width=0.012, zorder=6,
                         label="$v_O$ at O and $v_B$ at B")
    ax.legend(loc="lower left", fontsize=8)
    pic.fig.tight_layout()
    c = {"ω": _slider("ω", 1.0, -2, 2), "v_Oy": _slider("v_O y", 0.5, -2, 2),
         "v_Oz": _slider("v_O z", 0.0, -2, 2), "B_y": _slider("B y", 1.0, -2, 2),
         "B_z": _slider("B z", 1.0, -2, 2), "B_θ": _slider("B angle", 0.5, -3.14, 3.14)}
    html = W.HTML()

    def update():
        v_O = np.array([c["ω"].value, 0, 0, 0, c["v_Oy"].value, c["v_Oz"].value])
        rB, th = np.array([0.0, c["B_y"].value, c["B_z"].value]), c["B_θ"].value
        X = plux(rotx(th).T, rB)                 # ᴮX_O
        v_B, f_B = X @ v_O, force_X(X) @ f_O
        field(v_O)
        frame_B(rB[1:], th)
        # the linear parts, drawn in base axes: v_O at O, and R_B ᴮv_lin at B
        vB_world = rotx(th) @ v_B[3:]
        vO_arrow.set_offsets([[0, 0], rB[1:]])
        vO_arrow.set_UVC(0.25 * np.array([v_O[4], vB_world[1]]),
                         0.25 * np.array([v_O[5], vB_world[2]]))
        pic.refresh()
        html.value = _readout(
            f"ᴼv = {_vec(v_O)}\nᴮv = ᴮX_O ᴼv\n   = {_vec(v_B)}\n\n"
            f"ᴼf = {_vec(f_O)}\nᴮf = ᴮX_O⁻ᵀ ᴼf\n   = {_vec(f_B)}\n\n"
            f"power ᴼv·ᴼf = {v_O @ f_O:+.4f} W\n      ᴮv·ᴮf = {v_B @ f_B:+.4f} W")

    return _box(pic, c, html, update,
                views={"B_θ": _grid(-3.0, 3.0, 0.5), "B_y": [0.0, 1.0, 2.0]})


# ---------------------------------------------------------------------- (b) RNEA explorer

def rnea_explorer(n=2, length=(1.0, 0.8, 0.6), mass=(2.0, 1.0, 0.8), force_scale=0.02):
    """A planar n-link arm (n = 2 or 3): sliders for q, q̇, q̈ and a payload at the tip.

    Shows the arm, the force each joint transmits (arrow on its line of action,
    :func:`rbdlearn.viz.transmitted_forces`) and the joint torques split into the
    gravity, velocity and inertial parts (:func:`rbdlearn.viz.torque_parts`) — all
    computed by ``rbdlearn.rnea``.
    """
    if n not in (2, 3):
        raise RbdlearnError(f"rnea_explorer draws 2 or 3 links, got n={n}")
    arm = planar_chain(n, length=list(length[:n]), mass=list(mass[:n]))
    L = float(sum(length[:n]))
    pic = _Picture((8.4, 4.2))
    ax, bx = pic.fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    ax.set(xlim=(-L - 0.2, L + 0.2), ylim=(-L - 0.2, L + 0.2), aspect="equal",
           xlabel="y [m]", ylabel="z [m]", title="arm and joint forces")
    drawing = viz.ChainDrawing(ax, arm, np.zeros(n))
    payload = ax.plot([], [], "o", color="C1", zorder=5)[0]
    colors = ["C2", "C4", "C5"]
    lines = [viz.draw_force_line(ax, np.zeros(6), scale=force_scale, color=colors[i],
                                 label=f"force on link {i + 1}") for i in range(n)]
    ax.legend(loc="lower left", fontsize=8.5)
    bx.set_title("joint torques τ")
    bars = viz.draw_torque_bars(bx, {k: np.zeros(n) for k in viz.PART_COLORS})
    bx.legend(fontsize=8.5, loc="upper right")
    pic.fig.tight_layout()
    c = {}
    for i in range(n):
        c[f"q{i + 1}"] = _slider(f"q{i + 1}", 0.6 if i == 0 else 0.4, -3.14, 3.14)
    for i in range(n):
        c[f"qd{i + 1}"] = _slider(f"q̇{i + 1}", 0.0, -4, 4)
    for i in range(n):
        c[f"qdd{i + 1}"] = _slider(f"q̈{i + 1}", 0.0, -8, 8)
    c["payload"] = _slider("load kg", 0.0, 0, 3)
    html = W.HTML()

    def update():
        q, qd, qdd = (np.array([c[f"{s}{i + 1}"].value for i in range(n)])
                      for s in ("q", "qd", "qdd"))
        model = with_payload(arm, c["payload"].value, length[n - 1])
        g = drawing.update(q)
        payload.set_data([g["tips"][-1][0]], [g["tips"][-1][1]])
        payload.set_markersize(4 + 4 * c["payload"].value)
        forces = viz.transmitted_forces(model, q, qd, qdd)
        for i, line in enumerate(lines):         # arrow drawn next to joint i
            line(forces[i + 1], anchor=g["origins"][i + 1])
        parts = viz.torque_parts(model, q, qd, qdd)
        bars(parts)
        top = max(5.0, 1.15 * max(np.abs(p).max() for p in parts.values()))
        bx.set_ylim(-top, top)
        pic.refresh()
        html.value = _readout("\n".join(f"{k:9s}{_vec(v)} N m" for k, v in parts.items()))

    return _box(pic, c, html, update,
                views={"q1": _grid(-3.0, 3.0, 0.6), "q2": [-2.0, -0.8, 0.4, 1.6]})


def with_payload(arm, mass, length):
    """A copy of a planar arm with a point mass at the tip of its last link."""
    I = list(arm.I)
    I[-1] = I[-1] + mcI(mass, np.array([0.0, length, 0.0]), np.zeros((3, 3)))
    return Model(parent=arm.parent, joints=arm.joints, Xtree=arm.Xtree, I=I,
                 names=arm.names, gravity=arm.gravity)


# --------------------------------------------------------- (c) constrained-motion explorer

PLANE_S = np.eye(6)[:, [0, 4, 5]]
"""Motion subspace of a body free to move in the y-z plane: ω_x, v_y, v_z."""


def plate_body(m=2.0, width=1.2, height=0.5, com=(0.6, 0.2)):
    """A uniform rectangular plate in the y-z plane, at rest with its frame at O.

    Returns ``(I, corners)``: its spatial inertia at O and its corners (y, z).
    """
    Ixx = m * (width ** 2 + height ** 2) / 12
    Ic = np.diag([Ixx, m * height ** 2 / 12, m * width ** 2 / 12])
    c = np.array([0.0, com[0], com[1]])
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [width / 2, height / 2] + com
    return mcI(m, c, Ic), corners


def hinge_S(P):
    """Motion subspace (6x1, O coordinates) of a rotation about the x-axis through P=(y, z).

    A unit rotation at P is ``[1, 0, 0, 0, 0, 0]`` in a frame at P; ᴼX_P moves it to O.
    """
    X_PO = plux(np.eye(3), [0.0, P[0], P[1]])
    return inv_X(X_PO) @ np.eye(6)[:, :1]


def slider_S(angle):
    """Motion subspace (6x1) of a translation in the y-z plane at ``angle`` from +y."""
    return np.array([[0, 0, 0, 0, math.cos(angle), math.sin(angle)]]).T


def applied_force(A, F):
    """The spatial force (O coordinates) of a force ``F=(F_y, F_z)`` applied at A=(y, z).

    In a frame at A it is ``[0; F]``; ``ᴼf = ᴬX_Oᵀ ᴬf``.
    """
    X_AO = plux(np.eye(3), [0.0, A[0], A[1]])
    return X_AO.T @ np.array([0, 0, 0, 0, F[0], F[1]])


def constrained_motion_explorer():
    """A plate at rest, constrained to a hinge, a slider or the plane, pushed by a force.

    Shows the acceleration ``a = S (SᵀIS)⁻¹ Sᵀ f`` as the acceleration of body points
    (the body is at rest, so the point accelerations are ``a_O + ω̇ × OP``), its
    instantaneous centre, the applied force and the constraint force ``f_c = I a − f``
    (whose line of action passes through the hinge, or is normal to the slider).
    """
    I, corners = plate_body()
    pic = _Picture((5.2, 4.6))
    ax = pic.fig.add_subplot()
    ax.set(xlim=(-1.2, 2.2), ylim=(-1.4, 1.6), aspect="equal", xlabel="y", ylabel="z",
           title="accelerations of body points")
    ax.add_patch(Polygon(corners, closed=True, fc="C0", alpha=0.25, ec="C0"))
    ax.plot([0.6], [0.2], "P", color="k", ms=9)
    field = viz.draw_velocity_field(ax, np.zeros(6), extent=(-1, 2, -1.2, 1.4), n=8,
                                    scale=0.15)
    f_line = viz.draw_force_line(ax, np.zeros(6), scale=0.2, color="C2", label="applied f")
    c_line = viz.draw_force_line(ax, np.zeros(6), scale=0.2, color="C3",
                                 label="constraint $f_c$")
    hinge = ax.plot([], [], "o", ms=10, mfc="white", mec="k", mew=2, zorder=7)[0]
    guide = ax.plot([], [], "-", color="k", lw=3, alpha=0.4)[0]
    ax.legend(loc="lower left", fontsize=8.5)
    pic.fig.tight_layout()
    c = {"joint": W.Dropdown(options=["hinge", "slider", "plane"], value="hinge",
                             description="joint", layout=_control_layout(),
                             style={"description_width": "70px"}),
         "P_y": _slider("hinge y", 0.0, -1, 2), "P_z": _slider("hinge z", 0.2, -1, 1.4),
         "φ": _slider("slider φ", 0.0, -3.14, 3.14),
         "A_y": _slider("force at y", 1.2, -0.2, 1.4), "A_z": _slider("force at z", 0.2, -0.2, 0.6),
         "F": _slider("|F| N", 2.0, 0, 5), "β": _slider("F angle", 1.57, -3.14, 3.14)}
    html = W.HTML()

    def update():
        kind = c["joint"].value
        P = (c["P_y"].value, c["P_z"].value)
        S = {"hinge": lambda: hinge_S(P), "slider": lambda: slider_S(c["φ"].value),
             "plane": lambda: PLANE_S}[kind]()
        beta, F = c["β"].value, c["F"].value
        f = applied_force((c["A_y"].value, c["A_z"].value),
                          (F * math.cos(beta), F * math.sin(beta)))
        alpha_dot = np.linalg.solve(S.T @ I @ S, S.T @ f)
        a = S @ alpha_dot                          # S (SᵀIS)⁻¹ Sᵀ f
        f_c = I @ a - f                            # the body is at rest: no v ×* I v
        field(a)
        f_line(f, anchor=(c["A_y"].value, c["A_z"].value))
        c_line(f_c, anchor=P if kind == "hinge" else (0.6, 0.2))
        hinge.set_data(([P[0]], [P[1]]) if kind == "hinge" else ([], []))
        d = np.array([math.cos(c["φ"].value), math.sin(c["φ"].value)]) * 3
        guide.set_data(*(([0.6 - d[0], 0.6 + d[0]], [0.2 - d[1], 0.2 + d[1]])
                         if kind == "slider" else ([], [])))
        pic.refresh()
        html.value = _readout(f"f      = {_vec(f)}\nα̇      = {_vec(alpha_dot, 3)}\n"
                      f"a      = {_vec(a)}\nf_c    = I a − f\n       = {_vec(f_c)}\n"
                      f"Sᵀ f_c = {_vec(S.T @ f_c, 6)}")

    return _box(pic, c, html, update,
                views={"joint": ["hinge", "slider", "plane"],
                       "β": _grid(-3.14, 3.14, np.pi / 6)})


# ------------------------------------------------- (d) Chapter 2: propagation and Î, Ẑ

def draw_propagation(ax, arrow_scale=0.25):
    """Frames a and b in the y–z plane (rotations about x), for seed 000 §1.

    Frame a sits at the origin with angle ``θ_a`` and spins with ω_a; frame b is at
    ``r_ab`` in a's axes and moves with ``v_ab`` and spins with ω_ab relative to a.
    Returns ``update(θ_a, ω_a, r_ab, v_ab, ω_ab)`` (2-vectors: y, z components) that
    redraws the frames, the relative velocity and the two parts of C_ab (centripetal
    −|ω_a|² r_ab, Coriolis 2 ω_a × v_ab), and returns a dict with ``V_b``, ``C_ab``
    and ``A_b`` (eqs. 4, 9, at A_a = 0 and A_ab = 0; [linear; angular], b's axes).
    """
    from .articulated import local_C, local_X
    frame_a = viz.draw_frame_2d(ax, (0, 0), 0, "a")
    frame_b = viz.draw_frame_2d(ax, (1, 0), 0, "b", color="C0")
    names = [("relative velocity $v_{ab}$", "C1"), ("centripetal $-|\\omega_a|^2 r_{ab}$", "C3"),
             ("Coriolis $2\\omega_a\\times v_{ab}$", "C2"), ("$C_{ab}$ (linear part)", "k")]
    arrows = [ax.quiver([0], [0], [0], [0], color=col, angles="xy", scale_units="xy", scale=1,
                        width=0.01, zorder=5, label=label) for label, col in names]
    path = ax.plot([], [], ":", color="C0", lw=1)[0]
    ax.legend(loc="lower left", fontsize=8.5)

    def update(theta_a, w_a, r_ab, v_ab, w_ab):
        R_a = rotx(theta_a)
        wa, wab = np.array([w_a, 0.0, 0.0]), np.array([w_ab, 0.0, 0.0])
        r, v = np.array([0.0, *r_ab]), np.array([0.0, *v_ab])
        C = local_C(wa, r, v, wab)                                             # (9)
        V_b = local_X(np.eye(3), r) @ np.r_[0, 0, 0, wa] + local_X(np.eye(3), None) @ np.r_[v, wab]  # (4)
        A_b = local_X(np.eye(3), None) @ C
        origin = (R_a @ r)[1:]
        frame_a((0, 0), theta_a)
        frame_b(origin, theta_a)          # b drawn at the instant its axes are a's (R_ab = 1)
        parts = [v, (wa @ r) * wa - (wa @ wa) * r, 2 * cross3(wa, v), C[:3]]
        for arrow, vec in zip(arrows, parts):
            arrow.set_offsets([origin])
            world = arrow_scale * (R_a @ vec)
            arrow.set_UVC([world[1]], [world[2]])
        ang = np.linspace(0, 2 * np.pi, 60)
        rad = math.hypot(*origin)
        path.set_data(rad * np.cos(ang), rad * np.sin(ang))
        return {"V_b": V_b, "C_ab": C, "A_b": A_b}

    return update


def propagation_explorer():
    """Widget for seed 000 §1: sliders for a's angle and spin, b's position, velocity
    and spin relative to a; shows C_ab's centripetal and Coriolis parts (eq. 9)."""
    pic = _Picture((5.0, 5.0))
    ax = pic.fig.add_subplot()
    ax.set(xlim=(-2.2, 2.2), ylim=(-2.2, 2.2), aspect="equal", xlabel="y", ylabel="z",
           title="frame b relative to a spinning frame a")
    draw = draw_propagation(ax)
    pic.fig.tight_layout()
    c = {"θ_a": _slider("θ_a", 0.0, -3.14, 3.14), "ω_a": _slider("ω_a", 1.0, -2, 2),
         "r_y": _slider("r_ab y", 1.2, -2, 2), "r_z": _slider("r_ab z", 0.0, -2, 2),
         "v_y": _slider("v_ab y", 0.0, -2, 2), "v_z": _slider("v_ab z", 1.0, -2, 2),
         "ω_ab": _slider("ω_ab", 0.0, -2, 2)}
    html = W.HTML()

    def update():
        out = draw(c["θ_a"].value, c["ω_a"].value, (c["r_y"].value, c["r_z"].value),
                   (c["v_y"].value, c["v_z"].value), c["ω_ab"].value)
        pic.refresh()
        html.value = _readout("[linear; angular], b's axes\n"
                      f"V_b  = {_vec(out['V_b'])}\nC_ab = {_vec(out['C_ab'])}\n"
                      f"A_b  = {_vec(out['A_b'])}\n(A_a = 0, A_ab = 0)")

    return _box(pic, c, html, update,
                views={"ω_ab": _grid(-2.0, 2.0, 0.5), "v_y": [-1.0, 0.0, 1.0]})


_LIN_ANG = ["$f_x$", "$f_y$", "$f_z$", "$n_x$", "$n_y$", "$n_z$"]


def draw_heatmap(ax, M, title="", vmax=None, labels=_LIN_ANG):
    """A 6x6 matrix as a heat map (diverging colours, 0 white); returns ``update(M)``."""
    M = np.asarray(M, dtype=float)
    vmax = vmax or max(1e-9, np.abs(M).max())
    im = ax.imshow(M, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    ax.set_xticks(range(6), ["$a_x$", "$a_y$", "$a_z$", "$α_x$", "$α_y$", "$α_z$"], fontsize=10)
    ax.set_yticks(range(6), labels, fontsize=10)
    ax.set_title(title, fontsize=11)

    def update(M, title=None):
        im.set_data(np.asarray(M, dtype=float))
        if title is not None:
            ax.set_title(title, fontsize=11)

    return update


def felt_inertias(q2, m2, lengths=(1.0, 1.0), m1=1.0):
    """Body 1 of a planar 2-link arm, in seed 000's centre-of-mass frame, [linear; angular]:
    its own inertia I_1, its articulated inertia Î_1 (joint 2 free) and the composite
    rigid inertia (joint 2 locked) — the last as Î_1 of the arm with link 2 welded on."""
    from .articulated import aba_local_frame
    from .joints import Fixed
    arm = planar_chain(2, length=list(lengths), mass=[m1, m2])
    q, zero = np.array([0.0, q2]), np.zeros(2)
    I_hat = aba_local_frame(arm, q, zero, zero).I_hat
    locked = Model(parent=arm.parent, joints=[None, arm.joints[1], Fixed()],
                   Xtree=[None, arm.Xtree[1], arm.joints[2].XJ([q2]) @ arm.Xtree[2]],
                   I=arm.I, gravity=arm.gravity)
    I_rigid = aba_local_frame(locked, [0.0], [0.0], [0.0]).I_hat
    own = np.diag([m1] * 3 + [m1 * lengths[0] ** 2 / 12, 0.0, m1 * lengths[0] ** 2 / 12])
    return {"own": own, "articulated": I_hat[1], "rigid": I_rigid[1]}


def felt_masses(M):
    """Mass felt by a push at body 1's centre of mass along its y and z axes, for the
    planar motions (y, z, rotation about x): 1 / (e_kᵀ M_plane⁻¹ e_k)."""
    plane = [1, 2, 3]
    Minv = np.linalg.inv(np.asarray(M, dtype=float)[np.ix_(plane, plane)])
    return 1 / Minv[0, 0], 1 / Minv[1, 1]


def articulated_inertia_explorer():
    """Widget for the ABA theorem: body 1 of a planar 2-link arm feels link 2 through
    joint 2. Sliders for q2 and link 2's mass; heat maps of I_1, Î_1 and the rigid
    composite, and the mass felt by a push along body 1's y and z axes."""
    pic = _Picture((8.6, 3.2))
    axes = pic.fig.subplots(1, 3)
    mats = felt_inertias(0.8, 1.0)
    vmax = 3.0
    draws = [draw_heatmap(ax, mats[k], t, vmax) for ax, k, t in zip(
        axes, ("own", "articulated", "rigid"),
        ("own $I_1$", "articulated $\\hat I_1$", "rigid (joint 2 locked)"))]
    pic.fig.tight_layout()
    c = {"q2": _slider("q2", 0.8, -3.14, 3.14),
         "m2": _slider("m2 kg", 1.0, 0.1, 3.0)}     # not 0: a massless leaf has D = 0
    html = W.HTML()

    def update():
        mats = felt_inertias(c["q2"].value, c["m2"].value)
        for d, k in zip(draws, ("own", "articulated", "rigid")):
            d(mats[k])
        pic.refresh()
        felt = {k: felt_masses(M) for k, M in mats.items()}
        html.value = _readout("mass felt by a push\nalong body 1's  y      z\n" + "\n".join(
            f"{k:12s}{a:6.3f} {b:6.3f}" for k, (a, b) in felt.items()))

    return _box(pic, c, html, update,
                views={"q2": _grid(-2.8, 2.8, 0.4), "m2": [0.3, 1.0, 3.0]})



# ------------------------------------------- (e) Chapter 2: one contact impulse on an arm

__all__ += ["CONTACT_ARM", "CONTACT_TIP", "draw_contact", "contact_explorer"]

CONTACT_ARM = planar_chain(3, length=[1.0, 0.8, 0.6], mass=[2.0, 1.5, 1.0])
"""The planar 3-link arm of the contact section (links 1.0, 0.8, 0.6 m; 2, 1.5, 1 kg)."""
CONTACT_TIP = np.array([0.0, 0.6, 0.0])
"""The tip of its last link, in body-3 coordinates: the contact point."""


def draw_contact(ax, arm=CONTACT_ARM, tip=CONTACT_TIP, scale=0.25, impulse_scale=0.6):
    """The tip of a planar arm hitting the ground (a horizontal line through the tip).

    Returns ``update(q, qd, e, mu)``: it resolves the impact with
    :func:`rbdlearn.contact_impulse` (normal +z, body = the last link), redraws the arm,
    the ground, the tip velocity before (grey) and after (green) the impact — arrows of
    length ``scale·|v|`` — and the impulse ``P`` on the tip (red, ``impulse_scale·|P|``),
    and returns the :class:`rbdlearn.impulses.ContactImpulse`.
    """
    from .impulses import contact_impulse
    i = arm.N
    drawing = viz.ChainDrawing(ax, arm, np.zeros(arm.N), coms=False)
    drawing.coms.set_visible(False)          # coms=False leaves a line through the COMs
    ground = ax.plot([], [], "-", color="0.3", lw=2)[0]
    hatch = ax.fill_between([0.0, 0.0], [0.0, 0.0], color="0.85", zorder=0)
    style = dict(angles="xy", scale_units="xy", scale=1, width=0.009, zorder=6)
    arrows = {k: ax.quiver([0.0], [0.0], [0.0], [0.0], color=col, label=lab, **style)
              for k, col, lab in (("v_before", "0.55", "tip velocity before"),
                                  ("v_after", "C2", "tip velocity after"),
                                  ("P", "C3", "impulse P"))}
    xlim = ax.get_xlim()

    def update(q, qd, e, mu):
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        g = drawing.update(q)
        p_tip = g["tips"][-1]
        res = contact_impulse(arm, q, qd, i, tip, (0.0, 0.0, 1.0), e, mu)
        ground.set_data(list(xlim), [p_tip[1]] * 2)
        hatch.set_paths([[[xlim[0], p_tip[1]], [xlim[1], p_tip[1]],
                          [xlim[1], p_tip[1] - 5.0], [xlim[0], p_tip[1] - 5.0]]])
        for k, s in (("v_before", scale), ("v_after", scale), ("P", impulse_scale)):
            vec = s * getattr(res, k)[1:]           # y, z components (world)
            arrows[k].set_offsets([p_tip])
            arrows[k].set_UVC([vec[0]], [vec[1]])
        return res

    return update


def contact_explorer():
    """Widget for seed 000 §2.8 used in a contact step: the tip of a planar 3-link arm
    (:data:`CONTACT_ARM`) strikes the ground. Sliders for the configuration, the joint
    velocities at impact, the restitution e and the friction μ; shows the impulse, the
    tip velocity before and after, the mode (stick / slide), Δq̇ and the change of
    kinetic energy."""
    from .integrate import energy
    pic = _Picture((5.0, 4.6))
    ax = pic.fig.add_subplot()
    ax.set(xlim=(-2.6, 2.6), ylim=(-2.8, 1.4), aspect="equal", xlabel="y [m]",
           ylabel="z [m]", title="an impact at the tip")
    draw = draw_contact(ax)
    ax.legend(loc="upper left", fontsize=8.5)
    pic.fig.tight_layout()
    c = {"q1": _slider("q1", -0.8, -3.14, 0.0), "q2": _slider("q2", -0.3, -2.5, 2.5),
         "q3": _slider("q3", 0.1, -2.5, 2.5), "qd1": _slider("q̇1", -1.9, -4, 4),
         "qd2": _slider("q̇2", 1.0, -4, 4), "qd3": _slider("q̇3", 0.2, -4, 4),
         "e": _slider("e", 0.5, 0.0, 1.0), "mu": _slider("μ", 0.3, 0.0, 1.5)}
    html = W.HTML()

    def update():
        q = np.array([c[f"q{k}"].value for k in (1, 2, 3)])
        qd = np.array([c[f"qd{k}"].value for k in (1, 2, 3)])
        res = draw(q, qd, c["e"].value, c["mu"].value)
        pic.refresh()
        Pn, Pt = res.P[2], res.P[1]
        ratio = f"{abs(Pt) / Pn:.3f}" if Pn > 0 else "—"
        html.value = _readout(f"mode      {res.mode}\n"
                      f"v before  (y, z) = {_vec(res.v_before[1:])} m/s\n"
                      f"v after   (y, z) = {_vec(res.v_after[1:])} m/s\n"
                      f"impulse P (y, z) = {_vec(res.P[1:])} N s\n"
                      f"|P_t| / P_n      = {ratio}\n"
                      f"Δq̇              = {_vec(res.dqd)} rad/s\n"
                      f"kinetic energy change = {energy(CONTACT_ARM, q, qd + res.dqd) - energy(CONTACT_ARM, q, qd):+.3f} J")

    return _box(pic, c, html, update,
                views={"e": _grid(0.0, 1.0, 0.25), "mu": [0.0, 0.15, 0.3, 0.6, 1.0, 1.5]})


# ------------------------------------------- (e) Chapter 2: the ball joint, swing and twist

def draw_ball_joint(ax, swing_max=None, length=1.0):
    """A ball joint on a 3-D axes: the socket frame (thin, fixed), the plug frame
    (thick, x red, y green, z blue), the cone ``θ_swing ≤ swing_max`` about the socket's
    z axis (omitted for None) and the arc of the swing angle between the two z axes.
    Returns ``update(R, swing_max=None)``: redraws the plug at orientation R (plug
    coordinates → socket coordinates); the cone turns red when R lies outside it."""
    from .joints import swing_twist
    colors = ("C3", "C2", "C0")
    for k, col in enumerate(colors):                         # the socket frame
        ax.plot(*np.outer(np.eye(3)[k], [0, 0.75 * length]), "--", color=col, lw=1)
    plug = [ax.plot([], [], [], "-", color=col, lw=3)[0] for col in colors]
    arc = ax.plot([], [], [], "-", color="k", lw=1.5)[0]
    ring = np.linspace(0, 2 * np.pi, 41)
    cone = [ax.plot([], [], [], "-", color="0.4", lw=1)[0] for _ in range(9)]
    state = {"swing_max": swing_max}
    ax.set(xlim=(-length, length), ylim=(-length, length), zlim=(-length, length),
           xlabel="x", ylabel="y", zlabel="z", xticks=[-length, 0, length],
           yticks=[-length, 0, length], zticks=[-length, 0, length])
    ax.set_box_aspect((1, 1, 1))

    def draw_cone(smax):
        if smax is None:
            for line in cone:
                line.set_data_3d([], [], [])
            return
        s, c = math.sin(smax) * length, math.cos(smax) * length
        cone[0].set_data_3d(s * np.cos(ring), s * np.sin(ring), np.full_like(ring, c))
        for line, a in zip(cone[1:], np.linspace(0, 2 * np.pi, 8, endpoint=False)):
            line.set_data_3d([0, s * math.cos(a)], [0, s * math.sin(a)], [0, c])

    def update(R, swing_max=None):
        R = np.asarray(R, dtype=float)
        if swing_max is not None:
            state["swing_max"] = swing_max
        draw_cone(state["swing_max"])
        for k, line in enumerate(plug):
            line.set_data_3d(*np.outer(R[:, k], [0, length]))
        swing, _ = swing_twist(R)
        b = R[:, 2]                                          # the plug's z axis
        u = b - b[2] * np.eye(3)[2]                          # its part ⟂ socket z
        u = u / np.linalg.norm(u) if np.linalg.norm(u) > 1e-9 else np.eye(3)[0]
        a = np.linspace(0, swing, 20)
        pts = 0.5 * length * (np.outer(np.cos(a), np.eye(3)[2]) + np.outer(np.sin(a), u))
        arc.set_data_3d(pts[:, 0], pts[:, 1], pts[:, 2])
        outside = state["swing_max"] is not None and swing > state["swing_max"]
        for line in cone:
            line.set_color("C3" if outside else "0.4")
        return swing

    update(np.eye(3))
    return update


def ball_joint_explorer(swing_max=math.radians(40)):
    """Widget for seed 000 §2.5.3: sliders for the azimuth φ of the swing, the swing and
    twist angles and the cone limit; shows socket and plug frames and the cone, and
    reads out R = R_swing(φ, θ_s) Rz(θ_t) (:func:`rbdlearn.joints.from_swing_twist`),
    the angles recovered from R (eqs. 27, 29), the ZYX Euler angles of the same R with
    det(SᵀS) = cos² q_y, and the limit functions g (≤ 0 inside the limit)."""
    from .joints import from_swing_twist, swing_twist, swing_twist_limit_violation
    pic = _Picture((4.4, 4.4), dpi=72)
    ax = pic.fig.add_subplot(projection="3d")
    ax.view_init(elev=20, azim=35)
    draw = draw_ball_joint(ax, swing_max)
    pic.fig.subplots_adjust(0, 0, 1, 1)
    c = {"φ": _slider("φ", 0.0, -3.14, 3.14), "swing": _slider("swing", 0.5, 0.0, 3.0),
         "twist": _slider("twist", 0.3, -3.14, 3.14),
         "limit": _slider("swing max", swing_max, 0.05, 3.0)}
    html = W.HTML()

    def update():
        R = from_swing_twist(c["φ"].value, c["swing"].value, c["twist"].value)
        draw(R, c["limit"].value)
        pic.refresh()
        swing, twist = swing_twist(R)
        qz, qy, qx = zyx_angles(R)
        g, _ = swing_twist_limit_violation(R, c["limit"].value)
        html.value = _readout(
            "R =\n" +
            "\n".join(_vec(row, 3) for row in R) +
            f"\n\nfrom R:  swing = arccos R_zz   = {swing:+.3f}\n"
            f"         twist (corr. eq. 29) = {twist:+.3f}\n"
            f"ZYX:     (q_z, q_y, q_x) = {_vec((qz, qy, qx), 3)}\n"
            f"         det(SᵀS) = cos² q_y = {math.cos(qy) ** 2:.3f}\n"
            f"limit:   g_swing = {g[0]:+.3f}  "
            f"({'outside' if g[0] > 0 else 'inside'} the cone)")

    return _box(pic, c, html, update,
                views={"swing": _grid(0.0, 3.0, 0.25), "φ": [-1.57, 0.0, 1.57]})


__all__ += ["zyx_angles", "draw_ball_joint", "ball_joint_explorer"]   # zyx_angles: from joints


def inward_pass_steps(model, q):
    """Î of every body after each step of the ABA's inward pass (seed 000's frames).

    ``steps[s][i]`` is body i's accumulated articulated inertia once bodies N, …, N−s+1
    have been processed: its own inertia plus the contributions (eq. 25) of its
    children processed so far. Each is computed as Î_i of the subtree of i without the
    children not yet processed (at rest, τ = 0; Î depends on q only).
    """
    from .articulated import aba_local_frame
    N = model.N
    children = [[c for c in range(1, N + 1) if model.parent[c] == i] for i in range(N + 1)]
    steps = []
    for s in range(N + 1):
        done = set(range(N - s + 1, N + 1))
        mats = [None]
        for i in range(1, N + 1):
            drop = {b for c in children[i] if c not in done for b in model.subtree(c)}
            keep = [b for b in model.subtree(i) if b not in drop]
            new = {b: k for k, b in enumerate(keep, start=1)}
            sub = Model(parent=[-1] + [0 if b == i else new[model.parent[b]] for b in keep],
                        joints=[None] + [model.joints[b] for b in keep],
                        Xtree=[None] + [model.Xtree[b] for b in keep],
                        I=[None] + [model.I[b] for b in keep])
            q_sub = np.concatenate([np.zeros(0)] + [q[model.q_slices[b]] for b in keep])
            zero = np.zeros(sub.nv)
            mats.append(aba_local_frame(sub, q_sub, zero, zero).I_hat[1])
        steps.append(mats)
    return steps


def small_trees():
    """A few small trees (name → (model, q)) for the ABA step-through."""
    from .model import floating_base, random_q, random_tree
    rng = np.random.default_rng(2)
    trees = {"3-link planar chain": planar_chain(3),
             "branching tree, 5 bodies": random_tree(5, seed=20, p_chain=0.4, joint_types=(
                 "revolute", "prismatic", "spherical")),
             "chain with a ball joint": random_tree(4, seed=11, p_chain=1.0,
                                                    joint_types=("revolute", "spherical", "prismatic")),
             "floating base + 2 bodies": floating_base(
                 random_tree(2, seed=3, joint_types=("revolute",)),
                 mcI(2.0, [0.1, 0.0, 0.0], np.diag([0.2, 0.3, 0.4])))}
    return {name: (model, random_q(model, rng)) for name, model in trees.items()}


def aba_step_explorer():
    """Step through the ABA's inward pass on a small tree: one 6x6 heat map of Î per body."""
    trees = small_trees()
    cache = {}
    pic = _Picture((10.0, 2.6))
    html = W.HTML()
    c = {"tree": W.Dropdown(options=list(trees), description="tree",
                            layout=_control_layout()),
         "step": W.IntSlider(value=0, min=0, max=5, description="step",
                             layout=_control_layout())}

    shown = {"name": None, "draws": []}

    def update():
        name = c["tree"].value
        model, q = trees[name]
        if name not in cache:
            cache[name] = inward_pass_steps(model, q)
        steps = cache[name]
        if shown["name"] != name:                # new tree: new axes (slow path)
            c["step"].max = model.N
            vmax = max(np.abs(M).max() for M in steps[-1][1:])
            pic.fig.clear()
            axes = np.atleast_1d(pic.fig.subplots(1, model.N))
            shown["draws"] = [draw_heatmap(ax, steps[0][i], "", vmax)
                              for i, ax in zip(range(1, model.N + 1), axes)]
            for ax in axes:
                ax.set_xticks([]), ax.set_yticks([])
            shown["title"] = pic.fig.suptitle("", fontsize=10)
            pic.fig.subplots_adjust(top=0.8)          # room for the title over the panels
            shown["name"] = name
            html.value = _readout("parent λ(i): " + str(model.parent[1:])
                          + "\njoints: " + ", ".join(type(j).__name__ for j in model.joints[1:])
                          + "\nstep s: bodies N … N−s+1 have added their\n"
                            "contribution (eq. 25) to their parents")
        s = min(c["step"].value, model.N)
        for i, draw in enumerate(shown["draws"], start=1):
            state = "final" if i > model.N - s else "next" if i == model.N - s else ""
            draw(steps[s][i], f"body {i} {state}")
        shown["title"].set_text(f"{name}: after {s} of {model.N} steps")
        pic.refresh()

    return _box(pic, c, html, update,
                views={"tree": list(trees),
                       "step": list(range(max(m.N for m, _ in trees.values()) + 1))})



# ------------------------------------------------------------ chapter 3: how H fills


__all__ += ["parse_parents", "tree_from_parents", "fill_owner", "draw_fill",
            "crb_fill_explorer"]


def parse_parents(text):
    """The parent array λ(1..N) from text such as ``"0 1 1 2"`` or ``"0, 1, 1, 2"``."""
    try:
        parents = [int(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise RbdlearnError(f"parent array: expected whole numbers, got {text!r}") from None
    if not parents:
        raise RbdlearnError("parent array: give at least one body (e.g. '0 1 1')")
    return parents


def tree_from_parents(parents, seed=0):
    """A model with parent array ``[-1] + parents`` (revolute joints with random axes,
    random bodies); ``Model`` raises ValueError unless parent[i] < i for every body."""
    from .model import random_tree
    shape = random_tree(len(parents), seed=seed, joint_types=("revolute",))
    return Model(parent=[-1] + list(parents), joints=shape.joints, Xtree=shape.Xtree, I=shape.I)


def fill_owner(model):
    """owner[k, l]: the body whose composite force fills entry H_kl (the deeper of the two
    bodies of velocities k and l when one is on the other's path to the root), 0 where the
    two are on different branches and H_kl is always zero."""
    from .crb import support_mask
    body = np.array([i for i in range(1, model.N + 1) for _ in range(model.joints[i].nv)])
    M = support_mask(model)                        # M[k, l]: body k on the path of body l
    return np.where(M, body[None, :], np.where(M.T, body[:, None], 0))


def _tree_layout(model):
    """(x, y) of every body for a drawing: leaves spread along x, depth downwards."""
    children = [[c for c in range(1, model.N + 1) if model.parent[c] == i]
                for i in range(model.N + 1)]
    x, y, next_x = {}, {}, [0.0]

    def place(i, depth):
        y[i] = -depth
        for c in children[i]:
            place(c, depth + 1)
        if children[i]:
            x[i] = sum(x[c] for c in children[i]) / len(children[i])
        else:
            x[i], next_x[0] = next_x[0], next_x[0] + 1.0

    place(0, 0)
    return x, y


def draw_fill(ax_tree, ax_H, model, H, owner, fontsize=10):
    """Draw a tree and its H; returns ``show(k)``, which shows step k of the filling
    (bodies 1..k done): the tree with the composite body C_k shaded (red: body k,
    orange: the rest of C_k, blue: bodies done), and H with the entries filled so far
    (grey: not yet, white "0": always zero, black frames: the entries of body k)."""
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle
    x, y = _tree_layout(model)
    for i in range(1, model.N + 1):
        ax_tree.plot([x[model.parent[i]], x[i]], [y[model.parent[i]], y[i]], "-", color="0.6", lw=1.5)
    nodes = [ax_tree.plot(x[i], y[i], "o", ms=13, color="k")[0] for i in range(model.N + 1)]
    for i in range(model.N + 1):
        ax_tree.text(x[i], y[i], str(i), ha="center", va="center", color="w", fontsize=fontsize)
    ax_tree.set_xlim(min(x.values()) - 0.6, max(x.values()) + 0.6)
    ax_tree.set_ylim(min(y.values()) - 0.6, 0.6)
    ax_tree.axis("off")

    colors = colormaps["RdBu_r"](np.clip(H / max(1e-9, np.abs(H).max()) / 2 + 0.5, 0, 1))
    colors[owner == 0] = (1.0, 1.0, 1.0, 1.0)                   # zero: different branches
    image = ax_H.imshow(colors, interpolation="nearest")
    for r, c in zip(*np.nonzero(owner == 0)):
        ax_H.text(c, r, "0", ha="center", va="center", fontsize=fontsize - 1, color="0.5")
    labels = [str(b) for b in _velocity_body_labels(model)]
    ax_H.set_xticks(range(len(labels)), labels, fontsize=fontsize - 1)
    ax_H.set_yticks(range(len(labels)), labels, fontsize=fontsize - 1)
    frames = [ax_H.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, ec="k", lw=1.5))
              for r, c in zip(*np.nonzero(owner > 0))]
    where = list(zip(*np.nonzero(owner > 0)))

    def show(k):
        inside = set(model.subtree(k)) if k > 0 else set()
        for i, node in enumerate(nodes):
            node.set_color("k" if i == 0 else "C3" if i == k else "C1" if i in inside
                           else "C0" if i < k else "0.75")
        rgba = colors.copy()
        rgba[owner > k] = (0.82, 0.82, 0.82, 1.0)               # not filled yet
        image.set_data(rgba)
        for frame, (r, c) in zip(frames, where):
            frame.set_visible(owner[r, c] == k)
        ax_tree.set_title(f"composite body $C_{{{k}}}$" if k else "tree (0 = base)",
                          fontsize=fontsize + 1)
        ax_H.set_title(f"H after bodies 1..{k}" if k else "H: nothing filled", fontsize=fontsize + 1)

    return show


def _velocity_body_labels(model):
    return [i for i in range(1, model.N + 1) for _ in range(model.joints[i].nv)]


def crb_fill_explorer(parents="0 1 2 1 4 4 3"):
    """Edit a tree's parent array and step through the bodies, watching H fill."""
    from .crb import crba
    pic = _Picture((8.0, 3.6))
    html = W.HTML()
    c = {"parents": W.Text(value=parents, description="λ(1..N)", continuous_update=False,
                           layout=_control_layout()),
         "step": W.IntSlider(value=0, min=0, max=len(parse_parents(parents)), description="body",
                             layout=_control_layout())}
    state = {"text": None}

    def update():
        if c["parents"].value != state["text"]:            # a new tree (or a typo): redraw
            try:
                model = tree_from_parents(parse_parents(c["parents"].value))
            except ValueError as err:
                html.value = _readout(err, error=True)
                return
            q = np.random.default_rng(1).uniform(-np.pi, np.pi, model.nq)
            owner = fill_owner(model)
            pic.fig.clear()
            ax_tree, ax_H = pic.fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.1]})
            state.update(text=c["parents"].value, model=model, owner=owner,
                         show=draw_fill(ax_tree, ax_H, model, crba(model, q), owner))
            c["step"].max = model.N
        model, owner = state["model"], state["owner"]
        k = min(c["step"].value, model.N)
        state["show"](k)
        zeros = int((owner == 0).sum())
        html.value = _readout(f"N = {model.N}, nv = {model.nv}: {zeros} of {model.nv ** 2} entries\n"
                      "are zero whatever q (white)\n"
                      + (f"body {k} fills the entries (j, {k}) and ({k}, j)\n"
                         f"for j on its path {model.ancestors(k)}" if k else
                         "move the slider to process bodies 1, 2, …"))
        pic.refresh()

    return _box(pic, c, html, update,
                views={"step": list(range(8))})


# ------------------------------------------------- (h) four-bar explorer (Chapter 5)

FOUR_BAR_JOINTS = ("crank", "coupler", "rocker", "cut")
"""The four-bar's joint velocities θ̇_J in order: three real joints and the cut joint."""


def four_bar_sweep(mech, angles, guess=(0.8, -2.6, 1.8)):
    """The four-bar assembled at each crank angle (crank = θ_G while assembling; each
    assembly starts from the previous one, so the linkage stays on one branch) and
    cond(J_S) for every choice of the single independent joint θ_G, and for the
    pivoted choice of ``choose_split``. Returns a dict of arrays: ``q`` (n, 4),
    ``cond`` (n, 4: column k for θ_G = joint k), ``cond_pivoted`` (n), ``G_pivoted`` (n)."""
    from .closed_chains import assemble, choose_split, loop_jacobian
    crank_split = choose_split(mech, assemble(mech, [angles[0], *guess], independent=[0]),
                               independent=[0])
    qs, conds, cond_p, G_p = [], [], [], []
    q = np.array([angles[0], *guess])
    for a in angles:
        q = assemble(mech, np.r_[a, q[1:]], crank_split)
        JCm = loop_jacobian(mech, q)[list(crank_split.rows)]
        conds.append([np.linalg.cond(np.delete(JCm, k, axis=1)) for k in range(4)])
        split = choose_split(mech, q)
        cond_p.append(np.linalg.cond(JCm[:, list(split.S)]))
        G_p.append(split.G[0])
        qs.append(q)
    return {"q": np.array(qs), "cond": np.array(conds), "cond_pivoted": np.array(cond_p),
            "G_pivoted": np.array(G_p)}


def four_bar_explorer(mech=None, n_sweep=121):
    """The four-bar of ``closed_chains.four_bar`` (default geometry) with a slider for
    the crank angle: each move assembles the loop (Newton on θ_S, crank held), draws
    the linkage, and shows the pivoted split, H = −J_S⁻¹ J_G and cond(J_S) for every
    choice of θ_G — also as curves over a full turn of the crank, with the current angle
    marked."""
    from .closed_chains import assemble, choose_split, four_bar, reduction
    mech = four_bar() if mech is None else mech
    angles = np.linspace(0.0, 2 * np.pi, n_sweep)
    sweep = four_bar_sweep(mech, angles)
    pic = _Picture((8.2, 3.6))
    ax, bx = pic.fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.15]})
    ax.set(xlim=(-1.3, 3.3), ylim=(-1.6, 2.4), xlabel="y [m]", ylabel="z [m]",
           title="four-bar, assembled")
    draw = viz.draw_linkage(ax, mech, sweep["q"][0])
    for k, name in enumerate(FOUR_BAR_JOINTS):
        bx.semilogy(angles, np.minimum(sweep["cond"][:, k], 1e5), color=f"C{k}", lw=1.2,
                    label=f"θ_G = {name}")
    bx.semilogy(angles, sweep["cond_pivoted"], "k--", lw=2, label="pivoted")
    bx.set(ylim=(1, 1e4), xlim=(0, 2 * np.pi), xlabel="crank angle [rad]",
           ylabel="cond($J_S$)", title="conditioning of each split")
    marker = bx.axvline(0.0, color="k", lw=0.8)
    bx.legend(fontsize=8.5, loc="upper right", ncol=2)
    pic.fig.tight_layout()
    # blitting: the axes, curves and legend are drawn once; a move redraws only the
    # linkage and the marker onto a copy of that background and encodes the pixels
    moving = sorted(ax.lines, key=lambda artist: artist.get_zorder()) + [marker]
    for artist in moving:
        artist.set_animated(True)
    canvas = pic.fig.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(pic.fig.bbox)

    def blit():
        canvas.restore_region(background)
        for artist in moving:
            artist.axes.draw_artist(artist)
    c = {"crank": _slider("crank", 1.0, 0.0, 2 * np.pi)}
    html = W.HTML()
    crank_split = choose_split(mech, sweep["q"][0], independent=[0])
    state = {"q": sweep["q"][0]}

    def update():
        a = c["crank"].value
        nearest = sweep["q"][np.argmin(np.abs(angles - a))]      # same branch as the sweep
        q = assemble(mech, np.r_[a, nearest[1:]], crank_split)
        state["q"] = q
        split = choose_split(mech, q)
        r = reduction(mech, q, split=split)
        JCm = r.JC[list(split.rows)]
        conds = [np.linalg.cond(np.delete(JCm, k, axis=1)) for k in range(4)]
        draw(q)
        marker.set_xdata([a, a])
        pic.refresh(blit)
        names = [FOUR_BAR_JOINTS[k] for k in split.S]
        html.value = _readout(
            f"θ_J = {_vec(np.angle(np.exp(1j * q)))} rad (wrapped)\n\n"
            f"pivoted split: θ_G = {FOUR_BAR_JOINTS[split.G[0]]}\n"
            f"  θ_S = {', '.join(names)}\n  H = −J_S⁻¹J_G = {_vec(r.H[:, 0])}\n\n"
            "cond(J_S) with θ_G =\n" + "\n".join(
                f"  {n:8s}{x:10.3g}" for n, x in zip(FOUR_BAR_JOINTS, conds))
            + f"\n  pivoted {np.linalg.cond(r.JS):10.3g}")

    box = _box(pic, c, html, update,
               views={"crank": _grid(0.0, 6.25, 0.25)})
    box.sweep, box.state = sweep, state
    return box


# ------------------------------------------------ chapter 4: an arm sliding on the floor

__all__ += ["floor_arm_posture", "floor_arm_run", "draw_floor_arm", "floor_arm_explorer"]


def floor_arm_posture(y, length=0.5):
    """The posture of the 2-link :func:`rbdlearn.constrained.PlanarArmOnFloor` (two links
    of ``length``) with the hand on the floor at distance ``y`` from the base and both
    links below it, the paper's V: q = [−π/2 − φ, 2φ] with cos φ = y / (2 l)."""
    if not 0 < y < 2 * length:
        raise RbdlearnError(f"the hand must be on the floor within reach, "
                            f"0 < y < {2 * length:g} m; got y = {y!r}")
    phi = math.acos(y / (2 * length))
    return np.array([-math.pi / 2 - phi, 2 * phi])


def floor_arm_run(tau, K, y0, t_end=1.2, dt=0.05, inertia=0.5 ** 2 / 3):
    """The 2-link arm of the paper's §5.2 (I = m l²/3) started at rest with the hand at
    ``y0``, driven by constant ``tau``, friction ``K``: ``(arm, trajectory)`` from
    :func:`rbdlearn.constrained.simulate` with the KKT solution (cheap enough for a
    slider: about 2 ms per RK4 step, forces included)."""
    from .constrained import PlanarArmOnFloor, simulate
    arm = PlanarArmOnFloor(2, inertia=inertia, friction=K)
    return arm, simulate(arm, floor_arm_posture(y0), np.asarray(tau, dtype=float), t_end, dt,
                         method="kkt")


def draw_floor_arm(ax_arm, ax_z, ax_y, force_scale=0.03, friction_scale=1.0):
    """The arm on the floor (``ax_arm``) with the forces as arrows: ⁰f_i on link i at joint
    i (green), the normal force f_n (red) and the friction f_t (orange, drawn
    ``friction_scale`` times longer) at the hand; the z components of ⁰f_i with f_n
    (``ax_z``) and the y components with f_t (``ax_y``) against time, with a cursor.
    Returns ``show(arm, traj, k, new_run=True)``; with ``new_run=False`` only the arm,
    the arrows and the cursors move. ``show.artists`` lists every artist that moves."""
    ax_arm.axhline(0, color="0.4", lw=1.5)
    ax_arm.axhspan(0, 0.05, color="0.85")
    ax_arm.set(xlim=(-0.15, 1.1), ylim=(-0.8, 0.5), aspect="equal", xticks=[0, 0.5, 1],
               yticks=[-0.5, 0, 0.5])
    drawing = None
    arrows = ax_arm.quiver(np.zeros(4), np.zeros(4), np.zeros(4), np.zeros(4),
                           color=["C2", "C2", "C3", "C1"], angles="xy", scale_units="xy",
                           scale=1, width=0.012, zorder=6)
    label = ax_arm.text(-0.1, 0.4, "", fontsize=9)
    lines = {}
    for ax, c, name, hand in ((ax_z, 2, "z", "f_n"), (ax_y, 1, "y", "f_t")):
        lines[c] = [ax.plot([], [], color=f"C{i}", label=f"f{i + 1}{name}")[0]
                    for i in range(2)] + [ax.plot([], [], "k--", label=hand)[0]]
        lines[c, "cursor"] = ax.axvline(0, color="0.5", lw=0.8)
        ax.yaxis.set_major_locator(MaxNLocator(3))
        ax.legend(fontsize=8.5, ncol=3, loc="upper right", frameon=False)
        ax.set_title(f"{name} components [N]", fontsize=10, loc="left")
    ax_z.tick_params(labelbottom=False)
    ax_y.set_xlabel("t [s]")

    def show(arm, traj, k, new_run=True):
        """Show row k of ``traj``; returns True when an axis range changed."""
        nonlocal drawing
        changed = drawing is None
        if drawing is None:
            drawing = viz.ChainDrawing(ax_arm, arm.model, traj.q[k])
            show.artists += drawing.links + [drawing.joints, drawing.coms]
        if new_run:
            for c, hand in ((2, traj.f_n), (1, traj.f_t[:, 1])):
                for i in range(2):
                    lines[c][i].set_data(traj.t, traj.link_forces[:, i, c])
                lines[c][2].set_data(traj.t, hand)
                ax = lines[c][0].axes
                data = np.concatenate([traj.link_forces[:, :, c].ravel(), hand])
                lo, hi = ax.get_ylim()
                span = max(np.ptp(data), 0.02)
                if changed or data.min() < lo or data.max() > hi or hi - lo > 4 * span:
                    step = 10.0 ** math.floor(math.log10(span))     # new range (slow redraw)
                    ax.set_ylim(math.floor(data.min() / step - 0.5) * step,
                                math.ceil(data.max() / step + 0.5) * step)
                    changed = True
                if ax.get_xlim() != (0, traj.t[-1]):
                    ax.set_xlim(0, traj.t[-1])
                    changed = True
        g = drawing.update(traj.q[k])
        f = traj.link_forces[k]
        hand = g["tips"][-1]
        arrows.set_offsets([g["origins"][1], g["origins"][2], hand, hand])
        arrows.set_UVC(force_scale * np.array([f[0, 1], f[1, 1], 0, friction_scale * traj.f_t[k, 1]]),
                       force_scale * np.array([f[0, 2], f[1, 2], traj.f_n[k], 0]))
        for c in (1, 2):
            lines[c, "cursor"].set_xdata([traj.t[k], traj.t[k]])
        label.set_text(f"t = {traj.t[k]:.2f} s")
        return changed

    # what moves (a widget redraws only these over a stored background)
    show.artists = [arrows, label] + lines[1] + lines[2] + [lines[1, "cursor"], lines[2, "cursor"]]
    return show


def floor_arm_explorer(t_end=1.2, dt=0.05):
    """Widget for Chapter 4: the paper's 2-link arm sliding on the floor. Sliders for the
    torques τ₁, τ₂, the friction K and the hand's initial y (the posture follows by
    :func:`floor_arm_posture`) re-run the short simulation (``t_end`` s at ``dt``,
    :func:`floor_arm_run`); the time slider only moves the picture along the run. Only
    the moving artists are redrawn over a stored background (blitting); the axes are
    redrawn when a new run needs other force ranges."""
    pic = _Picture((7.6, 3.6))
    grid = pic.fig.add_gridspec(2, 2, width_ratios=[1.05, 1])
    ax_arm = pic.fig.add_subplot(grid[:, 0])
    ax_z, ax_y = pic.fig.add_subplot(grid[0, 1]), pic.fig.add_subplot(grid[1, 1])
    ax_arm.set_title("$^0f_i$ (green), $f_n$ (red), $10\\,f_t$ (orange)", fontsize=10)
    show = draw_floor_arm(ax_arm, ax_z, ax_y, friction_scale=10.0)
    pic.fig.tight_layout()
    c = {"tau1": _slider("τ1 [N m]", 0.0, -15, 15), "tau2": _slider("τ2 [N m]", -1.225, -5, 5),
         "K": _slider("K", 0.01, 0.0, 0.5), "y0": _slider("hand y0", 0.966, 0.2, 0.98),
         "t": _slider("t [s]", 0.0, 0.0, t_end, step=dt)}
    html = W.HTML()
    state = {"key": None}
    # the last runs, by (τ1, τ2, K, y0): a run comes back without a new simulation (the
    # kernel-free form visits each K once for every t)
    runs = {}
    canvas = pic.fig.canvas

    def blit():
        canvas.restore_region(state["background"])
        for artist in show.artists:
            pic.fig.draw_artist(artist)

    def update():
        key = (c["tau1"].value, c["tau2"].value, c["K"].value, c["y0"].value)
        if key != state["key"]:
            if key not in runs:
                try:
                    runs[key] = floor_arm_run(key[:2], key[2], key[3], t_end, dt)
                except ValueError as err:      # a singular posture, or a run that blew up
                    html.value = _readout(err, error=True)
                    return
                if len(runs) > 16:
                    del runs[next(iter(runs))]             # the oldest
            arm, traj = runs[key]
            state.update(key=key, arm=arm, traj=traj, fresh=True)
        arm, traj = state["arm"], state["traj"]
        k = traj.at(c["t"].value)
        if show(arm, traj, k, new_run=state["fresh"]) or "background" not in state:
            for artist in show.artists:           # moving parts: drawn over the background
                artist.set_animated(True)
            canvas.draw()                         # the slow path: axes, ticks, labels
            state["background"] = canvas.copy_from_bbox(pic.fig.bbox)
        state["fresh"] = False
        pic.refresh(blit)
        f = traj.link_forces[k]
        html.value = _readout(f"t = {traj.t[k]:.2f} s   q = {_vec(traj.q[k])} rad\n"
                      f"hand y = {traj.r[k, 1]:.3f} m, |C| = {abs(traj.C[k]):.1e} m\n"
                      f"f_n = {_num(traj.f_n[k], 3)} N   f_t = {_num(traj.f_t[k, 1], 3)} N\n"
                      f"⁰f_1 (y, z) = {_vec(f[0, 1:], 3)} N\n"
                      f"⁰f_2 (y, z) = {_vec(f[1, 1:], 3)} N")

    return _box(pic, c, html, update,
                views={"t": _grid(0.0, t_end, 0.1), "K": [0.0, 0.01, 0.1]})


# ------------------------------------- Chapter 5: the human figure lets go of the bar

def draw_figure_views(axes, bar_height, bar_y=0.0, half_width=0.6):
    """Front (x-z) and side (y-z) views of a stick figure under a bar on two axes.
    Returns ``update(skeleton)`` taking the polylines of
    :func:`rbdlearn.closed_chains.figure_skeleton`."""
    lines = []
    for ax, (a, b), label in zip(axes, ((0, 2), (1, 2)), ("front: x–z", "side: y–z")):
        if a == 0:
            ax.plot([-half_width, half_width], [bar_height, bar_height], color="0.3", lw=3)
        else:
            ax.plot([bar_y], [bar_height], "o", color="0.3", ms=8)
        ax.set(aspect="equal", xlim=(-1.2, 1.2), ylim=(bar_height - 2.3, bar_height + 0.3),
               xlabel=f"{'xy'[a]} [m]", ylabel="z [m]", title=label)
        lines.append([ax.plot([], [], "-o", color="C0", lw=2, ms=2)[0] for _ in range(7)])

    def update(skeleton):
        for view, (a, b) in zip(lines, ((0, 2), (1, 2))):
            for line, pts in zip(view, skeleton):
                line.set_data(pts[:, a], pts[:, b])
        return [line for view in lines for line in view]

    return update


def bar_release_explorer(runs, bar_height):
    """Widget for §5.1: a figure hangs from a bar by both hands and lets go with the right
    hand. ``runs`` {release time: (t, skeletons, energy)} is computed beforehand (one
    simulation per release time); the sliders pick the release time and the time t, and
    the callback only moves the drawn lines."""
    pic = _Picture((6.4, 3.4), dpi=72)
    axes = pic.fig.subplots(1, 2)
    draw = draw_figure_views(axes, bar_height)
    pic.fig.tight_layout()
    releases = sorted(runs)
    t_max = min(runs[r][0][-1] for r in releases)
    c = {"release": W.SelectionSlider(options=[(f"{r:.2f} s", r) for r in releases],
                                      value=releases[len(releases) // 2],
                                      description="release", layout=_control_layout()),
         "t": _slider("t [s]", 0.0, 0.0, float(t_max), step=0.025)}
    html = W.HTML()

    def update():
        t, skeletons, E = runs[c["release"].value]
        k = int(np.argmin(np.abs(t - c["t"].value)))
        draw(skeletons[k])
        pic.refresh()
        phase = "both hands" if t[k] < c["release"].value - 1e-9 else "left hand only"
        html.value = _readout(f"t = {t[k]:.3f} s   ({phase})\n"
                      f"energy (mechanical + springs) = {E[k]:.2f} J\n"
                      f"change since t = 0            = {E[k] - E[0]:+.3f} J")

    return _box(pic, c, html, update,
                views={"release": releases, "t": _grid(0.0, float(t_max), t_max / 12)})


__all__ += ["draw_figure_views", "bar_release_explorer"]


# ------------------------------------ Chapter 2 §6: several contacts, a time scrubber

def contact_run_explorer(runs, xlim, ylim, surface="below", force_scale=0.1,
                         axis_labels=("y [m]", "z [m]"), frames=21, figsize=(5.6, 3.4)):
    """Widget for §2.6: precomputed runs through contact, one picked by a drop-down (when
    there are several), scrubbed by a time slider. ``runs`` {name: run}, each run a dict
    with ``t`` (n times), ``lines`` (per time, a list of (k, 2) polylines in the drawing
    plane), ``forces`` (per time, an (m, 4) array of arrows [x, y, f_x, f_y]: the contact
    forces, drawn ``force_scale`` m per N) and ``text`` (per time, the read-out). The
    surface z = 0 is shaded ``below`` or ``above`` it. The callback only moves the drawn
    lines; the kernel-free form shows ``frames`` times per run."""
    names = list(runs)
    n_lines = max(len(ls) for run in runs.values() for ls in run["lines"])
    pic = _Picture(figsize, dpi=72)
    ax = pic.fig.add_subplot()
    ax.axhspan(*((ylim[0], 0.0) if surface == "below" else (0.0, ylim[1])), color="0.88")
    ax.axhline(0.0, color="0.4", lw=1.2)
    ax.set(xlim=xlim, ylim=ylim, aspect="equal", xlabel=axis_labels[0], ylabel=axis_labels[1])
    lines = [ax.plot([], [], "-o", color="C0", lw=2, ms=3)[0] for _ in range(n_lines)]
    n_arrows = max(len(f) for run in runs.values() for f in run["forces"])
    arrows = ax.quiver(np.zeros(n_arrows), np.zeros(n_arrows), np.zeros(n_arrows),
                       np.zeros(n_arrows), color="C3", angles="xy", scale_units="xy",
                       scale=1, width=0.008, zorder=5)
    label = ax.text(0.02, 0.95, "", transform=ax.transAxes, fontsize=9, va="top")
    pic.fig.tight_layout()
    t_end = min(float(run["t"][-1]) for run in runs.values())
    dt = float(np.min(np.diff(next(iter(runs.values()))["t"])))
    c = {"t": _slider("t [s]", 0.0, 0.0, t_end, step=max(0.01, round(dt, 2)))}
    if len(names) > 1:
        c = {"run": W.Dropdown(options=names, value=names[0], description="run",
                               layout=_control_layout()), **c}
    html = W.HTML()

    def update():
        run = runs[c["run"].value if "run" in c else names[0]]
        k = int(np.argmin(np.abs(run["t"] - c["t"].value)))
        for line, pts in itertools.zip_longest(lines, run["lines"][k]):
            if line is not None:
                pts = np.zeros((0, 2)) if pts is None else np.asarray(pts)
                line.set_data(pts[:, 0], pts[:, 1])
        f = np.zeros((n_arrows, 4))
        f[:len(run["forces"][k])] = run["forces"][k]
        arrows.set_offsets(f[:, :2])
        arrows.set_UVC(force_scale * f[:, 2], force_scale * f[:, 3])
        label.set_text(f"t = {run['t'][k]:.2f} s")
        pic.refresh()
        html.value = _readout(run["text"][k])

    views = {"t": _grid(0.0, t_end, t_end / (frames - 1))}
    if "run" in c:
        views = {"run": names, **views}
    return _box(pic, c, html, update, views=views)

