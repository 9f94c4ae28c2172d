"""rbdlearn: rigid-body dynamics algorithms, written to be read.

Spatial vectors are in Featherstone's [angular; linear] order throughout; see the
book's conventions appendix. Public functions take the model first.

Importing rbdlearn limits numpy's BLAS to one thread (see ``_one_blas_thread``).
"""

import os

import numpy  # noqa: F401  (loads numpy's BLAS: threadpoolctl limits only loaded libraries)
from threadpoolctl import threadpool_limits


def _one_blas_thread():
    """The one place that sets how many threads BLAS uses, for the book, the tests and the
    benchmarks alike (they all import rbdlearn). rbdlearn's matrices are small (6×6 blocks,
    an inertia matrix of a few dozen joints): there, a multithreaded BLAS spends more time
    waking its threads than computing, and on a busy machine a call can take many times
    longer than with one thread: measured costs then say nothing about the algorithm.
    Set RBDLEARN_BLAS_THREADS (a number, or "keep" to leave BLAS as it is) to change it."""
    setting = os.environ.get("RBDLEARN_BLAS_THREADS", "1")
    if setting != "keep":
        threadpool_limits(int(setting), user_api="blas")


_one_blas_thread()

from . import joints, spatial, urdf
from .joints import Fixed, Free, Prismatic, Revolute, Spherical, SphericalZYX
from .kinematics import (body_accelerations, body_pose, body_velocities,
                         forward_kinematics, jacobian, jdot_qdot, point_jacobian,
                         point_velocity)
from .model import (Model, floating_base, integrate_q, neutral_q, planar_chain,
                    pointers, random_q, random_tree, without_gravity)
from .rnea import rnea
from .aba import (Gear, aba, aba_geared, aba_local_frame, gear_matrix, geared_q,
                  inter_body_inertia, inter_body_inertia_geared, theta_recursion,
                  theta_recursion_geared)
from .crb import (Composite, composite_3vector, crba, crba_3vector, forward_dynamics_crb,
                  jacobian_method, operation_counts, unit_vector_method)
from .integrate import Trajectory, energy, momentum, simulate
from .contact import (Contact, contact_impulse, delassus, joint_limit_impulse, lemke, pgs,
                      solve_contacts)
from . import closed_chains, constrained, contact   # Chapters 5, 4: forward_dynamics, simulate, … stay qualified

__version__ = "0.1.0"
