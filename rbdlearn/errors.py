"""The errors rbdlearn raises, all derived from one base, :class:`RbdlearnError`.

The base is a ``ValueError``, as every error of the package was before it had a base of its
own, so ``except ValueError`` written against earlier versions still catches them. The
chapters' own errors (a singular articulated inertia, an LCP without a solution, a loop that
does not close, a URDF that cannot be read, …) derive from it in their modules, and
``rbdlearn`` exports every one of them.
"""

__all__ = ["RbdlearnError", "ArgumentTypeError", "FrozenModelError", "RobotNotFound",
           "AnswerError", "SceneError"]


class RbdlearnError(ValueError):
    """An input that rbdlearn cannot take, or a problem it cannot solve; the message names
    the argument (or the body, joint, contact or step) and what is wrong with it."""


class ArgumentTypeError(RbdlearnError, TypeError):
    """An argument of the wrong type (a string for a flag, a set for a mapping, a Pinocchio
    model for an rbdlearn one): a ``TypeError`` as well."""


class FrozenModelError(RbdlearnError, TypeError):
    """An attempt to change a :class:`~rbdlearn.model.Model` after it was built (make a new
    one with ``Model.replace``): a ``TypeError`` as well."""


class RobotNotFound(RbdlearnError, FileNotFoundError):
    """example-robot-data, or one of its files, is not installed: a ``FileNotFoundError``
    as well."""


class AnswerError(RbdlearnError):
    """An answer to one of the book's exercises that cannot be read in the form the exercise
    asks for (``rbdlearn.widgets.exercises``); the message says why."""


class SceneError(RbdlearnError):
    """A 3-D scene (``rbdlearn.viz.scene3d``) given input it cannot show: arrays of the
    wrong shape, a frame or run count that differs from the scene's, an unknown shape type,
    a quaternion that is not unit, a value that is not finite; the message says which."""
