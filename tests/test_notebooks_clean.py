"""The committed notebooks carry no outputs, and _toc.yml and book/ agree.

Notebooks are committed without outputs: `make test` and `make book` execute them
(`make strip` clears outputs before a commit). With `only_build_toc_files: true`
a notebook missing from _toc.yml would silently drop out of the book, and an entry
without a file would break the build.
"""

import ast
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import nbexec  # noqa: E402  (the one reader of _toc.yml)

BOOK = ROOT / "book"
PAGE_SUFFIXES = (".ipynb", ".md")


def book_notebooks():
    return sorted(p for p in BOOK.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def toc_entries():
    """Every `root` / `file` entry of _toc.yml, as written (paths without suffix)."""
    return nbexec.toc_entries(ROOT)


def rel(path):
    return path.relative_to(ROOT).as_posix()


def test_the_book_has_notebooks():
    # Guards the tests below against passing vacuously on an empty or misplaced book/.
    assert book_notebooks(), f"no notebooks found under {BOOK}"


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_notebook_has_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        first_line = cell.source.splitlines()[0] if cell.source else ""
        where = f"cell {index} ({first_line[:50]!r})"
        if cell.get("outputs"):
            problems.append(f"{where} has {len(cell.outputs)} output(s)")
        if cell.get("execution_count") is not None:
            problems.append(f"{where} has execution_count {cell.execution_count}")
    if "widgets" in nb.metadata:
        problems.append("notebook metadata holds saved widget state ('widgets')")
    assert not problems, (
        f"{rel(path)} is committed with outputs (run `make strip`):\n  " + "\n  ".join(problems)
    )


# an animation's frames are drawn once each by viz.to_jshtml; matplotlib's own method
# (`anim.to_jshtml()`) draws every frame twice
def calls_own_to_jshtml(source):
    return re.search(r"(?<!\bviz)\.to_jshtml\(", source) is not None


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_animations_are_saved_by_viz_to_jshtml(path):
    nb = nbformat.read(path, as_version=4)
    direct = [index for index, cell in enumerate(nb.cells)
              if cell.cell_type == "code" and calls_own_to_jshtml(cell.source)]
    assert not direct, f"{rel(path)}: cells {direct} call an animation's own to_jshtml"


def test_the_animation_check_finds_a_direct_call():
    assert calls_own_to_jshtml('html = anim.to_jshtml(default_mode="once")')
    assert not calls_own_to_jshtml("html = viz.to_jshtml(anim)")
    assert not calls_own_to_jshtml("html = to_jshtml(anim)")


# the cell tags Jupyter Book and nbclient (which runs the notebooks) act on; anything else is a typo the build ignores
KNOWN_TAGS = {"remove-cell", "remove-input", "remove-output", "hide-input", "hide-output",
              "hide-cell", "raises-exception", "skip-execution", "full-width", "margin"}


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_cell_tags_are_known(path):
    nb = nbformat.read(path, as_version=4)
    unknown = [(index, tag) for index, cell in enumerate(nb.cells)
               for tag in cell.metadata.get("tags", []) if tag not in KNOWN_TAGS]
    assert not unknown, f"{rel(path)}: unknown cell tags (cell, tag): {unknown}"


def test_every_toc_entry_exists():
    missing = [
        entry for entry in toc_entries()
        if not any((ROOT / (entry + suffix)).is_file() for suffix in PAGE_SUFFIXES)
        and not (ROOT / entry).is_file()
    ]
    assert not missing, f"_toc.yml lists pages that do not exist: {missing}"


def test_every_notebook_is_in_the_toc():
    listed = {str(Path(entry).with_suffix("")) if Path(entry).suffix in PAGE_SUFFIXES else entry
              for entry in toc_entries()}
    orphans = [rel(p) for p in book_notebooks() if rel(p.with_suffix("")) not in listed]
    assert not orphans, (
        f"notebooks missing from _toc.yml (they would not be built): {orphans}"
    )


# --------------------------------------------------------------------------------------
# Colab: a notebook opened from GitHub in Colab has no rbdlearn. Every notebook starts
# (first code cell, hidden from the book by `remove-cell`) with a cell that installs it
# there, and does nothing anywhere else. Copy that cell from any notebook into a new one.
# --------------------------------------------------------------------------------------

REPO_URL = "https://github.com/rbdlearn/rbdlearn"


def pin_lines():
    """requirements.txt's pins, {lower-case name: 'name==version'}."""
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return {line.split("==")[0].strip().lower(): line.strip() for line in lines
            if "==" in line and not line.lstrip().startswith("#")}


def pinned(name):
    """The exact version pin of ``name`` in requirements.txt (e.g. 'pin==4.1.0')."""
    if name.lower() not in pin_lines():
        raise AssertionError(f"{name} is not pinned in requirements.txt")
    return pin_lines()[name.lower()]


def run_install_cell(source, in_colab, monkeypatch):
    """Execute the cell's source with subprocess.check_call recorded instead of run;
    return the recorded calls."""
    import subprocess
    import sys
    import types

    calls = []
    monkeypatch.setattr(subprocess, "check_call", lambda cmd, *a, **k: calls.append(cmd))
    if in_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(compile(source, "<colab cell>", "exec"), {})
    return calls


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_notebook_installs_rbdlearn_in_colab(path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{rel(path)} has no code cell"
    first = code[0]
    assert "google.colab" in first.source, (
        f"{rel(path)}: the first code cell must be the Colab install cell "
        "(copy it from any other notebook)")
    assert "remove-cell" in first.metadata.get("tags", []), (
        f"{rel(path)}: tag the Colab install cell 'remove-cell' so the book does not show it")
    assert run_install_cell(first.source, False, monkeypatch) == [], (
        f"{rel(path)}: the Colab cell must do nothing outside Colab")
    calls = run_install_cell(first.source, True, monkeypatch)
    assert len(calls) == 1, f"{rel(path)}: expected one pip call in Colab, got {calls}"
    args = calls[0]
    assert args[1:4] == ["-m", "pip", "install"], args
    source = f"rbdlearn @ git+{REPO_URL}@{book_branch()}"
    assert source in args, (
        f"{rel(path)}: install {source!r}, the branch the book is built from (_config.yml)")
    for name in colab_pinned_names():
        assert pinned(name) in args, f"{rel(path)}: install {pinned(name)} as requirements.txt pins it"


def book_branch():
    import yaml
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["branch"]


def package_requirements():
    """rbdlearn's dependencies as pyproject.toml states them (packaging Requirements)."""
    import tomllib

    from packaging.requirements import Requirement
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(r) for r in project["dependencies"]]


def colab_pinned_names():
    """What the Colab cell pins: every dependency of rbdlearn (Colab has other versions
    of some preinstalled), and the book's reference and robots."""
    return [r.name for r in package_requirements()] + ["pin", "example-robot-data"]


def test_colab_install_resolves_against_the_pins():
    """The Colab cell's set — rbdlearn's dependencies and Pinocchio's, pinned as in
    requirements.txt — is consistent: every requirement of rbdlearn (pyproject.toml), and
    every requirement of every package reached from them (read from the installed
    packages' metadata, which `make` installs from requirements.txt), is met by the
    version requirements.txt pins, and every package reached is pinned there."""
    from importlib.metadata import distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    pins = {canonicalize_name(name): Version(line.split("==")[1].strip())
            for name, line in pin_lines().items()}
    todo = package_requirements() + [Requirement(pinned(n)) for n in ("pin", "example-robot-data")]
    seen, problems = set(), []
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{req} is not pinned in requirements.txt")
            continue
        if not req.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{req}: requirements.txt pins {name}=={pins[name]}")
        if name not in seen:
            seen.add(name)
            todo += [Requirement(r) for r in distribution(name).requires or []]
    assert len(seen) > 10 and not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------
# Shown code fits the page: the lines of every code cell the HTML shows (all but
# `remove-cell` / `remove-input`; `hide-input` / `hide-cell` cells count, a reader opens
# them) and of every code block in a Markdown cell are at most 88 characters long.
# --------------------------------------------------------------------------------------

MAX_CODE_LINE = 88
HIDDEN_SOURCE_TAGS = {"remove-cell", "remove-input"}
# directives whose body is not Markdown (it is not searched for code blocks)
RAW_DIRECTIVES = {"math", "raw", "bibliography"}
CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "code-cell"}


