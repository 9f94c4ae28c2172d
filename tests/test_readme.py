"""The README's Python quick start runs as written, and its numbers are Pinocchio's."""

import re

import numpy as np
import pytest

from test_notebooks_clean import ROOT

pin = pytest.importorskip("pinocchio")


def quick_start():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start in Python", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S)[1]


def test_quick_start_runs_and_matches_pinocchio(capsys):
    ns = {}
    exec(compile(quick_start(), "README.md (quick start)", "exec"), ns)
    assert "Model(N=6 bodies, nq=6, nv=6" in capsys.readouterr().out
    from rbdlearn import interop
    ur5, q, qd, tau, H = (ns[k] for k in ("ur5", "q", "qd", "tau", "H"))
    pm = interop.to_pinocchio(ur5)
    pd = pm.createData()
    qp, vp = interop.q_to_pin(ur5, pm, q), interop.v_to_pin(ur5, pm, qd)
    tau_pin = pin.rnea(pm, pd, qp, vp, np.zeros(pm.nv))
    np.testing.assert_allclose(interop.v_to_pin(ur5, pm, tau), tau_pin, atol=1e-10)
    H_pin = interop.H_from_pin(ur5, pm, pin.crba(pm, pd, qp))
    np.testing.assert_allclose(H, H_pin, atol=1e-10)
    # released at rest the arm falls: it moves, and RK4 keeps its energy to 1e-5 J
    traj, E = ns["traj"], ns["E"]
    assert np.abs(traj.q[-1] - q).max() > 0.1
    assert max(E) - min(E) < 1e-5
