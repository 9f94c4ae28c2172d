"""What every chapter's pictures share: :func:`table` turns numbers into a table for the
page, :func:`to_jshtml` a matplotlib animation into the page's player (most frames drawn
by blitting, :class:`_BlittedFrames`)."""

import base64
import io
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
import PIL.Image
from matplotlib.animation import HTMLWriter
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import FigureBase
from matplotlib.image import imsave
from matplotlib.text import Text

from ..errors import RbdlearnError

__all__ = ["table", "to_jshtml", "small_image", "SMALL_IMAGE_FORMAT"]


def table(columns, rows, caption=""):
    """A table for the page: Markdown, which the book (MyST) and JupyterLab show as HTML.

    ``columns``: (title, format) pairs; a number in a column with a format such as
    ``".3f"`` is shown with it and right-aligned (a value that rounds to zero as 0.000,
    not −0.000); text, and every cell of a column whose format is ``""``, is shown as
    it is. Titles and text may hold ``$math$``."""
    from IPython.display import Markdown

    def cell(x, spec=""):
        if not spec or isinstance(x, str):
            return str(x).replace("|", "\\|")
        text = format(x, spec)
        return text.lstrip("+-") if float(text) == 0 else text
    lines = ["| " + " | ".join(cell(title) for title, _ in columns) + " |",
             "|" + "|".join("---:" if spec else ":---" for _, spec in columns) + "|"]
    lines += ["| " + " | ".join(cell(x, spec) for x, (_, spec) in zip(row, columns))
              + " |" for row in rows]
    return Markdown((caption + "\n\n" if caption else "") + "\n".join(lines))


def to_jshtml(animation, fps=None, default_mode=None, colors=64):
    """The HTML player of a matplotlib ``animation`` with its frames embedded, as
    ``animation.to_jshtml(fps, default_mode=…)`` makes it, in a fraction of the time, and
    with its frames in a palette of ``colors`` as lossless WebP (:func:`small_image`;
    about a quarter of the bytes of full-colour PNGs, the largest part of a page with an
    animation), or as full-colour PNGs with ``colors=None``.

    Matplotlib draws the whole figure for every frame (axes, ticks, labels, legend), and
    draws it twice: once when the frame is updated (``canvas.draw_idle``, meant for a
    window on screen), once to save it. Here the first is skipped, and most frames are
    drawn by blitting (:class:`_BlittedFrames`): only the artists the animation changes
    are drawn again, over a saved picture of the rest."""
    fig = animation._fig
    if fps is None and hasattr(animation, "_interval"):
        fps = 1000 / animation._interval
    if default_mode is None:
        default_mode = "loop" if getattr(animation, "_repeat", False) else "once"
    fig.canvas.draw_idle = lambda *args, **kw: None    # shadows the method, for this call
    try:
        with TemporaryDirectory() as folder:
            path = Path(folder, "animation.html")
            animation.save(path, writer=_BlittedFrames(
                fps=fps, embed_frames=True, default_mode=default_mode, colors=colors))
            return path.read_text()
    finally:
        del fig.canvas.draw_idle


# The format of small_image's files (the image type of the page's data: URLs and widgets)
SMALL_IMAGE_FORMAT = "webp"


def small_image(picture, colors=64):
    """A picture (PNG bytes, or an RGBA array) cut to a palette of ``colors`` (plots use
    few), stored as lossless WebP (:data:`SMALL_IMAGE_FORMAT`): the palette's pixels
    exactly, in about a quarter less than the same palette as a PNG and written in half
    its time (issue 28, measured on ch2 §4's 70 views: 357 kB against 488 kB; the PNG
    of the palette is 3–4x smaller than the full-colour PNG). Chromium, Firefox, Safari
    14+ and JupyterLab show WebP."""
    image = (PIL.Image.fromarray(picture) if isinstance(picture, np.ndarray)
             else PIL.Image.open(io.BytesIO(picture))).convert("RGB")
    out = io.BytesIO()
    # lossless; quality = effort (50: as small as 100 within 0.1 %, in half the time)
    image.quantize(colors=colors, method=PIL.Image.Quantize.FASTOCTREE).save(
        out, format=SMALL_IMAGE_FORMAT, lossless=True, quality=50, method=4)
    return out.getvalue()


def _changed_artists(fig):
    """The artists of ``fig`` that changed since they were last drawn, each drawn on its
    own by ``draw_artist`` (matplotlib marks an artist *stale* when one of its
    properties is set, and every artist that holds it too); or None when the figure or
    an axes changed itself and none of its parts did (e.g. a part was removed). An
    artist made of parts (an axis, a legend) counts as one."""
    if not fig.stale:
        return []
    changed, todo = [], [fig]
    while todo:
        artist = todo.pop()
        children = artist.get_children()
        stale = [child for child in children if child.stale]
        if not isinstance(artist, (FigureBase, Axes)):
            changed.append(artist)
        elif not stale:
            return None                              # the container itself changed
        else:
            todo += stale
    return changed


