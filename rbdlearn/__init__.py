"""rbdlearn: rigid-body dynamics algorithms, written to be read.

Spatial vectors are in Featherstone's [angular; linear] order throughout; see the
book's conventions appendix. Public functions take the model first. Every error the
package raises derives from :class:`RbdlearnError` (a ``ValueError``).

Importing rbdlearn changes nothing outside it: to time its algorithms, limit BLAS to one
thread with :func:`one_blas_thread`, as the book's timing cells and ``benchmarks/`` do.
"""


def one_blas_thread(threads=1):
    """Limit numpy's BLAS to ``threads`` threads (default one) and return threadpoolctl's
    limiter. Called once, the limit holds for the rest of the program; used as a context,
    ``with rbd.one_blas_thread(): …``, it holds inside the block only.

    rbdlearn's matrices are small (6×6 blocks, an inertia matrix of a few dozen joints):
    there a multithreaded BLAS spends more time waking its threads than computing, and on
    a busy machine a call can take many times longer than with one thread, so a measured
    cost says nothing about the algorithm. The book's timing cells, the benchmarks and the
    tests call this; importing rbdlearn does not."""
    import numpy  # noqa: F401  (loads numpy's BLAS: threadpoolctl limits only loaded libraries)
    from threadpoolctl import threadpool_limits
    return threadpool_limits(threads, user_api="blas")


from . import joints, spatial, urdf
from .errors import (AnswerError, ArgumentTypeError, FrozenModelError, RbdlearnError,
                     RobotNotFound, SceneError)
from .joints import Fixed, Free, Gear, Prismatic, Revolute, Spherical, SphericalZYX
from .kinematics import (body_accelerations, body_pose, body_velocities,
                         forward_kinematics, jacobian, jdot_qdot, point_jacobian,
                         point_velocity)
from .model import (Model, floating_base, integrate_q, neutral_q, planar_chain,
                    pointers, random_q, random_tree, without_gravity)
from .inverse_dynamics import JointForces, rnea, rnea_forces
from .articulated import (LocalFrameABA, aba, aba_local_frame, inter_body_inertia,
                          theta_recursion)
from .gears import (aba_geared, gear_matrix, geared_q, inter_body_inertia_geared,
                    theta_recursion_geared)
from .crb import (Composite, composite_3vector, crba, crba_3vector, forward_dynamics_crb,
                  jacobian_method, operation_counts, unit_vector_method)
from .integrate import Trajectory, energy, momentum, simulate
from .impulses import contact_impulse, joint_limit_impulse
from .lcp import Contact, lemke, pgs
from .contact import delassus, solve_contacts
from . import closed_chains, constrained, contact   # Chapters 5, 4: forward_dynamics, simulate, … stay qualified
from . import articulated, gears, impulses, inverse_dynamics, lcp   # Chapters 1–2 by module
from .articulated import SingularArticulatedInertia
from .crb import SingularMassMatrix
from .closed_chains import LoopNotClosed, SingularClosure
from .constrained import SingularContact
from .lcp import ContactError, ContactWarning, LCPError, LCPRayTermination
from .urdf import URDFError

__version__ = "0.1.0"
