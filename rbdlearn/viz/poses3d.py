"""Poses for the 3-D scenes (``rbdlearn.viz.scene3d``): checked arrays, rotation matrices
to unit quaternions and back, and the per-frame poses and scales that place a marker's
unit shape: an arrow (:func:`arrow_poses`), a rod between two points
(:func:`segment_poses`), an ellipsoid (:func:`ellipsoid_poses`). A pose is ``[x, y, z,
qw, qx, qy, qz]``: an origin and the unit quaternion (w >= 0) of an orientation."""

import base64

import numpy as np

from ..errors import SceneError
from ..spatial import rot_to_quat

__all__ = ["arrow_poses", "segment_poses", "ellipsoid_poses", "rot_to_quats",
           "pose_of", "check_array", "check_poses", "b64"]

_QUAT_TOL = 1e-6          # how far from 1 a pose's quaternion norm may be


def check_array(x, shape, what, dtype=float):
    """``x`` as a finite float array of ``shape`` (None: any length on that axis)."""
    try:
        a = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError):
        raise SceneError(f"{what} must be numbers, got {type(x).__name__}") from None
    if a.ndim != len(shape) or any(n is not None and n != m for n, m in zip(shape, a.shape)):
        want = "(" + ", ".join("any" if n is None else str(n) for n in shape) + ")"
        raise SceneError(f"{what} must have shape {want}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise SceneError(f"{what} has a value that is not finite (NaN or infinite)")
    return a


def _check_quats(quats, what):
    """Unit quaternions (..., 4), turned to w >= 0."""
    norm = np.linalg.norm(quats, axis=-1)
    bad = np.flatnonzero(np.abs(norm - 1) > _QUAT_TOL)
    if bad.size:
        k = bad[0]
        raise SceneError(f"{what}: the quaternion of row {k} is not unit (w, x, y, z): "
                         f"norm {norm.ravel()[k]:.9g}")
    return np.where(quats[..., :1] < 0, -quats, quats)


def check_poses(x, what, frames=None):
    """Poses ``[x, y, z, qw, qx, qy, qz]`` as an (F, 7) array, quaternions checked."""
    a = check_array(x, (frames, 7), what)
    a = a.copy()
    a[:, 3:] = _check_quats(a[:, 3:], what)
    return a


def rot_to_quats(R):
    """Unit quaternions (w, x, y, z), w >= 0, of rotation matrices (..., 3, 3): the
    book's :func:`rbdlearn.spatial.rot_to_quat`, one matrix at a time."""
    R = np.asarray(R, dtype=float)
    q = [rot_to_quat(r) for r in R.reshape(-1, 3, 3)]
    return np.array(q, dtype=float).reshape(R.shape[:-2] + (4,))


def pose_of(R, p):
    """The pose ``[x, y, z, qw, qx, qy, qz]`` (…, 7) of orientation(s) R and origin(s) p."""
    return np.concatenate([np.asarray(p, dtype=float), rot_to_quats(R)], axis=-1)


def b64(a, dtype):
    """The array ``a`` as little-endian ``dtype`` bytes in base64 text (the JSON's arrays)."""
    return base64.b64encode(np.ascontiguousarray(a, dtype=np.dtype(dtype).newbyteorder("<"))
                            .tobytes()).decode("ascii")


def _rotation_z_to(d):
    """Unit quaternions (F, 4) of the rotations taking +z to the unit directions d
    (F, 3); the identity where d is zero."""
    q = np.stack([1 + d[:, 2], -d[:, 1], d[:, 0], np.zeros(len(d))], axis=1)
    flip = q[:, 0] < 1e-9 * np.maximum(np.linalg.norm(d, axis=1), 1e-300)
    q[flip] = [0.0, 1.0, 0.0, 0.0]                        # d = −z: half a turn about x
    zero = np.linalg.norm(d, axis=1) == 0
    q[zero] = [1.0, 0.0, 0.0, 0.0]
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def arrow_poses(origins, vectors, scale=1.0):
    """``(poses, scales)`` placing an ``"arrow"`` shape (along +z, length 1) from each
    origin along ``vector * scale``: origins and vectors (F, 3); poses (F, 7), scales
    (F, 3) ``[1, 1, |vector| * scale]`` (a zero vector gives a zero length). For
    :meth:`Scene.add_marker`."""
    o = check_array(origins, (None, 3), "arrow origins")
    v = check_array(vectors, (len(o), 3), "arrow vectors") * float(scale)
    n = np.linalg.norm(v, axis=1)
    d = v / np.where(n > 0, n, 1)[:, None]
    scales = np.ones((len(o), 3))
    scales[:, 2] = n
    return np.concatenate([o, _rotation_z_to(d)], axis=1), scales


def segment_poses(a, b):
    """``(poses, scales)`` placing a ``"cylinder"`` shape of length 1 (``shape(
    "cylinder", radius=r, length=1)``) from point a to point b in every frame: a and b
    (F, 3); poses (F, 7) at the midpoints, scales ``[1, 1, |b − a|]``. For connections
    and rods drawn with :meth:`Scene.add_marker`."""
    a = check_array(a, (None, 3), "segment starts a")
    b = check_array(b, (len(a), 3), "segment ends b")
    v = b - a
    n = np.linalg.norm(v, axis=1)
    d = v / np.where(n > 0, n, 1)[:, None]
    scales = np.ones((len(a), 3))
    scales[:, 2] = n
    return np.concatenate([(a + b) / 2, _rotation_z_to(d)], axis=1), scales


def ellipsoid_poses(centres, matrices):
    """``(poses, scales)`` turning a ``"sphere"`` of radius 1 into the ellipsoid
    ``{x : (x − c)ᵀ A⁻¹ (x − c) <= 1}`` in every frame: centres c (F, 3), matrices A
    (F, 3, 3) symmetric positive definite. Its axes are A's eigenvectors, its semi-axes
    the square roots of A's eigenvalues (the scales)."""
    c = check_array(centres, (None, 3), "ellipsoid centres")
    A = check_array(matrices, (len(c), 3, 3), "ellipsoid matrices")
    if not np.allclose(A, A.transpose(0, 2, 1), rtol=1e-9, atol=1e-12 * np.abs(A).max()):
        raise SceneError("ellipsoid matrices must be symmetric")
    lam, V = np.linalg.eigh(A)
    if np.any(lam <= 0):
        k = int(np.flatnonzero(np.any(lam <= 0, axis=1))[0])
        raise SceneError(f"ellipsoid matrix of frame {k} is not positive definite "
                         f"(eigenvalues {lam[k]})")
    V = V * np.where(np.linalg.det(V) < 0, -1.0, 1.0)[:, None, None]     # a rotation
    return np.concatenate([c, rot_to_quats(V)], axis=1), np.sqrt(lam)
