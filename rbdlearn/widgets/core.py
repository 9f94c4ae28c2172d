"""What every chapter's explorers share: the picture (:class:`Picture`), the layout of
picture, controls and read-out (:func:`explorer_box`, :class:`Explorer`), sliders and
read-out text, and the kernel-free form (:func:`precomputed`)."""

import io
import os
import re
from html import escape

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle   # not exported by ipywidgets
import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..viz.core import SMALL_IMAGE_FORMAT, small_image   # as the animations' frames

__all__ = ["Picture", "Explorer", "explorer_box", "precomputed", "slider",
           "grid_values", "num", "vec", "readout", "control_layout", "picture_layout",
           "explorer_layout", "column_layout", "live_only_note", "static_build"]


def static_build():
    """True when the book's notebooks are executed for its static pages (the environment
    variable ``RBDLEARN_STATIC_WIDGETS`` is "1", set by ``_ext/nbexec.py``): explorers,
    exercises and 3-D scenes then show their kernel-free form."""
    return os.environ.get("RBDLEARN_STATIC_WIDGETS") == "1"


class Picture:
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


def control_layout():
    return W.Layout(width="calc(100% - 4px)", max_width="340px")   # 2 px margins


def picture_layout():
    return W.Layout(max_width="100%", height="auto", margin="0")


def explorer_layout():
    return W.Layout(display="flex", flex_flow="row wrap", align_items="flex-start",
                    max_width="100%")


def column_layout():
    # basis = a control's full width (control_layout): beside the picture only when the
    # controls get all of it, below it otherwise (issue 28: a column of 260 px beside a
    # picture left slider tracks of 102–118 px at 1280 px)
    return W.Layout(flex="1 1 340px", min_width="0", max_width="100%")


def slider(description, value, lo, hi, step=0.01):
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         continuous_update=True, readout_format=".2f",
                         style={"description_width": "70px"}, layout=control_layout())


def grid_values(lo, hi, step):
    """Values from lo to hi (both included when hi − lo is a multiple of step), rounded
    to the sliders' two decimals: the grid of a precomputed view."""
    return [round(float(x), 2) + 0.0 for x in np.arange(lo, hi + step / 2, step)]  # no -0.00


def num(x, digits=2):
    """``x`` signed with ``digits`` decimals; a value that rounds to zero is +0.00, not −0.00."""
    return f"{round(float(x), digits) + 0.0:+.{digits}f}"


def vec(a, digits=2):
    return "[" + ", ".join(num(x, digits) for x in a) + "]"

_SUBSCRIPT = re.compile(r"(?<=[^\W\d_])_([A-Za-z0-9]+)")     # X_ab after a letter
_VECTOR = re.compile(r"\[[^\]\n<>]*\]")                    # [+1.00, −0.50, …]
_DOTTED = re.compile("(\\w)\u0307")                         # α̇, q̇: letter + combining dot
# A combining dot (U+0307) in a monospace font sits beside its letter in some browsers
# (issue 28: "α̇" read "α`"); a spacing dot (U+02D9) placed over the letter does not.
_DOT_OVER = ("<span style='position:relative'>\\1<span style='position:absolute;left:0;"
             "right:0;top:-0.12em;text-align:center'>\u02d9</span></span>")


def readout(text, error=False):
    """An explorer's read-out: monospace lines that wrap in the column but not inside a
    vector ``[…]`` (a vector is read as a whole), a subscript written ``X_ab`` shown as
    X<sub>ab</sub>, a dotted letter with its dot drawn over it; an error
    (``error=True``) in red, as it is."""
    text = _DOTTED.sub(_DOT_OVER, escape(str(text), quote=False))
    if not error:
        text = _SUBSCRIPT.sub(r"<sub>\1</sub>", text)
        text = _VECTOR.sub(lambda m: f"<span style='white-space:nowrap'>{m[0]}</span>", text)
    color = "color:#b00;" if error else ""
    return (f"<pre style='white-space:pre-wrap;{color}font-size:12px;line-height:1.35'>"
            f"{text}</pre>")


