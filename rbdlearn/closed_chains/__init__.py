"""Closed and structure-varying kinematic chains (Chapter 5, seed 004: Nakamura, Yamane and
Nagashima).

A closed chain is cut, one joint per loop, into a *virtual open chain*: a tree that the
open-chain algorithms (RNEA, CRBA) handle, each cut joint the joint of a massless
*virtual link* whose *real* pointer names the body on the other side. The loop-closure
Jacobians split the joint velocities into dependent θ̇_S and independent θ̇_G,
θ̇_J = W θ̇_G; inverse and forward dynamics run on the virtual open chain and are mapped
through W; connecting two links adds a virtual link and makes the velocities jump,
cutting removes one.

Where each part is (every name below is also importable from here,
``from rbdlearn import closed_chains as cc; cc.four_bar()``):

- ``loops.py`` — loops and cuts (section 1; seed §2.2–2.3, §3.2): :class:`Loop`,
  :class:`Mechanism`, :func:`add_loop`, :func:`four_bar`; the loop-closure Jacobians
  :func:`loop_jacobian` (eqs. 5, 6), :func:`loop_jdot_qdot`, :func:`loop_residual`;
  θ_S and θ_G, :class:`Split`, :func:`choose_split` (eqs. 7–9); H, W and Ḣθ̇_G,
  :class:`Reduction`, :func:`reduction` (eqs. 3, 11, 12, 16); the position closure
  :func:`assemble`; the errors :class:`SingularClosure` and :class:`LoopNotClosed`.
- ``dynamics.py`` — dynamics of closed chains (section 2; seed §2.1, §2.4–2.5):
  :func:`generalized_forces`, :func:`actuator_forces`, :func:`inverse_dynamics`
  (eqs. 1, 2), :func:`forward_dynamics` by unit vectors (eqs. 17–19),
  :func:`forward_dynamics_kkt`, :func:`simulate`.
- ``structure.py`` — pointers and structure changes (sections 1 and 3; seed §3.1,
  §4.2–4.4): :func:`outward`, :func:`inward`, :func:`rnea_pointers`; :func:`add_loop_at`,
  :func:`connect`, :func:`velocity_jump` (eqs. 29–33), :class:`Connection`, :func:`cut`,
  :func:`cut_joint`.
- ``human.py`` — the human figure of §5.1 and the swing of §5.2 (sections 3 and 5):
  :class:`HumanFigure`, :func:`human_figure`, :func:`figure_q`, :func:`figure_skeleton`,
  :func:`figure_springs`, :class:`Swing`, :func:`swing`.

The 40-DOF figure of the source's Fig. 13 is ``rbdlearn.models.human_figure_40``.
"""

from .loops import (FOUR_BAR_JOINTS, Loop, LoopNotClosed, Mechanism, Reduction,
                    SingularClosure, Split, add_loop, assemble, choose_split, four_bar,
                    four_bar_sweep, loop_jacobian,
                    loop_jdot_qdot, loop_residual, reduction)
from .dynamics import (actuator_forces, forward_dynamics, forward_dynamics_kkt,
                       generalized_forces, inverse_dynamics, simulate)
from .structure import (Connection, add_loop_at, connect, cut, cut_joint, inward, outward,
                        rnea_pointers, velocity_jump)
from .human import (HumanFigure, Swing, figure_q, figure_skeleton, figure_springs,
                    human_figure, swing)

__all__ = ["outward", "inward", "rnea_pointers", "SingularClosure", "LoopNotClosed", "Loop",
           "Mechanism", "add_loop", "four_bar", "FOUR_BAR_JOINTS", "four_bar_sweep",
           "loop_residual", "loop_jacobian", "loop_jdot_qdot", "Split", "choose_split",
           "Reduction", "reduction", "assemble", "generalized_forces", "actuator_forces",
           "inverse_dynamics", "forward_dynamics", "forward_dynamics_kkt", "simulate",
           "Connection", "add_loop_at", "connect", "velocity_jump", "cut", "cut_joint",
           "HumanFigure", "human_figure", "figure_q", "figure_skeleton", "figure_springs",
           "Swing", "swing"]