def markdown_code_blocks(text):
    """The code blocks of MyST Markdown ``text`` (fenced, indented, and those inside
    directives such as ``{admonition}``), as lists of lines."""
    from markdown_it import MarkdownIt

    blocks = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "code_block":
            blocks.append(token.content.splitlines())
        elif token.type == "fence":
            info = token.info.strip()
            name = info[1:info.find("}")] if info.startswith("{") else None
            lines = token.content.splitlines()
            if name is None or name in CODE_DIRECTIVES:
                blocks.append([l for l in lines if not l.startswith(":")]
                              if name else lines)
            elif name not in RAW_DIRECTIVES:       # admonition, note, …: Markdown inside
                body = [l for l in lines if not re.match(r"^:[\w-]+:", l)]
                blocks.extend(markdown_code_blocks("\n".join(body)))
    return blocks


def shown_code_lines(nb):
    """(cell index, line number from 1, line) of every code line a reader sees."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            if HIDDEN_SOURCE_TAGS & set(cell.metadata.get("tags", [])):
                continue
            lines = cell.source.splitlines()
            for number, line in enumerate(lines, 1):
                yield index, number, line
        elif cell.cell_type == "markdown":
            first = 1
            for block in markdown_code_blocks(cell.source):
                for number, line in enumerate(block, first):
                    yield index, number, line
                first += len(block)


def test_markdown_code_blocks_are_found():
    # Guards the test below: fenced, indented and nested blocks are all read.
    text = ("Text\n\n```python\nx = 1\n```\n\n````{admonition} Solution\n:class: dropdown\n"
            "```python\ny = 2\n```\n\n    z = 3\n````\n\n```{math}\n    not code\n```\n")
    assert markdown_code_blocks(text) == [["x = 1"], ["y = 2"], ["z = 3"]]


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_shown_code_lines_fit_the_page(path):
    nb = nbformat.read(path, as_version=4)
    long = [f"cell {index} line {number} ({len(line)} characters): {line.strip()[:60]!r}"
            for index, number, line in shown_code_lines(nb) if len(line) > MAX_CODE_LINE]
    assert not long, (
        f"{rel(path)}: {len(long)} shown code line(s) longer than {MAX_CODE_LINE} "
        "characters (break them; the HTML would scroll):\n  " + "\n  ".join(long))


# --------------------------------------------------------------------------------------
# Exercises: each solution is one toggle, a `dropdown` admonition. The code cell after
# it runs the solution through the exercise's checker and is removed from the page
# (`remove-cell`): a cell with both `hide-input` and `hide-output` would add two more
# toggles. The code a solution shows is the code that cell checks.
# --------------------------------------------------------------------------------------

def solutions(nb):
    """(index of the solution's Markdown cell, that cell, the code cell after it)."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and "{admonition} Solution" in (
                cell.source.split("\n", 1)[0]):
            yield index, cell, nb.cells[index + 1]