class Explorer(W.Box):
    """An explorer: the picture, the controls and the read-out (``box.figure``,
    ``box.controls``, ``box.html``), and ``box.views`` {control name: values}, the grid
    of its kernel-free form. Displayed with RBDLEARN_STATIC_WIDGETS=1, it shows that
    form (see the module docstring)."""

    def _repr_mimebundle_(self, **kwargs):
        if static_build():
            self.static = precomputed(self)        # kept: a dropped widget closes itself
            return self.static._repr_mimebundle_(**kwargs)
        return super()._repr_mimebundle_(**kwargs)


def explorer_box(picture, controls, html, update, views):
    for c in controls.values():
        c.observe(lambda change: update(), names="value")
    update()
    picture.image.layout = picture_layout()
    box = Explorer([picture.image,
                     W.VBox(list(controls.values()) + [html], layout=column_layout())],
                    layout=explorer_layout())
    box.figure, box.controls, box.html, box.views = picture.fig, controls, html, views
    box.picture = picture
    return box


def _selector(control, values, index):
    """A control that picks an index into ``values``: a slider's values as a selection
    slider with the same label, a drop-down's options as a drop-down."""
    if isinstance(control, W.Dropdown):
        return W.Dropdown(options=[str(v) for v in values], index=index,
                          description=control.description, layout=control_layout(),
                          style=control.style)
    if isinstance(control, W.SelectionSlider):
        label = dict(zip(control._options_values, control._options_labels))
        labels = [label[v] for v in values]
    else:
        fmt = getattr(control, "readout_format", ".2f")
        labels = [str(v) if isinstance(v, (int, np.integer)) else format(v, fmt)
                  for v in values]
    return W.SelectionSlider(options=list(zip(labels, range(len(values)))), index=index,
                             description=control.description, layout=control_layout(),
                             style=control.style, continuous_update=True)


def _nearest(values, value):
    """The index of ``value`` in ``values``, or of the nearest number."""
    if value in values:
        return values.index(value)
    return int(np.argmin([abs(x - value) for x in values]))


def _label(control):
    """A control's label without its unit ("t [s]" → "t", "load kg" → "load")."""
    return re.sub(r"\s*(\[[^\]]*\]|kg|N m|N)$", "", control.description)


def live_only_note(box):
    """The note a kernel-free form shows under its controls when the live explorer has
    controls that are not precomputed (issue 28: a reader of the HTML page is told which
    controls respond only in a live kernel, and why), or None. Worded for the static page,
    the only place the kernel-free form is shown."""
    rest = [n for n in box.controls if n not in box.views]
    if not rest:
        return None
    *head, last = [_label(box.controls[n]) for n in box.views]
    shown = f"{', '.join(head)} and {last}" if head else last
    text = (f"{', '.join(_label(box.controls[n]) for n in rest)}: "
            f"{'responds' if len(rest) == 1 else 'respond'} in a live kernel (JupyterLab, "
            f"Binder, Colab); this page precomputes {shown}.")
    return W.HTML(f"<p style='font-size:12px;line-height:1.35;color:#555;margin:4px 0'>"
                  f"<i>{escape(text, quote=False)}</i></p>")


def _values(views, names, d, prefix):
    """The grid of control ``names[d]`` where the controls before it are at ``prefix``
    (indices): ``views[name]`` is a list, or a dict {value of the first control: list} for
    a control whose range depends on it (the steps of the tree picked)."""
    v = views[names[d]]
    return list(v[views[names[0]][prefix[0]]] if isinstance(v, dict) else v)


