"""The kinematic-tree model (Featherstone's parent-array form; Chapter 1, "Inverse
dynamics"), the checks of the algorithms' arguments (states, forces, bodies), the builders.

Bodies are numbered ``1..N`` with ``parent[i] < i``; body 0 is the fixed base.
Every per-body list has length ``N + 1`` and holds ``None`` (or -1) at index 0.
Body ``i`` carries the joint that connects it to ``parent[i]``:

* ``Xtree[i]`` — Plücker transform from the parent's frame to the joint's
  predecessor frame (fixed), so body i's transform from its parent is
  ``Xup[i] = joints[i].XJ(q_i) @ Xtree[i]``;
* ``I[i]``     — body i's spatial inertia in its own frame.
"""

import dataclasses
import math
import numbers
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .errors import ArgumentTypeError, FrozenModelError, RbdlearnError
from .joints import Fixed, Free, Prismatic, Revolute, Spherical, SphericalZYX, _frozen
from .spatial import exp_so3, mcI, plux, plux_parts

__all__ = ["Model", "Pointers", "pointers", "check_flag", "check_inertia",
           "check_state", "batch_shape", "body_index",
           "neutral_q", "random_q", "integrate_q", "without_gravity",
           "planar_chain", "random_tree", "floating_base", "GRAVITY"]

GRAVITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -9.81])
"""Default gravity: a spatial acceleration of 9.81 m/s² along −z of the base frame."""
_frozen(GRAVITY)                     # each Model gets its own copy; the default stays put

_JOINT_TYPES = (Revolute, Prismatic, Spherical, SphericalZYX, Free, Fixed)


def _numeric(a):
    return np.asarray(a).dtype != object


def check_flag(value, name):
    """Raise :class:`.ArgumentTypeError` naming ``name`` unless ``value`` is True or False
    (a string such as "false" is truthy: taken as a flag it would mean True)."""
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be True or False, got {value!r}")


def check_inertia(I, where, tol=1e-9, physical=True):
    """Raise ``ValueError`` naming ``where`` unless I is a physical spatial inertia.

    Physical means: 6x6 and symmetric, mass m >= 0, the form
    ``[Ic + m c×c×ᵀ, m c×; m c×ᵀ, m 1]``, and a rotational inertia Ic about the
    centre of mass that is positive semi-definite with principal moments obeying
    the triangle inequality (I1 + I2 >= I3). ``physical=False`` checks everything
    but the last two (for published models that break them; Pinocchio accepts those).
    """
    I = np.asarray(I)
    if I.shape != (6, 6):
        raise RbdlearnError(f"{where}: spatial inertia must be 6x6, got shape {I.shape}")
    if not _numeric(I):
        return
    I = I.astype(float)
    if not np.all(np.isfinite(I)):
        raise RbdlearnError(f"{where}: spatial inertia contains NaN or inf")
    scale = max(1.0, np.abs(I).max())
    if np.abs(I - I.T).max() > tol * scale:
        raise RbdlearnError(f"{where}: spatial inertia is not symmetric")
    m = I[5, 5]
    if m < 0:
        raise RbdlearnError(f"{where}: negative mass {m:g}")
    if np.abs(I[3:, 3:] - m * np.eye(3)).max() > tol * scale:
        raise RbdlearnError(f"{where}: lower-right block of the spatial inertia must be m·1")
    h = I[:3, 3:]          # m c×
    if np.abs(h + h.T).max() > tol * scale:
        raise RbdlearnError(f"{where}: upper-right block of the spatial inertia must be "
                            f"m c× (skew)")
    if m == 0:
        if np.abs(h).max() > tol * scale:
            raise RbdlearnError(f"{where}: a massless body cannot have a first moment m·c")
        Ic = I[:3, :3]
    else:
        Ic = I[:3, :3] - (h / m) @ h.T          # m c×c×ᵀ without (m c)², which can overflow
    if not physical:
        return
    lam = np.linalg.eigvalsh(Ic)
    hint = " (physical=False accepts it, as Pinocchio does)"
    if lam[0] < -tol * scale:
        raise RbdlearnError(f"{where}: rotational inertia about the COM is not positive "
                            f"semi-definite (principal moments {lam}){hint}")
    if lam[0] + lam[1] < lam[2] - tol * scale:
        raise RbdlearnError(f"{where}: principal moments {lam} break the triangle "
                            f"inequality I1 + I2 >= I3{hint}")


