"""Time the update callback of every explorer in rbdlearn.widgets against the 100 ms budget.

Budget (BOOK_GUIDE §6, issue 7): a widget answers a slider in under 100 ms. Each explorer
is built as the notebooks build it (matplotlib's Agg backend, no kernel needed); then,
for each of its controls, the value is moved back and forth and the time until the
callback returns — the callback that the control's ``observe`` runs: recompute, move the
artists, render the PNG — is measured, best of ``--repeat``. Reports; never fails on
timings.

Every public ``*_explorer`` in rbdlearn.widgets is timed; one that the notebooks call
with arguments gets one line in CALLS (one that has required arguments and no such line
is listed, not timed).

With ``--static``, also the kernel-free form of each (``widgets.precomputed``, what the
book's pages show): its frame count, the time to precompute it, and what it adds to its
page — the frames' PNGs as the page stores them (base64) plus the read-outs' HTML.

With ``--split`` (implies ``--static``), also where that precompute time goes, under
cProfile: rbdlearn's algorithms (the calls from the widgets and viz packages into its other
modules: dynamics, kinematics, simulations) against drawing and encoding the frames. The
algorithms' share says where computing all frames in one batched call could serve.

    .venv/bin/python benchmarks/bench_widgets.py [--repeat 7] [--only NAME] [--static] [--split]
"""

import argparse
import cProfile
import inspect
import os
import pstats
import time

import matplotlib

matplotlib.use("Agg")

import ipywidgets as W  # noqa: E402

from rbdlearn import one_blas_thread, widgets  # noqa: E402

one_blas_thread()   # time one thread of BLAS, as the book's timing cells do

BUDGET_MS = 100.0

# name -> the call the notebooks make, when it is not the explorer's defaults
CALLS = {
    "rnea_explorer": lambda: widgets.rnea_explorer(2),
    "crb_fill_explorer": lambda: widgets.crb_fill_explorer("0 1 2 1 4 4 3"),
    "bar_release_explorer": lambda: _bar_release(),
    "contact_run_explorer": lambda: _contact_run(),
}


def _bar_release():
    """The §5.1 explorer draws precomputed runs; its callback only redraws, so a figure
    sinking below the bar stands in for the notebook's simulations."""
    import numpy as np
    from rbdlearn import closed_chains as cc
    fig = cc.human_figure()
    t = np.linspace(0.0, 1.0, 41)
    skeletons = [cc.figure_skeleton(fig, cc.figure_q(fig, [0, 0, 1.0 - 0.1 * s], np.eye(3)))
                 for s in t]
    return widgets.bar_release_explorer({r: (t, skeletons, np.zeros_like(t))
                                         for r in (0.5, 1.0, 1.5)}, 2.2)


def _contact_run():
    """The §2.6 explorer draws precomputed runs; its callback only redraws, so a box
    sliding and turning above the floor, with four corner forces and a read-out per step
    (151 steps, as the notebook's Lemke run), stands in for the notebook's simulation."""
    import numpy as np
    t = np.linspace(0.0, 1.5, 151)
    corners = np.array([[-0.3, -0.1], [0.3, -0.1], [0.3, 0.1], [-0.3, 0.1]])
    lines, forces = [], []
    for k, tk in enumerate(t):
        c, s = np.cos(0.3 * tk), np.sin(0.3 * tk)
        pts = corners @ np.array([[c, s], [-s, c]]) + [0.8 * tk, 0.4 - 0.2 * tk]
        lines.append([pts[[j, (j + 1) % 4]] for j in range(4)])
        forces.append(np.hstack([pts, np.tile([0.0, 5.0 + k % 7], (4, 1))]))
    text = [f"t = {tk:.2f} s\nnormal forces P_n/h: {k % 7:6.2f} N" for k, tk in enumerate(t)]
    return widgets.contact_run_explorer({"Lemke": dict(t=t, lines=lines, forces=forces,
                                                       text=text)},
                                        xlim=(-0.5, 1.0), ylim=(-0.1, 0.6),
                                        force_scale=0.003, axis_labels=("x [m]", "z [m]"))


def explorers():
    """(name, factory) of every public ``*_explorer`` in rbdlearn.widgets, in the book's
    order: by chapter module (ch1_spatial, …, ch5_closed), then in source order."""
    found = [(name, fn) for name, fn in vars(widgets).items()
             if name.endswith("_explorer") and not name.startswith("_") and inspect.isfunction(fn)]
    found.sort(key=lambda item: (item[1].__module__, inspect.getsourcelines(item[1])[1]))
    return [(name, CALLS.get(name, fn)) for name, fn in found]


def needs_arguments(make):
    return any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in inspect.signature(make).parameters.values())


def other_value(control):
    """A value for ``control`` different from its current one (the callback must run)."""
    v = control.value
    if isinstance(control, (W.FloatSlider, W.IntSlider)):
        step = 0.25 * (control.max - control.min)
        new = v + step if v + step <= control.max else v - step
        return round(new) if isinstance(control, W.IntSlider) else new
    if isinstance(control, W.Text):          # e.g. a parent array: same tree, redrawn
        return v[:-1] if v.endswith(" ") else v + " "
    if hasattr(control, "options"):          # Dropdown, ToggleButtons, RadioButtons
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return next(o for o in values if o != v)
    if isinstance(control, W.Checkbox):
        return not v
    raise TypeError(f"bench_widgets: no rule to move a {type(control).__name__}")


