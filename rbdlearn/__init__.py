"""rbdlearn: rigid-body dynamics algorithms, written to be read.

Spatial vectors are in Featherstone's [angular; linear] order throughout; see the
book's conventions appendix. Public functions take the model first.
"""

from . import joints, spatial, urdf
from .joints import Fixed, Free, Prismatic, Revolute, Spherical, SphericalZYX
from .kinematics import (body_accelerations, body_pose, body_velocities,
                         forward_kinematics, jacobian, jdot_qdot, point_jacobian,
                         point_velocity)
from .model import (Model, floating_base, integrate_q, neutral_q, planar_chain,
                    pointers, random_q, random_tree)
from .rnea import rnea
from .aba import (Gear, aba, aba_geared, aba_local_frame, contact_impulse, gear_matrix,
                  geared_q, inter_body_inertia, joint_limit_impulse, theta_recursion)
from .crb import (Composite, composite_3vector, crba, crba_3vector, forward_dynamics_crb,
                  jacobian_method, operation_counts, unit_vector_method)
from .integrate import Trajectory, energy, momentum, simulate
from . import closed_chains, constrained   # Chapters 5, 4: forward_dynamics, simulate, … stay qualified

__version__ = "0.1.0"