class _FrozenList(list):
    """A list that cannot be changed in place (a Model's per-body lists): it compares,
    slices and concatenates like a list, and every mutation raises."""

    def _refuse(self, *args, **kwargs):
        raise FrozenModelError("a Model does not change after it is built; make a new one with "
                               "model.replace(field=new_value), e.g. "
                               "model.replace(Xtree=[...]) or model.replace(gravity=np.zeros(6))")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse


def _frozen_array(a):
    """A read-only copy of ``a`` (float, or object for sympy entries)."""
    return _frozen(np.array(a, dtype=object if np.asarray(a).dtype == object else float))


@dataclass(eq=False, frozen=True)
class Model:
    """A kinematic tree; see the module docstring.

    Derived attributes, computed once from the fields (``_derived``): ``N``, ``nq``,
    ``nv``; ``q_index``, ``v_index`` (where body i's joint starts in q and v) and the
    matching slices ``q_slices``, ``v_slices``; ``velocity_body`` (the body of each
    velocity coordinate); ``manifold_bodies`` (the bodies whose joint has nq > nv, a unit
    quaternion); and two constants of the joints that the shared kinematics reads instead
    of rebuilding them in every call: ``S_constant`` ([S_1 … S_N], 6 x nv, when no joint's
    S depends on q; else None; ``kinematics.motion_subspaces``) and ``revolute_terms``
    (the numeric revolute joints' bodies, their angles' places in q, the constant terms of
    XJ(q) Xtree and the other bodies; ``kinematics.joint_transforms``).

    A model is a value: it is checked once, when built (``_checked``), and never changes
    after. Its lists and arrays are its own read-only copies (editing the lists it was
    built from does not reach it); a changed model is a new one, ``model.replace(...)``.

    ``physical=False`` accepts rotational inertias that are not positive semi-definite
    or break the triangle inequality (some published robot descriptions have them);
    the algorithms run on them, and any singularity they cause is reported there."""
    parent: list
    joints: list
    Xtree: list
    I: list
    names: list = None          # joint names; names[0] = "base"
    gravity: np.ndarray = field(default_factory=lambda: GRAVITY.copy())
    body_names: list = None     # link names; body_names[0] = the base link
    physical: bool = True       # check that every inertia is physically realisable

    def __post_init__(self):
        for attr, value in _checked(self).items():       # the fields, as read-only copies,
            object.__setattr__(self, attr, value)        # set once, here (frozen)
        for attr, value in _derived(self).items():
            object.__setattr__(self, attr, value)

    def replace(self, **changes):
        """A new model: this one with the fields in ``changes`` (``parent``, ``joints``,
        ``Xtree``, ``I``, ``names``, ``gravity``, ``body_names``, ``physical``) replaced,
        checked as any new model is."""
        return dataclasses.replace(self, **changes)

    def __repr__(self):
        kinds = {}
        for j in self.joints[1:]:
            kinds[type(j).__name__] = kinds.get(type(j).__name__, 0) + 1
        joints = ", ".join(f"{n} {k}" for k, n in kinds.items()) or "none"
        g = np.array2string(np.asarray(self.gravity, float)[3:], precision=3)
        unchecked = "" if self.physical else "; inertias not checked (physical=False)"
        return (f"Model(N={self.N} bodies, nq={self.nq}, nv={self.nv}; joints: {joints}; "
                f"gravity {g}{unchecked})")

    def subtree(self, i):
        """Bodies in the subtree rooted at body i (i included), in increasing order."""
        inside = {i}
        for k in range(i + 1, self.N + 1):
            if self.parent[k] in inside:
                inside.add(k)
        return sorted(inside)

    def ancestors(self, i):
        """Bodies on the path from body i back to the base (i included, 0 excluded)."""
        path = []
        while i > 0:
            path.append(i)
            i = self.parent[i]
        return path