def code_lines(lines):
    """Code lines without comments, blank lines, indentation and a leading `assert `."""
    out = []
    for line in lines:
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line.removeprefix("assert "))
    return out


def test_solutions_are_found():
    # Guards the tests below against passing vacuously.
    found = sum(1 for path in book_notebooks()
                for _ in solutions(nbformat.read(path, as_version=4)))
    assert found >= 30, f"only {found} solutions found"


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_one_toggle_per_solution(path):
    nb = nbformat.read(path, as_version=4)
    problems = [f"cell {index}: tagged both hide-input and hide-output (use hide-cell)"
                for index, cell in enumerate(nb.cells)
                if {"hide-input", "hide-output"} <= set(cell.metadata.get("tags", []))]
    for index, cell, check in solutions(nb):
        if ":class: dropdown" not in cell.source:
            problems.append(f"cell {index}: the solution is not a dropdown")
        if check.cell_type != "code" or "remove-cell" not in check.metadata.get("tags", []):
            problems.append(f"cell {index + 1}: the check after the solution in cell "
                            f"{index} is not a code cell tagged remove-cell")
    assert not problems, f"{rel(path)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_solution_code_is_checked(path):
    nb = nbformat.read(path, as_version=4)
    problems = []
    for index, cell, check in solutions(nb):
        checked = set(code_lines(check.source.splitlines()))
        for block in markdown_code_blocks(cell.source):
            missing = [line for line in code_lines(block) if line not in checked]
            if missing:
                problems.append(f"cell {index}: {missing[0]!r} is not in the check "
                                f"(cell {index + 1})")
    assert not problems, f"{rel(path)}:\n  " + "\n  ".join(problems)


