"""Matplotlib pictures for the book, by chapter; everything drawn is computed by rbdlearn
(forward kinematics, Plücker transforms, ``rnea``, …): these modules only turn the results
into lines and arrows.

- :mod:`~rbdlearn.viz.core` (every chapter): :func:`table`, numbers into a table for the
  page; :func:`to_jshtml`, a matplotlib animation into the page's player.
- :mod:`~rbdlearn.viz.ch1_spatial` (Chapter 1): planar arms (:func:`draw_planar_chain`,
  :class:`ChainDrawing`), planar motions and forces (:func:`draw_velocity_field`,
  :func:`draw_force_line`, :func:`draw_frame_2d`), trees (:func:`draw_tree_3d`,
  :func:`draw_tree_views`) and the RNEA's torques (:func:`draw_torque_bars`).
- :mod:`~rbdlearn.viz.ch2_aba` (Chapter 2): :func:`draw_propagation`,
  :func:`draw_socket_plug`, :func:`draw_heatmap`, :func:`draw_ball_joint`,
  :func:`draw_contact`.
- :mod:`~rbdlearn.viz.ch3_crb` (Chapter 3): :func:`draw_fill`, H filling body by body.
- :mod:`~rbdlearn.viz.ch4_constrained` (Chapter 4): :func:`draw_floor_arm`.
- :mod:`~rbdlearn.viz.ch5_closed` (Chapter 5): :func:`draw_pointers`,
  :func:`draw_linkage`, :func:`draw_figure_views`.

Each chapter module ends with where its pictures put things (``chain_geometry``,
``socket_plug_frames``, ``pointer_layout``, ``loop_geometry``: coordinates to draw, from
the kinematics). Every public name is
available here: ``from rbdlearn.viz import table``, ``viz.draw_planar_chain``.
"""

from . import ch1_spatial, ch2_aba, ch3_crb, ch4_constrained, ch5_closed, core
from .ch1_spatial import *  # noqa: F401,F403
from .ch2_aba import *  # noqa: F401,F403
from .ch3_crb import *  # noqa: F401,F403
from .ch4_constrained import *  # noqa: F401,F403
from .ch5_closed import *  # noqa: F401,F403
from .core import *  # noqa: F401,F403

__all__ = (core.__all__ + ch1_spatial.__all__ + ch2_aba.__all__ + ch3_crb.__all__
           + ch4_constrained.__all__ + ch5_closed.__all__)