def _checked(model):
    """The fields of ``model`` checked, as read-only copies: RbdlearnError (naming the body,
    the joint or the field) at the first thing that is wrong."""
    N = len(model.parent) - 1
    if N < 0:
        raise RbdlearnError("model needs a parent array with at least the base entry")
    names, body_names = model.names, model.body_names
    if names is None:
        names = ["base"] + [f"joint{i}" for i in range(1, N + 1)]
    if body_names is None:
        body_names = ["base"] + [f"body{i}" for i in range(1, N + 1)]
    fields = {"joints": model.joints, "Xtree": model.Xtree, "I": model.I, "names": names,
              "body_names": body_names}
    for attr, value in fields.items():
        if len(value) != N + 1:
            raise RbdlearnError(f"model.{attr} has length {len(value)}, expected N + 1 = "
                                f"{N + 1} (entry 0 is the base)")
    for i, p in enumerate(model.parent[1:], start=1):
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)):
            raise RbdlearnError(f"body {i}: parent must be an integer body index, got {p!r}")
    parent = [-1] + [int(p) for p in model.parent[1:]]
    for attr, seen in (("names", list(names)), ("body_names", list(body_names))):
        for k, x in enumerate(seen):
            if not isinstance(x, str):
                raise ArgumentTypeError(f"model.{attr}[{k}] must be a string, got "
                                        f"{type(x).__name__} {x!r}")
        dups = sorted({str(x) for x in seen if seen.count(x) > 1})
        if dups:
            raise RbdlearnError(f"model.{attr}: duplicate names {dups}")
    check_flag(model.physical, "model.physical")
    gravity = _real_array(model.gravity, "model.gravity")
    if gravity.shape != (6,):
        raise RbdlearnError(f"model.gravity must be a spatial 6-vector, got shape "
                            f"{gravity.shape}")
    if _numeric(gravity) and not np.all(np.isfinite(gravity)):
        raise RbdlearnError(f"model.gravity must be finite, got {gravity}")
    Xtree, I = [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        name = f"body {i} (joint '{names[i]}')"
        if not 0 <= parent[i] < i:
            raise RbdlearnError(f"{name}: parent {parent[i]} is not in 0..{i - 1}; "
                                f"bodies must be numbered so that parent[i] < i")
        if not isinstance(model.joints[i], _JOINT_TYPES):
            raise RbdlearnError(f"{name}: unknown joint type {type(model.joints[i]).__name__}")
        Xtree[i] = _frozen_array(_check_Xtree(model.Xtree[i], name))
        check_inertia(model.I[i], name, physical=model.physical)
        I[i] = _frozen_array(model.I[i])
    return {"parent": _FrozenList(parent), "joints": _FrozenList(model.joints),
            "Xtree": _FrozenList(Xtree), "I": _FrozenList(I), "names": _FrozenList(names),
            "body_names": _FrozenList(body_names), "gravity": _frozen_array(gravity)}


def _check_Xtree(X, name):
    """``X`` (a numeric one as floats), or RbdlearnError unless it is a 6x6 Plücker
    transform [E 0; −E r× E] with E a rotation."""
    X = np.asarray(X)
    if X.shape != (6, 6):
        raise RbdlearnError(f"{name}: Xtree must be 6x6, got shape {X.shape}")
    if not _numeric(X):
        return X
    X = X.astype(float)
    E, r = plux_parts(X)
    if not np.allclose(E @ E.T, np.eye(3), atol=1e-9) or np.linalg.det(E) < 0:
        raise RbdlearnError(f"{name}: Xtree's rotation block is not a rotation")
    if np.abs(plux(E, r) - X).max() > 1e-9 * max(1.0, np.abs(X).max()):
        raise RbdlearnError(f"{name}: Xtree is not a Plücker transform "
                            f"[E 0; −E r× E] (build it with spatial.plux(E, r))")
    return X


def _derived(model):
    """What follows from a checked model's fields: its sizes and indices, and the joints'
    constants that the shared kinematics reads (see :class:`Model`)."""
    N, joints = len(model.parent) - 1, model.joints
    nq_i = [0] + [joints[i].nq for i in range(1, N + 1)]
    nv_i = [0] + [joints[i].nv for i in range(1, N + 1)]
    q_index = [0] + [sum(nq_i[1:i]) for i in range(1, N + 1)]
    v_index = [0] + [sum(nv_i[1:i]) for i in range(1, N + 1)]
    rev = [i for i in range(1, N + 1) if isinstance(joints[i], Revolute)
           and _numeric(model.Xtree[i])]
    terms = [joints[i].XJ_terms(model.Xtree[i]) for i in rev]
    varying = any(joints[i].S_depends_on_q for i in range(1, N + 1))
    return {
        "N": N, "nq": sum(nq_i), "nv": sum(nv_i),
        "q_index": _FrozenList(q_index), "v_index": _FrozenList(v_index),
        "q_slices": _FrozenList([None] + [slice(q_index[i], q_index[i] + nq_i[i])
                                          for i in range(1, N + 1)]),
        "v_slices": _FrozenList([None] + [slice(v_index[i], v_index[i] + nv_i[i])
                                          for i in range(1, N + 1)]),
        "velocity_body": _frozen(np.array([i for i in range(1, N + 1)
                                           for _ in range(nv_i[i])], dtype=int)),
        "manifold_bodies": _FrozenList(i for i in range(1, N + 1) if nq_i[i] != nv_i[i]),
        "S_constant": None if varying else _frozen(np.concatenate(
            [np.zeros((6, 0))] + [joints[i].S(np.zeros(0)) for i in range(1, N + 1)],
            axis=1)),
        "revolute_terms": (_frozen(np.array(rev, dtype=int)),
                           _frozen(np.array([q_index[i] for i in rev], dtype=int)),
                           _frozen(np.array(terms).reshape(len(rev), 3, 36)),
                           _FrozenList(i for i in range(1, N + 1) if i not in rev)),
    }


@dataclass
class Pointers:
    """The pointer view of a tree (Nakamura and Yamane): for each body its parent,
    its first child and its next brother (sibling); -1 means none."""
    parent: list
    child: list
    brother: list


def pointers(model):
    """The parent/child/brother pointer view of ``model``."""
    n = model.N + 1
    child, brother = [-1] * n, [-1] * n
    for i in range(model.N, 0, -1):          # inserting in reverse keeps siblings in order
        p = model.parent[i]
        brother[i], child[p] = child[p], i
    return Pointers(list(model.parent), child, brother)


def _real_array(x, name):
    """A float array, or an object array of real numbers and sympy expressions."""
    a = np.asarray(x)
    if a.dtype == np.float64:
        return a
    if a.dtype == object:
        import sympy
        for e in a.ravel():
            if not isinstance(e, (numbers.Real, sympy.Expr)):
                raise RbdlearnError(f"{name} must hold real numbers or sympy expressions, "
                                    f"got {e!r}")
        return a
    if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise RbdlearnError(f"{name} must hold real numbers, got dtype {a.dtype}")
    return a.astype(float)


def _all_finite(a):
    """``np.isfinite(a).all()`` for a numeric array. One state's vector is checked entry by
    entry with ``math.isfinite``: on a few numbers that is several times quicker than
    numpy's reduction, and the checks run in every algorithm."""
    if a.ndim == 1:
        return all(map(math.isfinite, a.tolist()))
    return bool(np.isfinite(a).all())


def check_state(model, batch=False, **vectors):
    """Check and convert q / qd / qdd / tau style vectors of ``model``.

    Each keyword names a vector; the name decides its expected length (``q`` → nq,
    anything else → nv). Returns the arrays in the order given. Numeric vectors
    become float arrays; lists of sympy expressions become object arrays.

    ``batch=True`` (for the functions that take a batch of states) also accepts
    arrays of shape (..., nq) or (..., nv), numeric, whose leading axes must
    broadcast together; a single vector is returned unchanged.
    """
    out, shapes = [], {}
    for name, x in vectors.items():
        n = model.nq if name == "q" else model.nv
        a = _real_array(x, name)
        what = "nq" if name == "q" else "nv"
        if a.shape != (n,):
            if not batch or a.ndim < 2 or a.shape[-1] != n:
                also = f", or (..., {n}) for a batch of states" if batch else ""
                raise RbdlearnError(f"{name} has shape {a.shape}, expected ({n},) = "
                                    f"({what},){also}")
            if a.dtype == object:
                raise RbdlearnError(f"{name}: a batch of states (shape {a.shape}) must be "
                                    f"numeric; pass symbolic states one at a time")
            shapes[name] = a.shape
        if a.dtype != object and not _all_finite(a):
            bad = tuple(int(k) for k in np.argwhere(~np.isfinite(a))[0])
            raise RbdlearnError(f"{name}[{', '.join(map(str, bad))}] is {a[bad]}")
        if name == "q":
            for i in model.manifold_bodies:
                model.joints[i].check_q(a[..., model.q_slices[i]],
                                        f"q of joint '{model.names[i]}'")
        out.append(a)
    if len(shapes) > 1:
        try:
            np.broadcast_shapes(*(shape[:-1] for shape in shapes.values()))
        except ValueError:
            got = ", ".join(f"{k} has shape {v}" for k, v in shapes.items())
            raise RbdlearnError(f"the batch axes (all but the last) of the states do not "
                                f"broadcast together: {got}") from None
    return out


def batch_shape(*arrays):
    """The common batch shape of state vectors (..., n) (after ``check_state``): () for
    single vectors."""
    if all(np.ndim(a) == 1 for a in arrays):
        return ()                       # the common case, one state, answered quickly
    return np.broadcast_shapes(*(np.shape(a)[:-1] for a in arrays))


def body_index(model, i, name="body"):
    """Body ``i`` of ``model`` as an int: ``i`` is an integer 1..N (a numpy integer too,
    never a bool) or the name of a body (``model.body_names``). Anything else raises
    :class:`~rbdlearn.errors.RbdlearnError` naming the argument ``name`` and what it got.
    The one check of a body argument in rbdlearn."""
    if isinstance(i, str):
        if i in model.body_names[1:]:
            return model.body_names.index(i)
        k = model.names.index(i) if i in model.names[1:] else None
        hint = f" ('{i}' is the joint of body {k}, '{model.body_names[k]}')" if k else ""
        raise RbdlearnError(f"{name} names body '{i}', which is not a body of the model"
                            f"{hint}; bodies: {model.body_names[1:]}")
    if not is_body(model, i):
        raise RbdlearnError(f"{name}: body index must be an integer in 1..{model.N} (or a "
                            f"name of model.body_names), got {type(i).__name__} {i!r}")
    return int(i)


def is_body(model, i):
    """Whether ``i`` is a body index of ``model``: an integer in 1..N (not a bool).
    The predicate that :func:`body_index`, the check of a body argument, uses."""
    return (isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))
            and 1 <= i <= model.N)


