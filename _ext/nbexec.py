"""Execute each of the book's notebooks once; the checks and the book share that execution.

`make test` runs every notebook as a pytest item (conftest.py), `make book` runs the ones
not yet executed (``python _ext/nbexec.py``), and the book build (this module is also a
Sphinx extension, ``local_extensions`` in _config.yml) reads their outputs from the same
cache instead of executing the notebooks a second time.

The cache is jupyter-cache's, the one myst-nb's ``execute_notebooks: cache`` mode reads,
in ``_build/.jupyter_cache/<fingerprint>/``:
- jupyter-cache keys a notebook by its code cells (with their metadata) and its kernel, so
  a changed notebook misses the cache and runs again;
- the fingerprint hashes what every notebook depends on besides itself: the package's files
  (``rbdlearn/``, data included), requirements.txt and pyproject.toml. A change there moves
  the build to a new cache folder, so every notebook runs again, and, since the folder is a
  Sphinx configuration value (``nb_execution_cache_path``), Sphinx re-reads every page:
  the HTML always shows what today's code computes.

A notebook runs in a new temporary directory outside the repository (the kernel finds only
the installed rbdlearn, as on Colab), with every cell executed even after one fails
(nbval's ``--nbval-lax``: every cell must run; the checks are ``assert`` cells); a failure
names the notebook and each failing cell. Only notebooks that ran without error are cached.
Kernels talk over local IPC sockets, not TCP (ipykernel warns about unencrypted TCP at
every start), and their own log goes to a file that a failure report quotes.
"""

import argparse
import fcntl
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
CELL_TIMEOUT = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))[
    "execute"]["timeout"]                # seconds per cell
# What every notebook depends on besides its own cells (see the module docstring).
DEPENDENCIES = ("rbdlearn", "requirements.txt", "pyproject.toml")
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def fingerprint(root=ROOT):
    """A hash of the package's files, requirements.txt and pyproject.toml under ``root``."""
    digest = hashlib.sha256()
    for name in DEPENDENCIES:
        top = root / name
        files = sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else [top]
        for path in files:
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_dir(root=ROOT):
    return root / "_build" / ".jupyter_cache" / fingerprint(root)


def toc_entries(root=ROOT):
    """Every `root` / `file` entry of _toc.yml, in its order, as written (no suffix)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    found = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    return found


def toc_tree(root=ROOT):
    """_toc.yml as [(part caption or None, [(chapter, [section, ...]), ...]), ...], the
    root page first as a part of its own (caption None, no sections)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    tree = [(None, [(toc["root"], [])])]
    for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
        tree.append((part.get("caption"), [
            (ch["file"], [s["file"] for s in ch.get("sections", [])])
            for ch in part["chapters"]]))
    return tree


def toc_notebooks(root=ROOT):
    """The notebooks of _toc.yml, in its order."""
    return [root / f"{e}.ipynb" for e in toc_entries(root) if (root / f"{e}.ipynb").is_file()]


@dataclass
class CellFailure:
    index: int            # position in the notebook's cells (0-based, markdown included)
    source: str
    error: str            # "AssertionError: …" and the traceback, without colour codes

    def __str__(self):
        lines = self.source.splitlines() or [""]
        shown = "\n".join(f"    {line}" for line in lines[:8])
        more = f"\n    … ({len(lines) - 8} more lines)" if len(lines) > 8 else ""
        return f"cell {self.index}:\n{shown}{more}\n  {self.error}"


@dataclass
class Execution:
    path: Path
    notebook: nbformat.NotebookNode     # with outputs
    failures: list
    seconds: float
    kernel_log: str

    def report(self, root=ROOT):
        where = self.path.relative_to(root) if self.path.is_relative_to(root) else self.path
        text = f"{where}: {len(self.failures)} failing cell(s)\n\n"
        text += "\n\n".join(str(f) for f in self.failures)
        if self.kernel_log.strip():
            text += "\n\nkernel log:\n" + self.kernel_log.strip()[-3000:]
        return text


def _error_output(cell):
    for out in cell.get("outputs", []):
        if out.output_type == "error":
            tb = ANSI_ESCAPE.sub("", "\n".join(out.traceback))
            return f"{out.ename}: {out.evalue}\n{tb}".strip()
    return None


def execute(path, timeout=CELL_TIMEOUT):
    """Run every cell of the notebook at ``path`` in a fresh kernel, from a new temporary
    directory; returns an Execution listing the cells that raised (those tagged
    ``raises-exception`` may raise), timed out, or lost their kernel."""
    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    failures, current = [], {"index": None}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rbdlearn-nb-") as cwd:
        config = Config()
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = os.path.join(cwd, ".kernel")    # the IPC socket files
        client = NotebookClient(
            nb, timeout=timeout, allow_errors=True, config=config,
            record_timing=False,     # timestamps in cell metadata would change the cache key
            kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
            on_cell_start=lambda cell, cell_index: current.update(index=cell_index))
        log_path = Path(cwd) / ".kernel.log"
        with open(log_path, "w") as log:
            try:
                # RBDLEARN_STATIC_WIDGETS: an explorer shows its kernel-free form, whose
                # stored state the book's pages use (rbdlearn/widgets/core.py)
                client.execute(cwd=cwd, stdout=log, stderr=log,
                               env={**os.environ, "RBDLEARN_STATIC_WIDGETS": "1"})
            except (CellTimeoutError, DeadKernelError) as err:
                i = current["index"]
                failures.append(CellFailure(i, nb.cells[i].source,
                                            f"{type(err).__name__}: {str(err)[:500]}"))
        kernel_log = log_path.read_text(errors="replace")
    seconds = time.perf_counter() - start
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
            continue
        error = _error_output(cell)
        if error and not any(f.index == i for f in failures):
            failures.append(CellFailure(i, cell.source, error))
    failures.sort(key=lambda f: f.index)
    return Execution(path, nb, failures, seconds, kernel_log)