def time_control(control, repeat):
    """Best time in ms of setting ``control`` to a new value (which runs the callback)."""
    a, b = control.value, other_value(control)
    if b == a:
        raise ValueError(f"bench_widgets: {control.description!r} has a single value")
    best = float("inf")
    for k in range(repeat + 1):              # the first round is a warm-up
        value = b if k % 2 == 0 else a
        t0 = time.perf_counter()
        control.value = value
        dt = (time.perf_counter() - t0) * 1e3
        if k:
            best = min(best, dt)
    control.value = a
    return best


def static_form(box):
    """(frames, seconds to precompute, kB added to the page) of the kernel-free form."""
    t0 = time.perf_counter()
    static = widgets.precomputed(box)
    seconds = time.perf_counter() - t0
    frames, size, todo = 0, 0.0, [static.pictures, static.readouts]
    while todo:
        w = todo.pop()
        if isinstance(w, W.Stack):
            todo.extend(w.children)
        elif isinstance(w, W.Image):
            frames += 1
            size += 4 / 3 * len(w.value)          # base64 in the page's widget state
        else:
            size += len(w.value.encode())
    return frames, seconds, size / 1024


def _algorithm(code):
    """Whether a profiled function is one of rbdlearn's algorithms (not widgets, not viz)."""
    path = code[0]
    return (f"{os.sep}rbdlearn{os.sep}" in path
            and not any(f"{os.sep}rbdlearn{os.sep}{p}{os.sep}" in path for p in ("widgets", "viz")))


def static_split(box):
    """(seconds, of which in rbdlearn's algorithms, of which drawing and encoding) to
    precompute the kernel-free form of a new ``box`` under cProfile, which slows Python-heavy code more
    than drawing: the algorithms' share is if anything overstated. Algorithms: each call
    into them from outside them (the outermost ones); drawing: ``_Picture.flush`` (draw
    the figure, encode the PNG) and ``small_image`` (quantize and encode a frame), in
    widgets/core.py."""
    prof = cProfile.Profile()
    prof.runcall(widgets.precomputed, box)
    stats = pstats.Stats(prof).stats
    total = sum(s[2] for s in stats.values())
    algorithms = sum(edge[3] for code, s in stats.items() if _algorithm(code)
                     for caller, edge in s[4].items() if not _algorithm(caller))
    drawing = sum(s[3] for code, s in stats.items()
                  if code[0].endswith(os.path.join("widgets", "core.py"))
                  and code[2] in ("flush", "small_image"))
    return total, algorithms, drawing


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed calls per control (best kept)")
    ap.add_argument("--only", help="time only this explorer")
    ap.add_argument("--static", action="store_true",
                    help="also measure each explorer's kernel-free form")
    ap.add_argument("--split", action="store_true",
                    help="also split its precompute time: algorithms against drawing")
    args = ap.parse_args()
    args.static = args.static or args.split
    print(f"widget update callbacks: best of {args.repeat} calls per control, "
          f"budget {BUDGET_MS:.0f} ms\n")
    head = f"{'explorer':<30} {'control':<12} {'best ms':>8} {'budget ms':>10}  result"
    print(head)
    print("-" * len(head))
    worst, untimed, static, split = {}, [], {}, {}
    for name, make in explorers():
        if args.only and name != args.only:
            continue
        if needs_arguments(make):
            print(f"{name:<30} (takes arguments: add the notebook's call to CALLS)")
            untimed.append(name)
            continue
        box = make()
        controls = getattr(box, "controls", None)
        if not controls:
            print(f"{name:<30} (no .controls dict: cannot be timed)")
            untimed.append(name)
            continue
        for key, control in controls.items():
            ms = time_control(control, args.repeat)
            worst[name] = max(worst.get(name, 0.0), ms)
            verdict = "PASS" if ms <= BUDGET_MS else f"OVER by {ms - BUDGET_MS:.0f} ms"
            print(f"{name:<30} {key:<12} {ms:>8.1f} {BUDGET_MS:>10.0f}  {verdict}")
        if args.static:
            static[name] = static_form(box)
        if args.split:
            split[name] = static_split(make())     # fresh: nothing cached by the above
    over = [n for n, ms in worst.items() if ms > BUDGET_MS]
    print(f"\n{len(worst)} explorers, slowest control "
          f"{max(worst.values(), default=0):.1f} ms; "
          + (f"over budget: {', '.join(over)}" if over else "all within budget")
          + (f"; not timed: {', '.join(untimed)}" if untimed else ""))
    if static:
        print(f"\nkernel-free forms (widgets.precomputed)\n{'explorer':<30} {'frames':>6} "
              f"{'seconds':>8} {'kB added':>9}")
        for name, (frames, seconds, kb) in static.items():
            print(f"{name:<30} {frames:>6} {seconds:>8.1f} {kb:>9.0f}")
        print(f"{'total':<30} {sum(f for f, _, _ in static.values()):>6} "
              f"{sum(s for _, s, _ in static.values()):>8.1f} "
              f"{sum(k for _, _, k in static.values()):>9.0f}")
    if split:
        print(f"\nwhere the precompute time goes (under cProfile)\n{'explorer':<30} "
              f"{'seconds':>8} {'algorithms':>15} {'drawing+PNG':>15}")
        for name, (total, algo, drawing) in split.items():
            print(f"{name:<30} {total:>8.2f} {algo:>8.2f} ({algo / total:3.0%}) "
                  f"{drawing:>8.2f} ({drawing / total:3.0%})")


if __name__ == "__main__":
    main()