def _broadcasts_to(shape, target):
    """Whether an array of ``shape`` broadcasts to ``target`` without enlarging it."""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def check_forces(model, f_ext, batch=()):
    """``f_ext`` as a list of N+1 spatial forces (body coordinates; entry 0 ignored), from
    such a list or from a mapping {body: force}, each body given once, by index or by name.

    ``batch`` is the batch shape of the states the forces act in (``batch_shape``; () for
    one state): each force is a 6-vector, the same in every state, or has shape
    ``batch + (6,)`` (or leading axes that broadcast to it without enlarging it), one per
    state."""
    if f_ext is None:
        return None
    if isinstance(f_ext, Mapping):
        f, given = [None] * (model.N + 1), {}
        for key, fi in f_ext.items():
            i = body_index(model, key, "f_ext")
            if i in given:
                raise RbdlearnError(f"f_ext gives body {i} ('{model.body_names[i]}') twice, as "
                                    f"{given[i]!r} and as {key!r}: give each body once")
            given[i], f[i] = key, fi
        f_ext = f
    elif not isinstance(f_ext, (list, tuple, np.ndarray)) or getattr(f_ext, "ndim", 1) == 0:
        raise ArgumentTypeError(
            f"f_ext must be None, a mapping {{body: spatial force}} (a body by index or by "
            f"name) or a list of N + 1 = {model.N + 1} spatial forces, got "
            f"{type(f_ext).__name__} {f_ext!r:.60}")
    if len(f_ext) != model.N + 1:
        raise RbdlearnError(f"f_ext has {len(f_ext)} entries, expected N + 1 = {model.N + 1} "
                            f"(entry 0 for the base is ignored)")
    batch = tuple(batch)
    out = [np.zeros(6)]
    for i in range(1, model.N + 1):
        fi = _real_array(f_ext[i], f"f_ext[{i}]") if f_ext[i] is not None else np.zeros(6)
        if fi.shape != (6,) and not (fi.ndim > 1 and fi.shape[-1] == 6
                                     and _broadcasts_to(fi.shape[:-1], batch)):
            want = (f"(6,), the same force in every state, or {batch + (6,)}, one per state "
                    f"of the batch" if batch else "a spatial force (6,) for one state")
            raise RbdlearnError(f"f_ext[{i}] has shape {fi.shape}, expected {want} (the force "
                                f"on body {i}, '{model.body_names[i]}')")
        if fi.dtype != object and not _all_finite(fi):
            raise RbdlearnError(f"f_ext[{i}] contains NaN or inf")
        out.append(fi)
    return out