# The index (genindex.html) lists the key terms of every chapter: MyST {index} roles.
@pytest.mark.parametrize("chapter", sorted(p.name for p in BOOK.glob("ch*") if p.is_dir()))
def test_every_chapter_has_index_entries(chapter):
    text = "".join(p.read_text(encoding="utf-8") for p in (BOOK / chapter).iterdir()
                   if p.suffix in PAGE_SUFFIXES)
    entries = re.findall(r"\{index\}`", text)
    assert len(entries) >= 5, f"{chapter}: {len(entries)} index entries"


# --------------------------------------------------------------------------------------
# Test cells, checkers and solutions out of the reading flow, in the book and in
# JupyterLab alike. A code cell with an `assert` outside a function (a test cell) is
# tagged so the HTML removes or folds it (`remove-cell`, as in every chapter, or
# `hide-input`). JupyterLab does not read those tags: it collapses a cell whose metadata
# says `"jupyter": {"source_hidden": true}` (the reader sees a bar, a click opens it).
# That is set on every test cell, every cell whose source the book removes (the exercise
# checkers, whose code holds the answers, the solutions' checks, the Colab cell) and every
# solution; cells the book shows stay open. Outputs stay visible: a failing check shows.
# --------------------------------------------------------------------------------------

HIDDEN_IN_BOOK_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def top_level_asserts(source):
    """The number of `assert` statements of a code cell outside function and class
    bodies (IPython's `%` and `!` lines are skipped)."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())
    count, todo = 0, [ast.parse(code)]
    while todo:
        node = todo.pop()
        count += isinstance(node, ast.Assert)
        todo.extend(child for child in ast.iter_child_nodes(node)
                    if not isinstance(child, SCOPES))
    return count


def is_test_cell(cell):
    return cell.cell_type == "code" and top_level_asserts(cell.source) > 0


def source_removed(cell):
    return cell.cell_type == "code" and bool(
        {"remove-cell", "remove-input"} & set(cell.metadata.get("tags", [])))


def is_solution(cell):
    return cell.cell_type == "markdown" and "{admonition} Solution" in (
        cell.source.split("\n", 1)[0])


def collapsed_in_jupyterlab(cell):
    return cell.metadata.get("jupyter", {}).get("source_hidden") is True


def test_top_level_asserts_are_counted():
    # Guards the tests below: loops and branches count, function bodies do not.
    assert top_level_asserts("assert x\nfor k in y:\n    if k:\n        assert k\n") == 2
    assert top_level_asserts("def f(x):\n    assert x\n    return x\n\ny = f(1)\n") == 0
    assert top_level_asserts("%time assert x\nprint(1)\n") == 0
    assert top_level_asserts("class A:\n    assert True\n") == 0


def test_test_cells_are_found():
    # Guards the tests below against passing vacuously.
    found = sum(is_test_cell(cell) for path in book_notebooks()
                for cell in nbformat.read(path, as_version=4).cells)
    assert found >= 250, f"only {found} test cells found"


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_test_cells_are_out_of_the_reading_flow(path):
    nb = nbformat.read(path, as_version=4)
    shown = [f"cell {index} ({top_level_asserts(cell.source)} asserts): "
             f"{cell.source.splitlines()[0][:50]!r}"
             for index, cell in enumerate(nb.cells)
             if is_test_cell(cell)
             and not HIDDEN_IN_BOOK_TAGS & set(cell.metadata.get("tags", []))]
    assert not shown, (
        f"{rel(path)}: test cells in the reading flow (move the asserts into a cell "
        "tagged remove-cell):\n  " + "\n  ".join(shown))


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_what_the_book_hides_is_collapsed_in_jupyterlab(path):
    nb = nbformat.read(path, as_version=4)
    problems = []
    for index, cell in enumerate(nb.cells):
        first = cell.source.splitlines()[0][:50] if cell.source else ""
        hide = is_test_cell(cell) or source_removed(cell) or is_solution(cell)
        if hide and not collapsed_in_jupyterlab(cell):
            problems.append(f"cell {index} ({first!r}): not collapsed in JupyterLab "
                            '(metadata "jupyter": {"source_hidden": true})')
        shown = not (HIDDEN_IN_BOOK_TAGS & set(cell.metadata.get("tags", [])))
        if collapsed_in_jupyterlab(cell) and shown and not hide:
            problems.append(f"cell {index} ({first!r}): the book shows it, JupyterLab "
                            "collapses it")
        if cell.metadata.get("jupyter", {}).get("outputs_hidden") and is_test_cell(cell):
            problems.append(f"cell {index} ({first!r}): a test cell's outputs hidden "
                            "(a failing check would not show)")
    assert not problems, f"{rel(path)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_collapsed_checks_do_not_show_the_answer(path):
    # A collapsed cell still shows its first line in JupyterLab: a solution's check
    # (`assert check_ex1(<the answer>)`) starts with a comment line instead.
    nb = nbformat.read(path, as_version=4)
    shown = [f"cell {index + 1}: {check.source.splitlines()[0][:60]!r}"
             for index, _, check in solutions(nb)
             if not check.source.lstrip().startswith("#")]
    assert not shown, (f"{rel(path)}: the first line of a solution's check is not a "
                       "comment:\n  " + "\n  ".join(shown))


# --------------------------------------------------------------------------------------
# Code that reads well, and figures with captions. A code cell the HTML shows in full
# (not removed, not folded by `hide-input` / `hide-cell`) is at most MAX_SHOWN_CELL lines
# long, so that a reader can take it in at once; a cell whose lines are mostly plotting
# calls (matplotlib set-up and styling) is folded. A cell that draws a figure carries
# myst-nb's figure metadata ("mystnb": {"figure": {"caption", "name"}, "image": {"alt"}}):
# the book numbers the figure, shows the caption under it, and gives the image its alt
# text, which describes what is drawn (not a file name). myst-nb wraps every display
# output of such a cell in the figure, so it displays one image and nothing else
# (a table it also shows goes into a cell of its own).
# --------------------------------------------------------------------------------------

MAX_SHOWN_CELL = 30
# Shown cells allowed to be longer, with the reason (notebook, first line of the cell).
LONG_CELLS_ALLOWED: dict = {}
# Shown cells still to be split (issue 28): derivations and set-ups with no blank line
# between top-level statements to split them at (31 to 72 lines), left for a pass by hand. The list may only
# shrink: test_long_cells_to_split_are_still_there fails on an entry that is gone.
LONG_CELLS_TO_SPLIT = {
    ('book/appendix/validation.ipynb',
     'def rel_err(actual, expected):'),
    ('book/ch2_aba/01_propagation.ipynb',
     't = sp.symbols("t", real=True)'),
    ('book/ch2_aba/02_aba_theorem.ipynb',
     'tree = rbd.random_tree(4, seed=11, joint_types=("revolute", "spherical", "prismatic"),'),
    ('book/ch2_aba/04_joints.ipynb',
     'w, x, y, z = sp.symbols("w x y z", real=True)'),
    ('book/ch3_crb/01_inertia_matrix.ipynb',
     'def composites_by_recursion(model, q, child_sign=-1):'),
    ('book/ch4_constrained/01_extended_newton_euler.ipynb',
     'def Rz(angle):'),
    ('book/ch5_closed/05_swing.ipynb',
     'tau_springs, spring_energy = cc.figure_springs(figure, sw.q, k_arm=120.0, k_leg=80.0)'),
}
FOLDED_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
# A line is a plotting call if it calls a matplotlib object: plt, a figure, an axes
# (ax, ax1, bx, axes[0], …) or one of the book's drawing helpers (viz.draw_*).
PLOT_CALL = re.compile(
    r"^\s*(plt\.|fig\w*\s*[,=.]|(ax|bx|ay|az|ad|ac|af|hz)(_\w+|\d)?\s*[.,\[]"
    r"|axes\b|viz\.draw_|for (ax|a|bx)\w* in )")


def shown_in_full(cell):
    return cell.cell_type == "code" and not FOLDED_TAGS & set(cell.metadata.get("tags", []))


def statements_lines(source):
    """The code lines of ``source``: no blank lines, no comment lines; a statement that
    runs over several lines counts with its first line only."""
    lines, depth = [], 0
    for line in source.splitlines():
        stripped = line.strip()
        if depth == 0 and stripped and not stripped.startswith("#"):
            lines.append(line)
        code = re.sub(r"#.*$", "", re.sub(r"(\"[^\"]*\"|'[^']*')", "", line))
        depth = max(0, depth + sum(code.count(c) for c in "([{")
                    - sum(code.count(c) for c in ")]}"))
    return lines


def plotting_share(source):
    """The share of ``source``'s statements that are plotting calls (0 without code)."""
    lines = statements_lines(source)
    return sum(bool(PLOT_CALL.match(l)) for l in lines) / len(lines) if lines else 0.0