class _Locked:
    """An exclusive lock on the cache folder: pytest-xdist workers and `make` may write at once."""

    def __init__(self, folder):
        folder.mkdir(parents=True, exist_ok=True)
        self.file = open(folder / ".lock", "w")

    def __enter__(self):
        fcntl.flock(self.file, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        fcntl.flock(self.file, fcntl.LOCK_UN)
        self.file.close()


def is_cached(path, folder):
    """Whether the notebook at ``path`` has a clean execution in the cache ``folder``."""
    return folder.is_dir() and _in_cache(nbformat.read(path, as_version=4), folder)


def _in_cache(nb, folder):
    """Whether the notebook ``nb`` (its code cells) is in the existing cache ``folder``."""
    with _Locked(folder):
        try:
            get_cache(folder).match_cache_notebook(nb)
        except KeyError:
            return False
    return True


def store(execution, folder):
    """Cache a notebook that ran without failures (run_and_cache calls this) in ``folder``,
    the cache_dir() computed before it ran, and drop the folders of other fingerprints:
    outputs of a package that no longer exists."""
    with _Locked(folder):
        for other in folder.parent.iterdir():
            if other.is_dir() and other != folder:
                shutil.rmtree(other, ignore_errors=True)
        get_cache(folder).cache_notebook_bundle(
            CacheBundleIn(execution.notebook, str(execution.path),
                          data={"execution_seconds": execution.seconds}),
            check_validity=False, overwrite=True)


def wait_until_cached(stop, poll=2.0, root=ROOT):
    """Wait until every notebook of _toc.yml has a clean execution in the cache of the
    current sources (returns the list of them, empty), or until the file ``stop`` exists
    (returns the notebooks still missing, after a last look). `make test` starts the book
    build this way while its first step still runs the unit tests: the build reads every
    notebook from the cache, and the notebooks are executed first (conftest.py)."""
    folder = cache_dir(root)
    missing = {path: nbformat.read(path, as_version=4) for path in toc_notebooks(root)}
    while missing:
        stopped = stop.exists()        # looked at first: after the stop, one more look
        if folder.is_dir():
            missing = {path: nb for path, nb in missing.items() if not _in_cache(nb, folder)}
        if stopped or not missing:
            break
        time.sleep(poll)
    return list(missing)


def run_and_cache(path, folder):
    """Execute one notebook and cache it in ``folder`` if it ran cleanly."""
    execution = execute(path)
    if not execution.failures:
        store(execution, folder)
    return execution


# ------------------------------------------------------------------ Sphinx extension

def use_fingerprinted_cache(app, config):
    """Point myst-nb's cache at this fingerprint's folder (see the module docstring)."""
    config.nb_execution_cache_path = str(cache_dir(Path(app.confdir)))


def setup(app):
    app.connect("config-inited", use_fingerprinted_cache)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# ------------------------------------------------------------------ command line

def main(argv=None):
    parser = argparse.ArgumentParser(description="Execute the book's notebooks that are not "
                                     "cached for the current sources; report failing cells.")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="notebooks run at once")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: all of _toc.yml")
    parser.add_argument("--wait-until-cached", metavar="STOP", type=Path,
                        help="execute nothing: wait until every notebook is cached, or "
                             "until the file STOP exists (exit status 1 then)")
    args = parser.parse_args(argv)
    if args.wait_until_cached:
        start = time.perf_counter()
        missing = wait_until_cached(args.wait_until_cached)
        print(f"notebooks: {'all cached' if not missing else f'{len(missing)} not cached'} "
              f"after {time.perf_counter() - start:.0f} s"
              + "".join(f"\n  {p.relative_to(ROOT)}" for p in missing), flush=True)
        return 1 if missing else 0
    paths = [p.resolve() for p in args.notebooks] or toc_notebooks()
    folder = cache_dir()
    stale = [p for p in paths if not is_cached(p, folder)]
    print(f"notebooks: {len(paths) - len(stale)} cached for sources {folder.name}, "
          f"{len(stale)} to execute", flush=True)
    failed = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for execution in pool.map(run_and_cache, stale, [folder] * len(stale)):
            name = execution.path.relative_to(ROOT)
            status = "ok" if not execution.failures else "FAILED"
            print(f"  {name}: {status} ({execution.seconds:.0f} s)", flush=True)
            if execution.failures:
                failed.append(execution)
    for execution in failed:
        print("\n" + execution.report(), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