_STILL = weakref.WeakKeyDictionary()      # model -> the same model with gravity off


def without_gravity(model):
    """``model`` with gravity off, ``model.replace(gravity=0)`` (a new model: the same
    bodies and joints), e.g. to read H q̈ or H⁻¹ τ off RNEA or ABA at rest. Algorithms call
    it often, so each model's twin is built once and kept while the model lives (a model
    never changes, so its twin never goes stale)."""
    if model not in _STILL:
        _STILL[model] = model.replace(gravity=np.zeros(6))
    return _STILL[model]


def neutral_q(model):
    """The neutral configuration (zero angles, identity quaternions)."""
    parts = [model.joints[i].neutral() for i in range(1, model.N + 1)]
    return np.concatenate(parts) if parts else np.zeros(0)


def random_q(model, rng):
    """A random valid configuration. ``rng``: a ``numpy.random.Generator``, or a seed
    (an int) for ``numpy.random.default_rng``."""
    rng = np.random.default_rng(rng)
    parts = [model.joints[i].random_q(rng) for i in range(1, model.N + 1)]
    return np.concatenate(parts) if parts else np.zeros(0)


def integrate_q(model, q, v):
    """``q ⊕ v``: the configuration reached by moving with velocity ``v`` for unit time
    (for one state or a batch: q (..., nq), v (..., nv))."""
    q, v = check_state(model, batch=True, q=q, v=v)
    if not model.manifold_bodies:         # no quaternion: every joint's q ⊕ v is q + v
        return q + v
    shape = batch_shape(q, v)
    q, v = np.broadcast_to(q, shape + q.shape[-1:]), np.broadcast_to(v, shape + v.shape[-1:])
    parts = [model.joints[i].integrate(q[..., model.q_slices[i]], v[..., model.v_slices[i]])
             for i in range(1, model.N + 1)]
    return np.concatenate(parts, axis=-1) if parts else np.zeros(shape + (0,))