def test_plotting_lines_are_recognised():
    # Guards the tests below: the pattern finds plotting statements, not computations.
    plot = ("fig, ax = plt.subplots(figsize=(4, 3))\nax.plot(t, y,\n        lw=2)\n"
            "axes[0].set(xlabel='t')\nviz.draw_planar_chain(ax, m, q)\nplt.show()\n")
    assert statements_lines(plot)[1] == "ax.plot(t, y,"
    assert plotting_share(plot) == 1.0
    compute = "run = simulate(model, q0, qd0)\nE = energy(run)\n# ax.plot\naxis = 2\n"
    assert plotting_share(compute) == 0.0
    assert plotting_share(plot + compute) == 5 / 8


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_shown_code_cells_are_short(path):
    nb = nbformat.read(path, as_version=4)
    long = []
    for index, cell in enumerate(nb.cells):
        first = cell.source.splitlines()[0] if cell.source else ""
        n = len(cell.source.splitlines())
        if shown_in_full(cell) and n > MAX_SHOWN_CELL and (
                (rel(path), first) not in set(LONG_CELLS_ALLOWED) | LONG_CELLS_TO_SPLIT):
            long.append(f"cell {index} ({n} lines): {first[:60]!r}")
    assert not long, (f"{rel(path)}: shown code cells longer than {MAX_SHOWN_CELL} lines "
                      "(split them, or fold their plotting part):\n  " + "\n  ".join(long))


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_plotting_cells_are_folded(path):
    nb = nbformat.read(path, as_version=4)
    shown = [f"cell {index} ({plotting_share(cell.source):.0%} plotting): "
             f"{cell.source.splitlines()[0][:60]!r}"
             for index, cell in enumerate(nb.cells)
             if shown_in_full(cell) and plotting_share(cell.source) > 0.5]
    assert not shown, (f"{rel(path)}: cells of mostly plotting code shown in full (tag "
                       "them hide-input):\n  " + "\n  ".join(shown))


