"""Interactive explorers for the book's notebooks (ipywidgets + matplotlib), by chapter.

- :mod:`~rbdlearn.widgets.ch1_spatial` (Chapter 1): :func:`plucker_explorer` (§1),
  :func:`constrained_motion_explorer` (§2), :func:`rnea_explorer` (§3); the UR5 in
  3-D with its RNEA torques, :func:`ur5_trajectory_scene` (§3, a
  :class:`rbdlearn.viz.scene3d.Scene`).
- :mod:`~rbdlearn.widgets.ch2_aba` (Chapter 2): :func:`propagation_explorer` (§1),
  :func:`articulated_inertia_explorer` (§2), :func:`aba_step_explorer` (§3),
  :func:`ball_joint_explorer` (§4), :func:`contact_explorer` (§5),
  :func:`contact_run_explorer` (§6); the 3-D scenes (:mod:`rbdlearn.viz.scene3d`) of
  Talos released under gravity (§3, :func:`talos_release_scene`) and of the runs through
  contact (§6, :func:`contact_run_scene`).
- :mod:`~rbdlearn.widgets.ch3_crb` (Chapter 3): :func:`crb_fill_explorer` (§2); the 3-D
  scene of the inertia felt at a Panda's hand (§1, :func:`panda_hand_scene`).
- :mod:`~rbdlearn.widgets.ch4_constrained` (Chapter 4): :func:`floor_arm_explorer` (§4).
- :mod:`~rbdlearn.widgets.ch5_closed` (Chapter 5): :func:`four_bar_explorer` (§1),
  :func:`bar_release_explorer` (§3).
- :mod:`~rbdlearn.widgets.core` (all of them): the picture, the layout, the read-outs
  and the kernel-free form, :func:`precomputed`.
- :mod:`~rbdlearn.widgets.exercises`: the exercises' checkers, one description
  (:class:`~rbdlearn.widgets.exercises.Exercise`) checked in a kernel and, as a form with
  its JSON, by the static page's script (``_ext/static/scripts/exercises.js``).

Their pictures are drawn by :mod:`rbdlearn.viz` (the same chapter's module); the numbers
they show come from the algorithm modules (``models.with_payload``,
``articulated.felt_masses``, ``crb.fill_owner``, ``closed_chains.four_bar_sweep``, …).
Every public name is available here: ``from rbdlearn import widgets;
widgets.rnea_explorer()``.

Each factory returns an ipywidgets box. The picture is a matplotlib ``Figure`` (not
managed by pyplot, so it is never shown twice) kept for the life of the widget: a
slider callback moves its artists in place and re-renders it into an
``ipywidgets.Image``, in a few tens of milliseconds. The returned box also carries
``box.figure`` and ``box.controls`` (a dict of the sliders) so that a notebook can
drive the widget from code, as the book's tests do.

Each explorer also has a kernel-free form, for the book's HTML pages where no kernel
runs: its picture and read-out precomputed at a grid of values of its main controls
(``box.views``), in one ``Stack`` per control that the control switches client-side
(``jslink``, which works in the widget state stored with the page); a control whose
range depends on the first control (the steps of the tree picked) has one selector per
value of the first. The controls it does not precompute are named in a note under the
read-out, as responding in a live kernel (issue 28). Displaying an
explorer shows that form when the environment variable ``RBDLEARN_STATIC_WIDGETS`` is
``1``: the book's notebook runner sets it (``_ext/nbexec.py``); anywhere else the live
widget is shown. :func:`precomputed` builds the form directly. The book also shows a
static figure (the explorer's "static twin") next to each one.
"""

from . import ch1_spatial, ch2_aba, ch3_crb, ch4_constrained, ch5_closed, core
from .ch1_spatial import *  # noqa: F401,F403
from .ch2_aba import *  # noqa: F401,F403
from .ch3_crb import *  # noqa: F401,F403
from .ch4_constrained import *  # noqa: F401,F403
from .ch5_closed import *  # noqa: F401,F403
from .core import precomputed  # noqa: F401

__all__ = (["precomputed"] + ch1_spatial.__all__ + ch2_aba.__all__ + ch3_crb.__all__
           + ch4_constrained.__all__ + ch5_closed.__all__)