def _per_body(value, n, what):
    if np.ndim(value) == 0:
        return [value] * n
    if len(value) != n:
        raise RbdlearnError(f"{what} has {len(value)} entries, expected {n}")
    return list(value)


def planar_chain(n, length=1.0, mass=1.0, inertia=None, gravity=GRAVITY):
    """An n-link planar arm moving in the y-z plane: revolute joints about x, links
    along y at q = 0, each a uniform rod whose COM is at its middle.

    ``length``, ``mass`` and ``inertia`` (moment about the COM around x; default
    the thin-rod value m l²/12) are scalars or one value per link, and may be
    sympy symbols for symbolic derivations.
    """
    if int(n) != n or n < 1:
        raise RbdlearnError(f"planar_chain needs n >= 1 links, got {n!r}")
    L = _per_body(length, n, "length")
    m = _per_body(mass, n, "mass")
    Ic = _per_body(inertia, n, "inertia") if inertia is not None else [None] * n
    # object arrays when any parameter is symbolic, so that sympy results stay exact
    dtype = np.asarray(L + m + [x for x in Ic if x is not None]).dtype
    dtype = object if dtype == object else float
    joints, Xtree, I = [None], [None], [None]
    for k in range(n):
        Izz = m[k] * L[k] ** 2 / 12 if Ic[k] is None else Ic[k]
        joints.append(Revolute([1.0, 0.0, 0.0]))
        Xtree.append(plux(np.eye(3, dtype=dtype), [0, L[k - 1] if k else 0, 0]))
        I.append(mcI(m[k], np.array([0, L[k] / 2, 0]), np.diag([Izz, 0, Izz])))
    return Model(parent=list(range(-1, n)), joints=joints, Xtree=Xtree, I=I,
                 names=["base"] + [f"joint{k + 1}" for k in range(n)],
                 body_names=["base"] + [f"link{k + 1}" for k in range(n)],
                 gravity=np.array(gravity))