def figure_metadata(cell):
    mystnb = cell.metadata.get("mystnb", {})
    return mystnb.get("figure"), mystnb.get("image", {}).get("alt")


def draws_a_figure(cell):
    """A code cell that shows a matplotlib figure (the image output of the book)."""
    return cell.cell_type == "code" and bool(
        re.search(r"^\s*plt\.show\(\)|^\s*(plt|fig\w*)\.show\(\)", cell.source, re.M)
        or re.search(r"^(strobe|\w+ = strobe)\(", cell.source, re.M))


FILE_NAME = re.compile(r"\.(png|jpe?g|svg|gif)\b|_images|^\S+$", re.I)


def test_figure_captions_are_found():
    # Guards the tests below against passing vacuously.
    found = sum(bool(figure_metadata(cell)[0]) for path in book_notebooks()
                for cell in nbformat.read(path, as_version=4).cells)
    assert found >= 60, f"only {found} cells with figure metadata"
    assert FILE_NAME.search("ch1_spatial/01_spatial_vectors_21_0.png")
    assert not FILE_NAME.search("A line plot of E against t, rising from 0 to 1 J.")


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_figures_have_caption_name_and_alt_text(path):
    nb = nbformat.read(path, as_version=4)
    problems = []
    for index, cell in enumerate(nb.cells):
        figure, alt = figure_metadata(cell)
        where = f"cell {index} ({cell.source.splitlines()[0][:40]!r})" if cell.source else (
            f"cell {index}")
        if cell.cell_type != "code" or not (figure or alt or draws_a_figure(cell)):
            continue
        figure = figure or {}
        if not str(figure.get("caption", "")).strip():
            problems.append(f"{where}: no figure caption")
        if not re.fullmatch(r"fig-[a-z0-9-]+", str(figure.get("name", ""))):
            problems.append(f"{where}: no figure name of the form fig-…")
        if not alt or len(alt.split()) < 8 or FILE_NAME.search(alt.strip()):
            problems.append(f"{where}: the alt text must describe the figure: {alt!r}")
    assert not problems, f"{rel(path)}:\n  " + "\n  ".join(problems)