def precomputed(box):
    """The kernel-free form of an explorer ``box``: for every combination of the values
    in ``box.views`` ({control name: values}, see :func:`_values`), the picture and
    read-out the live widget shows there, in nested ``Stack`` widgets; one selector per
    control (a selection slider or drop-down) picks the child of every Stack at its level
    through ``jslink`` (ipywidgets' client-side link, so it works in a page without a
    kernel). A control whose values depend on the first control's has one selector per
    value of the first, in a Stack that the first control switches. Setting a frame's
    controls runs the live callback once per control that changes, but the picture is
    drawn once (``Picture.held``). The live controls are put back afterwards. Controls
    not in ``box.views`` are named in a note (:func:`live_only_note`). Returns a box like
    the explorer's, with ``.controls`` (the selectors: a control with dependent values
    gets the Stack of its selectors), ``.pictures`` / ``.readouts`` (the Stacks) and
    ``.note`` (None when every control is precomputed)."""
    names, live, views = list(box.views), box.controls, box.views
    saved = {n: c.value for n, c in live.items()}
    frames = {}
    picture = box.picture

    def combos(prefix=()):
        if len(prefix) == len(names):
            yield prefix
            return
        for k in range(len(_values(views, names, len(prefix), prefix))):
            yield from combos(prefix + (k,))

    picture.held = True               # each control runs the callback; one drawing a frame
    try:
        for combo in combos():
            for d, k in enumerate(combo):
                live[names[d]].value = _values(views, names, d, combo)[k]
            picture.flush(encode=False)           # quantized from the pixels: no PNG between
            shown = picture.pixels() if picture.unshown else picture.image.value
            frames[combo] = (small_image(shown), box.html.value)
        for n in sorted(saved, key=lambda n: not isinstance(live[n], W.Dropdown)):
            live[n].value = saved[n]              # drop-downs first: they reset sliders
    finally:
        picture.held = False
        picture.flush()
    first = list(views[names[0]])
    k0 = _nearest(first, saved[names[0]])
    # selectors[d]: one selector, or {index of the first control's value: selector}
    selectors, controls, links = [], {}, []
    for d, n in enumerate(names):
        if isinstance(views[n], dict):
            own = {k: _values(views, names, d, (k,)) for k in range(len(first))}
            selectors.append({k: _selector(live[n], v, _nearest(v, saved[n]))
                              for k, v in own.items()})
            controls[n] = W.Stack(list(selectors[d].values()), selected_index=k0)
            links.append(W.jslink((controls[n], "selected_index"), (selectors[0], "index")))
        else:
            v = list(views[n])
            selectors.append(_selector(live[n], v, _nearest(v, saved[n])))
            controls[n] = selectors[d]
    # one layout (and style) shared by all frames: each widget object is a model stored
    # with the page, about 1 kB even when empty
    pic_layout, stack_layout = picture_layout(), W.Layout(max_width="100%", margin="0")
    text_layout, text_style = W.Layout(), HTMLStyle()

    def stack(prefix, leaf):
        d = len(prefix)
        if d == len(names):
            return leaf(*frames[prefix])
        selector = selectors[d][prefix[0]] if isinstance(selectors[d], dict) else selectors[d]
        s = W.Stack([stack(prefix + (k,), leaf)
                     for k in range(len(_values(views, names, d, prefix)))],
                    selected_index=selector.index, layout=stack_layout)
        # from the Stack to the selector: the other way round, the HTML manager fails
        # to draw a Stack of images when the page opens ("could not create a view")
        links.append(W.jslink((s, "selected_index"), (selector, "index")))
        return s

    pictures = stack((), lambda image, _: W.Image(value=image, format=SMALL_IMAGE_FORMAT,
                                                   layout=pic_layout))
    readouts = stack((), lambda _, text: W.HTML(text, layout=text_layout, style=text_style))
    note = live_only_note(box)
    column = list(controls.values()) + [readouts] + ([note] if note else [])
    out = W.Box([pictures, W.VBox(column, layout=column_layout())], layout=explorer_layout())
    out.controls, out.pictures, out.readouts, out.note = controls, pictures, readouts, note
    out.links = links                            # kept: a dropped link closes itself
    return out