def _random_inertia(rng):
    """A random physical inertia: a random mass, COM, and principal second moments."""
    m = rng.uniform(0.5, 2.0)
    second = rng.uniform(0.01, 0.1, 3) * m          # ∫x², ∫y², ∫z² about the COM
    principal = second.sum() - second                # Ixx = ∫y² + ∫z², ...
    R = exp_so3(rng.normal(size=3))
    return mcI(m, rng.uniform(-0.3, 0.3, 3), R @ np.diag(principal) @ R.T)


def _random_axis(rng):
    if rng.random() < 0.3:
        return np.eye(3)[rng.integers(3)] * rng.choice([-1.0, 1.0])
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def random_tree(n, seed=None, joint_types=("revolute", "prismatic", "spherical",
                                            "free", "fixed"), p_chain=0.5):
    """A random 3-D branching tree of ``n`` bodies with the given joint types.

    Each body's parent is the previous body with probability ``p_chain`` and a
    uniformly chosen earlier body otherwise. Joint types cycle through
    ``joint_types`` in random order (so every type appears when n >= their count);
    axes, tree transforms and inertias are random but physical. Besides the defaults,
    ``"spherical_zyx"`` (the Euler-angle ball joint of Chapter 2) is available.
    """
    rng = np.random.default_rng(seed)
    makers = {"revolute": lambda: Revolute(_random_axis(rng)),
              "prismatic": lambda: Prismatic(_random_axis(rng)),
              "spherical": Spherical, "spherical_zyx": SphericalZYX, "free": Free,
              "fixed": Fixed}
    for t in joint_types:
        if t not in makers:
            raise RbdlearnError(f"unknown joint type {t!r}; choose from {sorted(makers)}")
    if int(n) != n or n < 1:
        raise RbdlearnError(f"random_tree needs n >= 1 bodies, got {n!r}")
    kinds = [joint_types[k % len(joint_types)] for k in range(n)]
    rng.shuffle(kinds)
    parent, joints, Xtree, I = [-1], [None], [None], [None]
    for i in range(1, n + 1):
        parent.append(i - 1 if rng.random() < p_chain else int(rng.integers(0, i)))
        joints.append(makers[kinds[i - 1]]())
        Xtree.append(plux(exp_so3(rng.normal(size=3)).T, rng.uniform(-0.5, 0.5, 3)))
        I.append(_random_inertia(rng))
    return Model(parent=parent, joints=joints, Xtree=Xtree, I=I)


def floating_base(model, inertia, name="root_joint", body_name="root"):
    """A copy of ``model`` whose root is a free-floating body with spatial inertia
    ``inertia``: a new body 1 joined to the world by a free joint, carrying every
    body that was attached to the fixed base."""
    check_inertia(inertia, f"floating base body '{body_name}'", physical=model.physical)
    parent = [-1, 0] + [p + 1 if p > 0 else 1 for p in model.parent[1:]]
    return Model(parent=parent,
                 joints=[None, Free()] + model.joints[1:],
                 Xtree=[None, np.eye(6)] + model.Xtree[1:],
                 I=[None, np.asarray(inertia)] + model.I[1:],
                 names=["base", name] + model.names[1:],
                 body_names=[model.body_names[0], body_name] + model.body_names[1:],
                 gravity=model.gravity.copy(), physical=model.physical)