def test_figure_names_and_alt_texts_are_distinct():
    names, alts = [], []
    for path in book_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            figure, alt = figure_metadata(cell)
            if figure:
                names.append(figure.get("name"))
                alts.append(alt)
    twice = [x for x in set(names + alts) if names.count(x) + alts.count(x) > 1]
    assert not twice, f"figure names or alt texts used twice: {twice}"


def test_long_cells_to_split_are_still_there():
    shown_long = {(rel(path), cell.source.splitlines()[0])
                  for path in book_notebooks()
                  for cell in nbformat.read(path, as_version=4).cells
                  if shown_in_full(cell) and len(cell.source.splitlines()) > MAX_SHOWN_CELL}
    gone = LONG_CELLS_TO_SPLIT - shown_long
    assert not gone, f"split or shortened, remove from LONG_CELLS_TO_SPLIT: {sorted(gone)}"


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_folded_code_is_collapsed_in_jupyterlab(path):
    # What the book folds behind "Show code" (hide-input), JupyterLab collapses too.
    nb = nbformat.read(path, as_version=4)
    open_ = [f"cell {index}: {cell.source.splitlines()[0][:60]!r}"
             for index, cell in enumerate(nb.cells)
             if cell.cell_type == "code" and "hide-input" in cell.metadata.get("tags", [])
             and not collapsed_in_jupyterlab(cell)]
    assert not open_, (f"{rel(path)}: hide-input cells open in JupyterLab (set metadata "
                       '"jupyter": {"source_hidden": true}):\n  ' + "\n  ".join(open_))
