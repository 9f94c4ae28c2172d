"""Install the book's web assets into node_modules/: each package that package.json names,
exactly as package-lock.json pins it (version and sha512 integrity), without the packages
it depends on.

The book serves only files these packages ship ready-built: MathJax 4 and its font, the
widget manager's bundle (embed.js, which has its dependencies inside) and the Noto Sans JP
slices; three.js (its ES modules, which `make viewer` bundles into the 3-D viewer) needs
nothing else either. esbuild (the bundler) keeps its program in one package per platform,
named among its optional dependencies (`@esbuild/linux-x64`, ...): the one whose `os` and
`cpu` in package-lock.json match this machine is installed too, checked like the others.

`npm ci` would also install the 130 packages that the widget manager's sources import
(15,400 files, 280 MB): 23 s of CPU on a two-core machine, against 7 s for the four
tarballs here. npm still fetches them (`npm pack`, through its cache and
the configured registry); this script checks each against the lock file and unpacks it.

    python _ext/web_assets.py [--npm NPM] [--root ROOT]
    python _ext/web_assets.py --viewer rbdlearn/viz/rbd3d.js    # make viewer

The second form bundles the book's 3-D viewer (viewer/rbd3d.js with three.js from
node_modules/) into one minified ES module with the installed esbuild: the committed
rbdlearn/viz/rbd3d.js, which tests/test_web_assets.py compares with a fresh bundle.
"""

import argparse
import base64
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]


def pinned(root=ROOT):
    """{name: (version, integrity)} for each dependency of package.json, from the lock."""
    wanted = json.loads((root / "package.json").read_text(encoding="utf-8"))["dependencies"]
    locked = json.loads((root / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    found = {}
    for name, version in wanted.items():
        entry = locked.get(f"node_modules/{name}", {})
        if entry.get("version") != version or not entry.get("integrity", "").startswith(
                "sha512-"):
            sys.exit(f"package-lock.json does not pin {name} {version} with a sha512 "
                     f"integrity (found {entry or 'nothing'}): run `npm install`")
        found[name] = (version, entry["integrity"])
        found.update(platform_package(name, entry, locked))
    return found


# Python's names of this machine's system and processor -> Node's (process.platform,
# process.arch), which npm packages name in their "os" and "cpu" lists.
NODE_OS = {"linux": "linux", "darwin": "darwin", "win32": "win32", "freebsd": "freebsd",
           "openbsd": "openbsd", "netbsd": "netbsd", "sunos": "sunos", "aix": "aix"}
NODE_CPU = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64",
            "i386": "ia32", "i686": "ia32", "armv7l": "arm", "ppc64le": "ppc64",
            "s390x": "s390x", "riscv64": "riscv64", "loongarch64": "loong64"}


def node_platform():
    """(os, cpu) of this machine as Node names them, e.g. ("linux", "x64")."""
    system = next((v for k, v in NODE_OS.items() if sys.platform.startswith(k)), sys.platform)
    return system, NODE_CPU.get(platform.machine().lower(), platform.machine().lower())


def platform_package(name, entry, locked, machine=None):
    """{name: (version, integrity)} of the optional dependency of ``name`` built for this
    machine, for a package (esbuild) whose optional dependencies are one per platform; {}
    for a package without such dependencies."""
    per_platform = {dep: locked.get(f"node_modules/{dep}", {})
                    for dep in entry.get("optionalDependencies", {})}
    per_platform = {dep: e for dep, e in per_platform.items() if "os" in e and "cpu" in e}
    if not per_platform:
        return {}
    system, cpu = machine or node_platform()
    match = [dep for dep, e in per_platform.items() if system in e["os"] and cpu in e["cpu"]]
    if not match:
        sys.exit(f"{name}: package-lock.json pins no build for this machine ({system}-{cpu}; "
                 f"builds: {', '.join(sorted(per_platform))})")
    dep = match[0]
    return {dep: (per_platform[dep]["version"], per_platform[dep]["integrity"])}


def sha512(path):
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def unpack(tarball, target):
    """The tarball's files and folders into ``target`` (npm packs them under one top folder,
    dropped); anything else (a link, a path leaving the folder) is refused."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        members = []
        for member in tar.getmembers():
            rest = PurePosixPath(member.name.partition("/")[2])
            if not (member.isfile() or member.isdir()) or rest.is_absolute() or \
                    ".." in rest.parts:
                sys.exit(f"{tarball.name}: refusing {member.name!r} (not a plain file or "
                         f"folder inside the package)")
            if rest.parts:
                member.name = str(rest)
                members.append(member)
        # the "data" filter also drops modes and owners where this Python has it (3.11.4+)
        tar.extractall(target, members=members,
                       **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))


def install(npm="npm", root=ROOT):
    packages = pinned(root)
    with tempfile.TemporaryDirectory() as tmp:
        specs = [f"{name}@{version}" for name, (version, _) in packages.items()]
        out = subprocess.run([npm, "pack", "--json", "--ignore-scripts", "--pack-destination",
                              tmp, *specs], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"npm pack {' '.join(specs)} failed:\n{out.stderr}")
        for packed in json.loads(out.stdout):
            version, integrity = packages.pop(packed["name"])
            tarball = Path(tmp) / packed["filename"]
            if packed["version"] != version or sha512(tarball) != integrity:
                sys.exit(f"{packed['name']}: npm gave version {packed['version']}, "
                         f"{sha512(tarball)}; package-lock.json pins {version}, {integrity}")
            unpack(tarball, root / "node_modules" / packed["name"])
    if packages:
        sys.exit(f"npm pack returned no tarball for {sorted(packages)}")
    print(f"{len(specs)} packages of package.json (and esbuild's build for this machine) in "
          f"node_modules/, checked against package-lock.json")


VIEWER = "viewer/rbd3d.js"
ESBUILD_FLAGS = ["--bundle", "--format=esm", "--minify", "--legal-comments=inline",
                 "--charset=utf8", "--log-level=warning"]


def esbuild(root=ROOT):
    """The esbuild program of this machine's build in node_modules/ (make offline)."""
    return root / "node_modules" / "@esbuild" / "-".join(node_platform()) / "bin" / "esbuild"


def bundle_viewer(out, root=ROOT):
    """viewer/rbd3d.js and three.js, bundled and minified into the file ``out`` (three's
    license comment kept); exits with esbuild's message if it fails."""
    program = esbuild(root)
    if not program.is_file():
        sys.exit(f"{program} is missing: install the web assets first (make offline)")
    done = subprocess.run([str(program), VIEWER, *ESBUILD_FLAGS,
                           f"--outfile={Path(out).resolve()}"],
                          cwd=root, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"esbuild {VIEWER} failed:\n{done.stderr}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npm", default="npm")
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--viewer", type=Path, metavar="OUT",
                        help="bundle the 3-D viewer into OUT instead of installing")
    args = parser.parse_args()
    if args.viewer:
        bundle_viewer(args.viewer, args.root)
    else:
        install(args.npm, args.root)