def _drawn_over(fig, moving):
    """The ``moving`` artists and every artist that the figure or an axes draws after one
    of them (they draw their parts by zorder, in the order of ``get_children``), in the
    order they are drawn: what a blitted frame draws over the still picture."""
    order = []
    for holder in fig.axes + [fig]:                     # the axes first (zorder 0)
        parts = [a for a in holder.get_children() if a is not holder.patch
                 and not isinstance(a, Axes) and a.get_visible()]
        if isinstance(holder, Axes) and not (holder.axison and holder.get_frame_on()):
            parts = [a for a in parts if a not in holder.spines.values()]
        if isinstance(holder, Axes) and not holder.axison:
            parts = [a for a in parts if a not in (holder.xaxis, holder.yaxis)]
        parts.sort(key=lambda a: a.get_zorder())               # stable, as draw sorts
        first = min((k for k, a in enumerate(parts) if a in moving), default=len(parts))
        order += parts[first:]
    return order


def _clear_stale(artist):
    """Mark ``artist`` and its stale parts drawn (as :func:`_changed_artists`, only the
    stale branches are visited: a change marks every artist that holds it)."""
    artist.stale = False          # (setting False is not passed on to the parents)
    for child in artist.get_children():
        if child.stale:
            _clear_stale(child)


class _BlittedFrames(HTMLWriter):
    """matplotlib's HTMLWriter (frames embedded as PNG), whose frames are drawn by
    blitting: the figure is drawn once without the artists the animation moves, and
    each frame pastes that picture and draws those artists over it
    (``canvas.restore_region``, ``figure.draw_artist``), with every artist drawn after
    one of them (:func:`_drawn_over`), so that the frame is the whole drawing's, pixel
    for pixel. The artists that move are found from frame to frame
    (:func:`_changed_artists`); when the set changes (a new one moves, one is added or
    removed) the still picture is drawn again. The first frame, and one where an axes
    or the figure changed itself, are drawn whole, as matplotlib draws every frame."""

    # the frames' format is PNG while they are drawn, SMALL_IMAGE_FORMAT once written
    supported_formats = [*HTMLWriter.supported_formats, SMALL_IMAGE_FORMAT]

    def __init__(self, *args, colors=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.colors = colors          # a palette of this many colours for PNG frames

    def setup(self, fig, outfile, dpi=None, frame_dir=None):
        super().setup(fig, outfile, dpi, frame_dir)
        self._changed, self._moving, self._background = set(), [], None

    def _draw_whole(self, **savefig_kwargs):
        png = io.BytesIO()
        self.fig.savefig(png, format=self.frame_format, dpi=self.dpi, **savefig_kwargs)
        return png.getvalue()

    def _draw_blitted(self, changed):
        fig, canvas = self.fig, self.fig.canvas
        self._changed = {a for a in self._changed | set(changed)
                         if a.get_figure(root=True) is fig}       # (not removed since)
        moving = _drawn_over(fig, self._changed)
        if self._background is None or moving != self._moving:
            self._moving = moving
            # the picture without them: a text is emptied rather than hidden, as an
            # axes places its title from the title's extent, which hiding empties
            texts = [(a, a.get_text()) for a in moving if isinstance(a, Text)]
            shown = [a for a in moving if a.get_visible() and not isinstance(a, Text)]
            for artist, _ in texts:
                artist.set_text("")
            for artist in shown:
                artist.set_visible(False)
            canvas.draw()
            self._background = canvas.copy_from_bbox(fig.bbox)
            for artist, text in texts:
                artist.set_text(text)
            for artist in shown:
                artist.set_visible(True)
        canvas.restore_region(self._background)
        for artist in self._moving:
            fig.draw_artist(artist)
        png = io.BytesIO()
        imsave(png, np.asarray(canvas.buffer_rgba()), format="png", dpi=fig.dpi)
        return png.getvalue()

    def finish(self):
        # the embedded frames' data: URLs name their image type after frame_format
        # (small_image's, when the frames were cut to a palette)
        small = self.embed_frames and self.frame_format == "png" and self.colors
        if small:
            self.frame_format = SMALL_IMAGE_FORMAT
        try:
            super().finish()
        finally:
            if small:
                self.frame_format = "png"

    def grab_frame(self, **savefig_kwargs):
        fig = self.fig
        changed = _changed_artists(fig) if self._saved_frames else None
        # (Animation.save asks for the figure's own background colour, opaque)
        extra = dict(savefig_kwargs)
        as_drawn = (to_rgba(extra.pop("facecolor", fig.get_facecolor()))
                    == to_rgba(fig.get_facecolor())
                    and not extra.pop("transparent", False) and not extra)
        if (changed is None or not as_drawn or self.dpi != fig.dpi
                or self.frame_format != "png" or not hasattr(fig.canvas, "copy_from_bbox")):
            self._changed, self._moving, self._background = set(), [], None
            png = self._draw_whole(**savefig_kwargs)
        else:
            png = self._draw_blitted(changed)
        _clear_stale(self.fig)
        if self.frame_format == "png" and self.colors:
            png = small_image(png, self.colors)
        frame = base64.encodebytes(png).decode("ascii")
        self._total_bytes += len(frame)
        if self._total_bytes >= self._bytes_limit:
            raise RbdlearnError(f"the animation's frames exceed matplotlib's "
                                f"animation.embed_limit ({self._bytes_limit / 2**20:g} MB): "
                                f"fewer frames, a smaller figure or a larger limit")
        self._saved_frames.append(frame)
