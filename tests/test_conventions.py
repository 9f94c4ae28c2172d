"""The package's conventions, checked over its public API (the conventions appendix states
them): importing rbdlearn changes nothing outside it, and every error class it defines
derives from one exported base."""

import inspect
import subprocess
import sys

import pytest

import rbdlearn as rbd


def test_import_leaves_blas_alone_and_one_blas_thread_is_explicit():
    script = """
import json
from threadpoolctl import threadpool_info
import numpy
before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
import rbdlearn
after = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
with rbdlearn.one_blas_thread():
    inside = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
restored = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
print(json.dumps([before, after, inside, restored]))
"""
    env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True).stdout
    import json
    before, after, inside, restored = json.loads(out)
    assert before and all(n == 2 for n in before), before
    assert after == before, "importing rbdlearn changed BLAS's threads"
    assert all(n == 1 for n in inside), inside
    assert restored == before


def _package_modules():
    import pkgutil
    import importlib
    for info in pkgutil.walk_packages(rbd.__path__, "rbdlearn."):
        yield importlib.import_module(info.name)


def test_every_error_derives_from_the_exported_base():
    found = {}
    for module in _package_modules():
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, Exception)
                    and obj.__module__.startswith("rbdlearn")):
                found[name] = obj
    assert len(found) >= 8, sorted(found)
    for name, cls in found.items():
        assert getattr(rbd, name, None) is cls, f"rbdlearn does not export {name}"
        if issubclass(cls, Warning):
            continue
        assert issubclass(cls, rbd.RbdlearnError), f"{name} does not derive from RbdlearnError"
        assert issubclass(cls, ValueError), name        # as every error of the package was


def test_errors_raised_are_the_base_or_its_subclasses():
    with pytest.raises(rbd.RbdlearnError, match="q"):
        rbd.rnea(rbd.planar_chain(2), [0.0], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(rbd.FrozenModelError):
        rbd.planar_chain(2).parent.append(2)
    with pytest.raises(rbd.ArgumentTypeError):
        rbd.urdf.load(__file__, floating_base="false")


# The first parameter of a public function names the chapter's system object, the same
# name for the same type in every module (drawing functions take matplotlib's ``ax``).
SYSTEM_NAMES = {"model", "mech", "fig", "arm", "ax", "axes", "fig_or_ax"}


def _public_functions():
    for module in _package_modules():
        names = getattr(module, "__all__", None) or [n for n in vars(module)
                                                      if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name, None)
            if inspect.isfunction(obj) and obj.__module__ == module.__name__:
                yield module.__name__, name, obj


def test_every_simulate_takes_the_time_as_t_end_dt_and_the_rest_by_keyword():
    found = [(m, f) for m, n, f in _public_functions() if n == "simulate"]
    assert len(found) >= 4, [m for m, _ in found]
    for module, f in found:
        params = list(inspect.signature(f).parameters.values())
        positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert positional[1:] == ["q0", "qd0", "t_end", "dt"], (module, positional)
        assert positional[0] in SYSTEM_NAMES, (module, positional[0])
        tau = inspect.signature(f).parameters.get("tau")
        assert tau is not None and tau.kind is tau.KEYWORD_ONLY, module


def test_first_parameters_name_the_system_the_same_way():
    names = {}
    for module, name, f in _public_functions():
        params = list(inspect.signature(f).parameters)
        if params and params[0] in {"system", "mechanism", "robot", "figure", "human", "linkage"}:
            names[f"{module}.{name}"] = params[0]
    assert not names, f"first parameters outside the convention: {names}"


def test_no_module_is_longer_than_600_lines():
    from pathlib import Path
    long = {p.name: n for p in Path(rbd.__file__).parent.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, long


def test_every_simulate_returns_a_trajectory():
    import numpy as np
    from rbdlearn import closed_chains as cc
    from rbdlearn import constrained as cn
    from rbdlearn import contact as ct
    from rbdlearn import models
    chain = rbd.planar_chain(2)
    arm = cn.PlanarArmOnFloor(2)
    mech = cc.four_bar()
    box, corners = models.box()
    runs = {
        "integrate": rbd.simulate(chain, [0.1, 0.2], [0.0, 0.0], 0.02, 0.01),
        "constrained": cn.simulate(arm, cn.floor_arm_posture(0.6), np.zeros(2), 0.02, 0.01),
        "closed_chains": cc.simulate(mech, cc.assemble(mech, [1.0, -1.0, -1.5, 1.5],
                                                       independent=[0]),
                                     np.zeros(4), 0.02, 0.01),
        "contact": ct.simulate(box, rbd.neutral_q(box), np.zeros(box.nv), 0.02, 0.01,
                               contacts=ct.plane_contacts(box, [(1, c) for c in corners])),
    }
    for name, traj in runs.items():
        assert isinstance(traj, rbd.Trajectory), name
        assert np.allclose(traj.t, [0.0, 0.01, 0.02]), (name, traj.t)
        assert traj.q.shape[0] == traj.qd.shape[0] == 3, name
