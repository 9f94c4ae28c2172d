"""What every chapter's explorers share: the picture (:class:`Picture`), the layout of
picture, controls and read-out (:func:`explorer_box`, :class:`Explorer`), sliders and
read-out text, and the kernel-free form (:func:`precomputed`)."""

import io
import itertools
import os
import re
from html import escape

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle   # not exported by ipywidgets
import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["Picture", "Explorer", "explorer_box", "precomputed", "small_png", "slider",
           "grid_values", "num", "vec", "readout", "control_layout", "picture_layout",
           "explorer_layout", "column_layout"]


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
    return W.Layout(flex="1 1 260px", min_width="0", max_width="100%")


def slider(description, value, lo, hi, step=0.01):
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         continuous_update=True, readout_format=".2f",
                         style={"description_width": "70px"}, layout=control_layout())


def grid_values(lo, hi, step):
    """Values from lo to hi (both included when hi − lo is a multiple of step), rounded
    to the sliders' two decimals: the grid of a precomputed view."""
    return [round(float(x), 2) for x in np.arange(lo, hi + step / 2, step)]


def num(x, digits=2):
    """``x`` signed with ``digits`` decimals; a value that rounds to zero is +0.00, not −0.00."""
    return f"{round(float(x), digits) + 0.0:+.{digits}f}"


def vec(a, digits=2):
    return "[" + ", ".join(num(x, digits) for x in a) + "]"

_SUBSCRIPT = re.compile(r"(?<=[^\W\d_])_([A-Za-z0-9]+)")     # X_ab after a letter


def readout(text, error=False):
    """An explorer's read-out: monospace lines that wrap in the column, a subscript written
    ``X_ab`` shown as X<sub>ab</sub>; an error (``error=True``) in red, as it is."""
    text = escape(str(text), quote=False)
    if not error:
        text = _SUBSCRIPT.sub(r"<sub>\1</sub>", text)
    color = "color:#b00;" if error else ""
    return (f"<pre style='white-space:pre-wrap;{color}font-size:12px;line-height:1.35'>"
            f"{text}</pre>")


class Explorer(W.Box):
    """An explorer: the picture, the controls and the read-out (``box.figure``,
    ``box.controls``, ``box.html``), and ``box.views`` {control name: values}, the grid
    of its kernel-free form. Displayed with RBDLEARN_STATIC_WIDGETS=1, it shows that
    form (see the module docstring)."""

    def _repr_mimebundle_(self, **kwargs):
        if os.environ.get("RBDLEARN_STATIC_WIDGETS") == "1":
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


def small_png(picture, colors=64):
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


def precomputed(box):
    """The kernel-free form of an explorer ``box``: for every combination of the values
    in ``box.views`` ({control name: values}), the picture and read-out the live widget
    shows there, in nested ``Stack`` widgets; one selector per control (a selection
    slider or drop-down) picks the child of every Stack at its level through ``jslink``
    (ipywidgets' client-side link, so it works in a page without a kernel). Setting a
    frame's controls runs the live callback once per control that changes, but the
    picture is drawn once (``Picture.held``). The live controls are put back
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
            frames[combo] = (small_png(shown), box.html.value)
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
    pic_layout, stack_layout = picture_layout(), W.Layout(max_width="100%", margin="0")
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
    out = W.Box([pictures, W.VBox(selectors + [readouts], layout=column_layout())],
                layout=explorer_layout())
    out.controls, out.pictures, out.readouts = dict(zip(names, selectors)), pictures, readouts
    out.links = links                            # kept: a dropped link closes itself
    return out
